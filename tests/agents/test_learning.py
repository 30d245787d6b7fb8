"""PPO, A2C and GA3C learn gymnax's CartPole-v1: on 3 seeds (trained in
one vmapped program per algorithm) the mean episode return over the last
10% of updates is at least 400 (500 is the cap), where a uniform-random
policy scores about 22.

GA3C runs with its default policy lag of 1 update, so this also shows that
the lagged, V-trace-corrected learner learns.
"""
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari.agents import a2c, ga3c, ppo

pytestmark = pytest.mark.slow

SEEDS = 3
THRESHOLD = 400.0

CONFIGS = {
    "ppo": (ppo, ppo.PPOConfig(num_envs=4, num_steps=128,
                               total_steps=500_000, clip_eps=0.2,
                               life_loss_terminal=False)),
    "a2c": (a2c, a2c.A2CConfig(num_envs=8, num_steps=5, total_steps=500_000,
                               ent_coef=0.0)),
    "ga3c": (ga3c, ga3c.GA3CConfig(num_envs=8, num_steps=5,
                                   total_steps=1_000_000, ent_coef=0.0)),
}


@pytest.fixture(scope="module")
def cartpole():
    return gymnax.make("CartPole-v1")


def final_returns(metrics):
    """Per seed: the nanmean of the episode returns over the last 10% of
    updates."""
    returns = np.asarray(metrics["episode_return"])   # [seeds, updates]
    tail = max(returns.shape[1] // 10, 1)
    return np.nanmean(returns[:, -tail:], axis=1)


@pytest.fixture(scope="module")
def random_return(cartpole):
    """A uniform-random policy's mean CartPole return (~22), from a jitted
    rollout of 64 envs written against gymnax alone."""
    env, params = cartpole
    num_envs, steps = 64, 1000

    @jax.jit
    def run(key):
        key, reset_key = jax.random.split(key)
        obs, state = jax.vmap(env.reset, in_axes=(0, None))(
            jax.random.split(reset_key, num_envs), params)

        def step(carry, key):
            state, ep_return, total, count = carry
            act_key, step_key = jax.random.split(key)
            actions = jax.random.randint(act_key, (num_envs,), 0, 2)
            _, state, reward, terminated, truncated, _ = jax.vmap(
                env.step, in_axes=(0, 0, 0, None))(
                jax.random.split(step_key, num_envs), state, actions,
                params)
            done = terminated | truncated
            ep_return = ep_return + reward
            total = total + jnp.sum(jnp.where(done, ep_return, 0.0))
            count = count + jnp.sum(done)
            return (state, jnp.where(done, 0.0, ep_return), total,
                    count), None

        init = (state, jnp.zeros(num_envs), jnp.float32(0), jnp.int32(0))
        (_, _, total, count), _ = jax.lax.scan(
            step, init, jax.random.split(key, steps))
        return total / count

    return float(run(jax.random.key(0)))


def test_random_policy_is_far_below(random_return):
    assert 15.0 < random_return < 30.0
    assert random_return < THRESHOLD / 10


@pytest.mark.parametrize("algo", sorted(CONFIGS))
def test_learns_cartpole(algo, cartpole, random_return):
    module, config = CONFIGS[algo]
    env, params = cartpole
    train = jax.jit(jax.vmap(module.make_train(config, env, params)))
    state, metrics = train(jax.random.split(jax.random.key(0), SEEDS))
    assert np.all(np.asarray(metrics["finite"]))
    np.testing.assert_array_equal(
        np.asarray(state.env_steps),
        config.num_updates * config.num_envs * config.num_steps)
    scores = final_returns(metrics)
    assert np.all(scores >= THRESHOLD), (algo, scores, random_return)
