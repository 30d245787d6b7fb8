"""Population Based Training: truncation selection, what the exploit
gathers copy and what they leave, explore touching only the copies, the
random-search baseline training each member as it would alone, one
jitted program, and PBT beating its baseline on CartPole.

Two runs are shared (module fixtures), each one compiled program: PBT
and its baseline (exploit and explore off), 8 A2C members on CartPole
with a wide learning-rate prior, 12 generations of 50 updates.
"""
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari.agents import a2c, core
from jaxatari.population import pbt, spaces

MEMBERS, READY, GENERATIONS, WINDOW = 8, 50, 12, 25
NUM_ENVS, NUM_STEPS = 8, 5
LR_LOW, LR_HIGH = 1e-5, 1e-1
SPACE = {"learning_rate": spaces.LogUniform(LR_LOW, LR_HIGH)}


def pbt_config(**overrides):
    settings = dict(members=MEMBERS, ready_updates=READY,
                    generations=GENERATIONS, score_window=WINDOW)
    return pbt.PBTConfig(**{**settings, **overrides})


@pytest.fixture(scope="module")
def agent():
    env, env_params = gymnax.make("CartPole-v1")
    config = a2c.A2CConfig(num_envs=NUM_ENVS, num_steps=NUM_STEPS,
                           total_steps=10**6, life_loss_terminal=False)
    return a2c.make(config, env, env_params)


@pytest.fixture(scope="module")
def pbt_run(agent):
    """PBT: (initial state, final state, metrics, step's trace count)."""
    init, step = pbt.make(pbt_config(), agent, SPACE)
    traces = []

    def counted_step(state):
        traces.append(1)
        return step(state)

    def train(key):
        start = init(key)
        return start, *pbt.run(counted_step, start, GENERATIONS)

    train = jax.jit(train)
    train(jax.random.key(0))
    start, final, metrics = jax.device_get(train(jax.random.key(0)))
    return start, final, metrics, len(traces)


@pytest.fixture(scope="module")
def baseline_run(agent):
    """The same population with exploit and explore off."""
    config = pbt_config(exploit=False, explore=False)
    init, _ = pbt.make(config, agent, SPACE)
    train = pbt.make_train(config, agent, SPACE)
    key = jax.random.key(0)
    start, (final, metrics) = jax.device_get(
        jax.jit(lambda k: (init(k), train(k)))(key))
    return start, final, metrics


def leaves(tree):
    return [np.asarray(jax.random.key_data(x)
                       if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)
                       else x) for x in jax.tree.leaves(tree)]


def member(tree, index):
    return jax.tree.map(lambda x: x[index], tree)


def assert_trees_equal(a, b):
    for x, y in zip(leaves(a), leaves(b), strict=True):
        np.testing.assert_array_equal(x, y)


def keys_data(state):
    return leaves(state.key)[0]


# --- config -----------------------------------------------------------

@pytest.mark.parametrize("overrides, match", [
    (dict(members=4), "too small for the truncation.*members >= 5"),
    (dict(members=0), "members must be an integer >= 1"),
    (dict(truncation=0.6), r"truncation must be in \(0, 0.5\]"),
    (dict(truncation=0.0), r"truncation must be in \(0, 0.5\]"),
    (dict(score_window=51), r"score_window.*\[1, ready_updates = 50\]"),
    (dict(factors=()), "factors"),
    (dict(factors=(0.8, -1.0)), "factors"),
    (dict(resample_probability=1.5), "resample_probability"),
    (dict(exploit=False), "with exploit=False set explore=False"),
    (dict(ready_updates=0), "ready_updates must be"),
])
def test_config_errors(overrides, match):
    with pytest.raises(ValueError, match=match):
        pbt_config(**overrides)


def test_truncated_counts():
    assert pbt_config(members=5).truncated == 1
    assert pbt_config(members=10, truncation=0.3).truncated == 3
    assert pbt_config(members=9).truncated == 1
    assert pbt_config().window == WINDOW
    assert pbt_config(score_window=None).window == READY


def test_make_checks_the_space_and_the_schedule(agent):
    with pytest.raises(ValueError, match="t_max"):
        pbt.make(pbt_config(), agent,
                 {"t_max": spaces.QLogUniform(2, 100)})
    annealed = a2c.make(
        a2c.A2CConfig(num_envs=NUM_ENVS, num_steps=NUM_STEPS,
                      total_steps=10**6, anneal_lr=True),
        *gymnax.make("CartPole-v1"))
    with pytest.raises(ValueError, match="anneal_lr=False"):
        pbt.make(pbt_config(), annealed, SPACE)


# --- scoring and selection -----------------------------------------------

def test_score_is_a_nan_safe_window_mean():
    returns = jnp.array([[1.0, np.nan, 3.0, 5.0],
                         [np.nan, np.nan, np.nan, np.nan],
                         [9.0, 9.0, np.nan, 2.0]])
    np.testing.assert_allclose(pbt.score(returns, 3), [4.0, np.nan, 5.5])
    np.testing.assert_allclose(pbt.score(returns, 4), [3.0, np.nan, 20 / 3])


def test_rank_puts_nan_last_and_breaks_ties_by_index():
    scores = jnp.array([3.0, np.nan, 7.0, 1.0, 7.0, 0.0, 5.0, 2.0])
    np.testing.assert_array_equal(pbt.rank(scores), [2, 4, 6, 0, 7, 3, 5, 1])
    np.testing.assert_array_equal(pbt.rank(jnp.zeros(4)), [0, 1, 2, 3])


def test_select_parents_draws_uniformly_from_the_top():
    scores = jnp.array([3.0, np.nan, 7.0, 1.0, 7.0, 0.0, 5.0, 2.0])
    keys = jax.random.split(jax.random.key(1), 400)
    parents = np.asarray(jax.vmap(
        lambda k: pbt.select_parents(scores, k, 2))(keys))
    np.testing.assert_array_equal(parents[:, [0, 2, 3, 4, 6, 7]],
                                  np.broadcast_to([0, 2, 3, 4, 6, 7],
                                                  (400, 6)))
    for bottom in (1, 5):
        assert set(np.unique(parents[:, bottom])) == {2, 4}
        assert abs(np.mean(parents[:, bottom] == 2) - 0.5) < 0.08


# --- exploit and explore on a known population ----------------------------

SCORES = jnp.array([3.0, np.nan, 7.0, 1.0, 7.0, 0.0, 5.0, 2.0])
TOP, BOTTOM = (2, 4), (5, 1)       # truncation 0.25 of 8, by hand


@pytest.fixture(scope="module")
def known_population(pbt_run):
    """The PBT run's initial members, with GA3C-like `extra` (a lagged
    copy of the parameters) so that its copying shows."""
    start = pbt_run[0]
    members = start.members
    return members.replace(extra=jax.tree.map(lambda p: p * 2.0 + 1.0,
                                              members.params))


def test_copy_from_parents_copies_the_learner_only(known_population):
    before = known_population
    parents = jnp.array([0, 0, 2, 1, 4, 7, 6, 7])
    after = jax.device_get(jax.jit(pbt.copy_from_parents)(before, parents))
    for i, parent in enumerate(np.asarray(parents)):
        for field in ("params", "opt_state", "hparams", "extra"):
            assert_trees_equal(member(getattr(after, field), i),
                               member(getattr(before, field), parent))
    for field in ("env_state", "obs", "episode_return", "episode_length",
                  "update", "env_steps"):
        assert_trees_equal(getattr(after, field), getattr(before, field))
    np.testing.assert_array_equal(keys_data(after), keys_data(before))
    # The members were distinct, so the copies show.
    assert any(not np.array_equal(x[1], y[1]) for x, y in
               zip(leaves(after.params), leaves(before.params)))


def test_exploit_and_explore_with_known_scores(known_population):
    before = known_population
    config = pbt_config(truncation=0.25, resample_probability=0.0)
    after, parents = jax.device_get(jax.jit(
        lambda m, s, k: pbt.exploit_and_explore(config, SPACE, m, s, k))(
            before, SCORES, jax.random.key(5)))
    for i in range(MEMBERS):
        if i in BOTTOM:
            assert parents[i] in TOP
        else:
            assert parents[i] == i
        source = parents[i]
        assert_trees_equal(member(after.params, i),
                           member(before.params, source))
        assert_trees_equal(member(after.opt_state, i),
                           member(before.opt_state, source))
        assert_trees_equal(member(after.extra, i),
                           member(before.extra, source))
        old, new = member(before.hparams, source), member(after.hparams, i)
        for name in spaces.HPARAM_NAMES:
            if i in BOTTOM and name == "learning_rate":
                ratio = getattr(new, name) / getattr(old, name)
                assert np.isclose(ratio, 0.8, rtol=1e-5) \
                    or np.isclose(ratio, 1.2, rtol=1e-5)
            else:
                assert getattr(new, name) == getattr(old, name)
    for field in ("env_state", "obs", "episode_return", "episode_length",
                  "update", "env_steps"):
        assert_trees_equal(getattr(after, field), getattr(before, field))
    np.testing.assert_array_equal(keys_data(after), keys_data(before))


def test_the_final_generation_copies_nothing(known_population):
    """`final` (the run's last generation): every member is its own parent
    and comes back bit for bit, hyperparameters included."""
    config = pbt_config(truncation=0.25, resample_probability=0.0)
    after, parents = jax.device_get(jax.jit(
        lambda m, s, k: pbt.exploit_and_explore(config, SPACE, m, s, k,
                                                final=jnp.bool_(True)))(
            known_population, SCORES, jax.random.key(5)))
    np.testing.assert_array_equal(parents, np.arange(MEMBERS))
    assert_trees_equal(after, known_population)


def test_exploit_without_explore_copies_hparams_unchanged(known_population):
    config = pbt_config(truncation=0.25, explore=False)
    after, parents = jax.device_get(jax.jit(
        lambda m, s, k: pbt.exploit_and_explore(config, SPACE, m, s, k))(
            known_population, SCORES, jax.random.key(5)))
    assert_trees_equal(after.hparams,
                       member(known_population.hparams, parents))


def test_explore_touches_only_the_replaced(known_population):
    hparams = known_population.hparams
    replaced = jnp.array([False, True, False, False, False, True, False,
                          False])
    config = pbt_config(resample_probability=1.0)
    explored = jax.device_get(jax.jit(
        lambda h, r: pbt.explore(config, SPACE, jax.random.key(2), h, r))(
            hparams, replaced))
    changed = explored.learning_rate != np.asarray(hparams.learning_rate)
    np.testing.assert_array_equal(changed, replaced)
    for name in spaces.HPARAM_NAMES:
        if name != "learning_rate":
            np.testing.assert_array_equal(getattr(explored, name),
                                          getattr(hparams, name))


# --- the program -----------------------------------------------------------

def test_step_is_one_program(agent, pbt_run):
    """step traced once inside the generation scan (and not again on a
    second call), and no host callback in its program."""
    start, _, _, traces = pbt_run
    assert traces == 1
    _, step = pbt.make(pbt_config(), agent, SPACE)
    jaxpr = str(jax.make_jaxpr(step)(start))
    assert "callback" not in jaxpr
    assert "sort" in jaxpr and "gather" in jaxpr
    _, with_callback = pbt.make(pbt_config(), agent, SPACE,
                                callback=lambda metrics: None)
    assert "callback" in str(jax.make_jaxpr(with_callback)(start))


def test_init_draws_from_the_space(pbt_run, agent):
    start = pbt_run[0]
    rates = np.asarray(start.members.hparams.learning_rate)
    assert np.all((rates >= LR_LOW) & (rates <= LR_HIGH))
    assert len(np.unique(rates)) == MEMBERS
    np.testing.assert_allclose(start.members.hparams.gamma,
                               agent.config.gamma)
    np.testing.assert_array_equal(start.members.hparams.t_max, NUM_STEPS)
    np.testing.assert_array_equal(start.parents, np.arange(MEMBERS))
    assert np.all(np.isnan(start.scores))


def independent_ranking(scores):
    filled = np.where(np.isnan(scores), -np.inf, scores)
    return sorted(range(len(scores)), key=lambda i: (-filled[i], i))


def test_generations_follow_truncation_selection(pbt_run):
    """Every generation's parents and hyperparameters, checked against a
    ranking of the reported scores computed here; the last generation
    copies nobody, so the final members are the ones trained."""
    _, final, metrics, _ = pbt_run
    count = pbt_config().truncated
    for g in range(GENERATIONS):
        order = independent_ranking(metrics["scores"][g])
        top, bottom = set(order[:count]), set(order[-count:])
        if g + 1 == GENERATIONS:
            top, bottom = set(), set()
        parents = metrics["parents"][g]
        replaced = set(np.flatnonzero(metrics["replaced"][g]))
        assert replaced == bottom
        trained = metrics["trained_hparams"]["learning_rate"][g]
        after = metrics["hparams"]["learning_rate"][g]
        for i in range(MEMBERS):
            if i in bottom:
                assert parents[i] in top
                ratio = after[i] / trained[parents[i]]
                resampled = LR_LOW <= after[i] <= LR_HIGH
                assert np.isclose(ratio, 0.8, rtol=1e-5) or np.isclose(
                    ratio, 1.2, rtol=1e-5) or resampled
            else:
                assert parents[i] == i and after[i] == trained[i]
        if g + 1 < GENERATIONS:
            np.testing.assert_array_equal(
                metrics["trained_hparams"]["learning_rate"][g + 1], after)
    np.testing.assert_array_equal(final.parents, metrics["parents"][-1])
    np.testing.assert_array_equal(final.parents, np.arange(MEMBERS))
    np.testing.assert_array_equal(final.members.hparams.learning_rate,
                                  metrics["trained_hparams"]["learning_rate"]
                                  [-1])
    assert metrics["replaced"][:-1].any(axis=1).all()
    assert int(final.generation) == GENERATIONS


def test_each_slot_counts_its_own_frames(pbt_run):
    _, final, metrics, _ = pbt_run
    per_generation = READY * NUM_ENVS * NUM_STEPS
    expected = per_generation * np.arange(1, GENERATIONS + 1)
    np.testing.assert_array_equal(metrics["frames"],
                                  np.repeat(expected[:, None], MEMBERS, 1))
    np.testing.assert_array_equal(final.members.update, READY * GENERATIONS)
    assert np.all(metrics["finite"][:, np.asarray(final.members.hparams
                                                  .learning_rate) < 1e-2])


def test_baseline_keeps_hparams_and_parents(baseline_run):
    start, final, metrics = baseline_run
    rates = np.asarray(start.members.hparams.learning_rate)
    np.testing.assert_array_equal(
        metrics["hparams"]["learning_rate"],
        np.broadcast_to(rates, (GENERATIONS, MEMBERS)))
    np.testing.assert_array_equal(
        metrics["parents"],
        np.broadcast_to(np.arange(MEMBERS), (GENERATIONS, MEMBERS)))
    assert not metrics["replaced"].any()
    assert_trees_equal(final.members.hparams, start.members.hparams)


def test_baseline_members_train_as_alone(agent, baseline_run):
    """With selection off, member i ends where its initial state trained
    alone for the same updates ends (float tolerance, see
    tests/agents/test_population.py), episode for episode."""
    start, final, metrics = baseline_run
    alone = jax.jit(lambda s: core.scan_updates(agent, s,
                                                READY * GENERATIONS))
    for i in range(MEMBERS):
        state, alone_metrics = jax.device_get(alone(member(start.members,
                                                           i)))
        for x, y in zip(leaves(member(final.members.params, i)),
                        leaves(state.params)):
            np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5)
        np.testing.assert_array_equal(
            metrics["episode_return"][:, i].reshape(-1),
            alone_metrics["episode_return"])


def test_pbt_and_baseline_start_alike(pbt_run, baseline_run):
    assert_trees_equal(pbt_run[0].members, baseline_run[0].members)
    np.testing.assert_array_equal(pbt_run[2]["scores"][0],
                                  baseline_run[2]["scores"][0])


def test_pbt_beats_random_search_on_cartpole(pbt_run, baseline_run):
    """With a learning-rate prior wide enough that most draws are useless,
    PBT's population median climbs over the generations and ends well
    above the same population's without selection."""
    pbt_scores, base_scores = pbt_run[2]["scores"], baseline_run[2]["scores"]
    first, last = np.median(pbt_scores[0]), np.median(pbt_scores[-1])
    assert last > 2 * first
    assert last > 1.5 * np.median(base_scores[-1])
    final_rates = pbt_run[1].members.hparams.learning_rate
    assert np.median(final_rates) > 1e-4
