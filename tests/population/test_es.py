"""Evolution strategies (`jaxatari.population.es`) on gymnax CartPole-v1:
learning in one compiled program with both strategies, config checks,
and the fitness against an independent Python-loop rollout."""
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari.population import es


@pytest.fixture(scope="module")
def cartpole():
    return gymnax.make("CartPole-v1")


def _learning_config(strategy: str) -> es.ESConfig:
    return es.ESConfig(strategy=strategy, population_size=32,
                       generations=40, num_envs=2, rollout_steps=500,
                       eval_envs=16)


@pytest.mark.parametrize("strategy", es.STRATEGIES)
def test_es_learns_cartpole_in_one_program(cartpole, strategy):
    """The centre's return climbs from a near-random policy to > 250 (the
    task's cap is 500; a uniformly random policy scores ~22), in one
    ahead-of-time compiled program."""
    env, env_params = cartpole
    config = _learning_config(strategy)
    key = jax.random.key(1)
    compiled = jax.jit(es.make_train(config, env, env_params)).lower(
        key).compile()
    state, metrics = compiled(key)

    assert metrics["centre_return"].shape == (config.generations,)
    assert int(state.generation) == config.generations
    np.testing.assert_array_equal(metrics["generation"],
                                  np.arange(1, config.generations + 1))
    assert np.all(metrics["max_fitness"] >= metrics["median_fitness"])
    assert np.all(metrics["median_fitness"] >= metrics["min_fitness"])
    early, late = metrics["mean_fitness"][:5], metrics["mean_fitness"][-5:]
    assert late.mean() > early.mean() + 100

    agent = es.make(config, env, env_params)
    final = agent.evaluate(es.centre_params(state), jax.random.key(7))
    uniform = jax.tree.map(jnp.zeros_like, es.centre_params(state))
    random_policy = es.rollout_returns(
        agent.env, es.make_policy(agent.network, greedy=False), uniform,
        jax.random.key(8), 500)[0]
    start = float(metrics["centre_return"][0])
    assert float(final.mean()) > 250, final
    assert float(final.mean()) > start + 100, (start, final)
    assert float(final.mean()) > 5 * float(random_policy.mean())
    assert float(np.mean(metrics["centre_return"][-3:])) > 150


def test_centre_params_and_other_paths(cartpole):
    """Sampled actions, a key per candidate, SNES with its own sigma rate:
    two generations run; the centre is the strategy's mean, shaped as the
    network's params."""
    env, env_params = cartpole
    config = es.ESConfig(strategy="snes", population_size=6, generations=2,
                         num_envs=2, rollout_steps=50, eval_envs=2,
                         sigma=0.05, sigma_learning_rate=0.1, greedy=False,
                         common_random_numbers=False)
    agent = es.make(config, env, env_params)
    state = agent.init(jax.random.key(0))
    state, metrics = jax.jit(agent.step)(state)
    centre = es.centre_params(state)
    expected = agent.strategy.get_mean(state.strategy_state)
    assert jax.tree.structure(centre) == jax.tree.structure(expected)
    for a, b in zip(jax.tree.leaves(centre), jax.tree.leaves(expected)):
        np.testing.assert_array_equal(a, b)
    assert int(metrics["generation"]) == 1
    assert 0 < float(metrics["mean_fitness"]) <= 50
    assert 0 < int(metrics["env_steps"]) <= (6 * 2 + 2) * 50


@pytest.mark.parametrize("field, value", [
    ("strategy", "cma_es"), ("population_size", 1),
    ("population_size", 33), ("generations", 0), ("num_envs", 0),
    ("rollout_steps", 2.5), ("eval_envs", -1), ("sigma", 0.0),
    ("sigma", float("nan")), ("learning_rate", -0.1),
    ("sigma_learning_rate", 0.1), ("optimizer", "rmsprop"),
    ("weight_decay", -1.0), ("antithetic", "yes"), ("greedy", None),
    ("network", "resnet")])
def test_config_out_of_range_names_the_field(field, value):
    with pytest.raises(ValueError, match=f"config.{field}"):
        es.ESConfig(**{field: value})   # open_es: even size, fixed sigma


def _left_params(agent):
    """The MLP with its logits head zeroed and biased to action 0."""
    params = agent.network.init(jax.random.key(3),
                                jnp.zeros((1,) + agent.env.obs_shape))
    head = params["params"]["Dense_4"]
    head = {"kernel": jnp.zeros_like(head["kernel"]),
            "bias": jnp.array([1.0, -1.0])}
    return {"params": {**params["params"], "Dense_4": head}}, params


def _python_returns(env, env_params, network, params, key, num_envs,
                    horizon):
    """First-episode returns, one env at a time, gymnax stepped in a
    Python loop; env i resets with the key `rollout_returns` documents."""
    reset_keys = jax.random.split(jax.random.split(key)[1], num_envs)
    step = jax.jit(env.step)
    returns = []
    for i in range(num_envs):
        obs, state = env.reset(reset_keys[i], env_params)
        total = 0.0
        for t in range(horizon):
            logits, _ = network.apply(params, obs[None])
            action = int(jnp.argmax(logits[0]))
            obs, state, reward, terminated, truncated, _ = step(
                jax.random.key(t), state, action, env_params)
            total += float(reward)
            if terminated or truncated:
                break
        returns.append(total)
    return np.array(returns)


@pytest.mark.parametrize("horizon", [500, 9, 4])
def test_fitness_matches_a_python_loop(cartpole, horizon):
    """Greedy always-left and a random-init network: the jitted rollout,
    a candidate's fitness (their mean) and the centre's evaluation equal
    gymnax stepped in a Python loop, episode by episode, with episodes cut
    at the horizon counting their partial return."""
    env, env_params = cartpole
    config = es.ESConfig(num_envs=4, eval_envs=4, rollout_steps=horizon)
    agent = es.make(config, env, env_params)
    left, random_init = _left_params(agent)
    policy = es.make_policy(agent.network, greedy=True)
    rollout = jax.jit(es.rollout_returns, static_argnums=(0, 1, 4))
    fitness = jax.jit(agent.fitness)
    for params, seed in ((left, 11), (random_init, 12)):
        key = jax.random.key(seed)
        returns, steps = rollout(agent.env, policy, params, key, horizon)
        expected = _python_returns(env, env_params, agent.network, params,
                                   key, 4, horizon)
        np.testing.assert_array_equal(returns, expected)
        assert int(steps) == expected.max()
        value, env_steps = fitness(params, key)
        np.testing.assert_allclose(float(value), expected.mean(), rtol=1e-6)
        assert int(env_steps) == 4 * expected.max()
        np.testing.assert_array_equal(agent.evaluate(params, key), expected)
        if params is left and horizon == 500:   # falls in ~10 steps
            assert np.all((expected > 5) & (expected < 15)), expected
