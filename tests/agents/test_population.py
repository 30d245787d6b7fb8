"""Populations: `jax.vmap(train)` over a batch of hyperparameters trains
each member as it would train alone, and a member's t_max below the
rollout's static length behaves as a rollout of t_max steps.

The comparisons are to float tolerance, not bit-identical: XLA:CPU may
batch (tile, fuse, reorder the sums of) the matmuls of a vmapped program
differently from the single run's, and a rollout of 8 steps runs its
learner's forward pass on a batch of a different size than one of 5, so
the last bits can differ (measured: ~2e-7 after 20 PPO updates). Integer
counters must match exactly.
"""
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari.agents import a2c, ppo

RTOL, ATOL = 1e-5, 1e-6
NUM_ENVS, NUM_STEPS, UPDATES = 4, 32, 20
T_MAX = (32, 16, 8, 32)


@pytest.fixture(scope="module")
def cartpole():
    return gymnax.make("CartPole-v1")


def leaves(tree):
    return [np.asarray(x) for x in jax.tree.leaves(tree)]


def assert_params_close(a, b):
    for x, y in zip(leaves(a), leaves(b), strict=True):
        np.testing.assert_allclose(x, y, rtol=RTOL, atol=ATOL)


@pytest.fixture(scope="module")
def population(cartpole):
    env, env_params = cartpole
    config = ppo.PPOConfig(num_envs=NUM_ENVS, num_steps=NUM_STEPS,
                           total_steps=UPDATES * NUM_ENVS * NUM_STEPS,
                           num_minibatches=4, update_epochs=2,
                           life_loss_terminal=False)
    members = [config.hparams(learning_rate=lr, ent_coef=ent, gamma=gamma,
                              t_max=t)
               for lr, ent, gamma, t in zip((2.5e-4, 1e-3, 5e-4, 3e-3),
                                            (0.01, 0.0, 0.05, 0.01),
                                            (0.99, 0.9, 0.95, 0.999),
                                            T_MAX)]
    hparams = jax.tree.map(lambda *x: jnp.stack(x), *members)
    keys = jax.random.split(jax.random.key(42), len(members))
    train = ppo.make_train(config, env, env_params)
    together = jax.jit(jax.vmap(train))(keys, hparams)
    alone_train = jax.jit(train)
    alone = [alone_train(keys[i], members[i]) for i in range(len(members))]
    return config, together, alone


def test_population_matches_members_alone(population):
    _, (state, metrics), alone = population
    for i, (member_state, member_metrics) in enumerate(alone):
        assert_params_close(jax.tree.map(lambda x: x[i], state.params),
                            member_state.params)
        np.testing.assert_array_equal(np.asarray(metrics["env_steps"][i]),
                                      np.asarray(member_metrics["env_steps"]))
        np.testing.assert_array_equal(np.asarray(metrics["episodes"][i]),
                                      np.asarray(member_metrics["episodes"]))


def test_population_members_differ(population):
    """Members with different hyperparameters end in different places
    (else the comparison above would prove little)."""
    _, (state, _), _ = population
    first = [x[0] for x in leaves(state.params)]
    for i in range(1, len(T_MAX)):
        other = [x[i] for x in leaves(state.params)]
        assert max(np.max(np.abs(a - b)) for a, b in zip(first, other)) \
            > 1e-3


def test_population_env_steps(population):
    """A member with t_max k counts k * num_envs steps per update."""
    _, (state, metrics), _ = population
    per_update = np.array(T_MAX) * NUM_ENVS
    np.testing.assert_array_equal(np.asarray(state.env_steps),
                                  per_update * UPDATES)
    np.testing.assert_array_equal(
        np.asarray(metrics["env_steps"]),
        per_update[:, None] * np.arange(1, UPDATES + 1)[None])
    np.testing.assert_array_equal(np.asarray(metrics["frames"]),
                                  np.asarray(metrics["env_steps"]))


def test_masked_steps_are_a_shorter_rollout(cartpole):
    """A2C with num_steps 8 and t_max 5 against A2C with num_steps 5 from
    the same key: `core.rollout` draws step t's keys from a carried key
    split once per step, so the first 5 steps see the same keys, actions
    and envs in both, and masked steps neither move the envs nor weigh in
    the loss."""
    env, env_params = cartpole
    common = dict(num_envs=4, total_steps=10_000, learning_rate=3e-3,
                  ent_coef=0.01)
    long_ = a2c.make(a2c.A2CConfig(num_steps=8, **common), env, env_params)
    short = a2c.make(a2c.A2CConfig(num_steps=5, **common), env, env_params)
    key = jax.random.key(5)
    s_long = jax.jit(long_.init)(key, long_.config.hparams(t_max=5))
    s_short = s_short0 = jax.jit(short.init)(key, short.config.hparams())
    assert int(s_short.hparams.t_max) == 5
    run_long = jax.jit(lambda s: jax.lax.scan(
        lambda s, _: long_.update(s), s, None, length=6))
    run_short = jax.jit(lambda s: jax.lax.scan(
        lambda s, _: short.update(s), s, None, length=6))
    s_long, m_long = run_long(s_long)
    s_short, m_short = run_short(s_short)
    assert_params_close(s_long.params, s_short.params)
    moved = max(np.max(np.abs(x - y)) for x, y in
                zip(leaves(s_short.params), leaves(s_short0.params)))
    assert moved > 1e-3       # 6 updates moved the params
    np.testing.assert_array_equal(np.asarray(m_long["env_steps"]),
                                  5 * 4 * np.arange(1, 7))
    np.testing.assert_array_equal(np.asarray(m_long["env_steps"]),
                                  np.asarray(m_short["env_steps"]))
    np.testing.assert_allclose(np.asarray(s_long.obs),
                               np.asarray(s_short.obs), rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(np.asarray(s_long.episode_length),
                                  np.asarray(s_short.episode_length))
    np.testing.assert_allclose(np.asarray(m_long["loss"]),
                               np.asarray(m_short["loss"]), rtol=1e-4,
                               atol=1e-6)
