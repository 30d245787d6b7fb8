"""HyperTrick: the eviction rule on a hand-made history, the whole
schedule against a plain-Python simulation of the rule, the budget, the
frames eviction saves, and a small CartPole run whose best configuration
trains as it would alone.

Most checks use a scripted agent whose "episode return" is a table entry
per (configuration, phase), so the schedule is known exactly: the
configuration's index is carried in `ent_coef` and its frames per update
in `t_max`.
"""
import math
import types

import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari.agents import a2c, core
from jaxatari.population import hypertrick, spaces

NAN = np.nan


def ht_config(**overrides):
    settings = dict(members=3, budget=7, phases=3, phase_updates=4,
                    eviction_fraction=0.5)
    return hypertrick.HyperTrickConfig(**{**settings, **overrides})


# --- config -----------------------------------------------------------

@pytest.mark.parametrize("overrides, match", [
    (dict(budget=2), r"budget \(2\) must be >= members \(3\)"),
    (dict(phases=1), "phases must be >= 2"),
    (dict(eviction_fraction=0.0), r"eviction_fraction must be in \(0, 1\)"),
    (dict(eviction_fraction=1.0), r"eviction_fraction must be in \(0, 1\)"),
    (dict(members=0), "members must be an integer >= 1"),
    (dict(phase_updates=0), "phase_updates must be an integer >= 1"),
    (dict(score_window=5), r"score_window.*\[1, phase_updates = 4\]"),
])
def test_config_errors(overrides, match):
    with pytest.raises(ValueError, match=match):
        ht_config(**overrides)


def test_boundaries_is_the_schedule_without_eviction():
    assert ht_config().boundaries == 3 * 3             # ceil(7 / 3) = 3
    assert ht_config(budget=6).boundaries == 2 * 3
    assert ht_config(members=4, budget=4, phases=5).boundaries == 5


# --- the rule on a hand-made history ----------------------------------

def test_evictions_on_a_known_history():
    """Budget 6, 3 phases. Phase 0's table: configs 0-3 reported before
    (5, 1, NaN, 3); slots now report configs 4 (2), 1 at phase 1 and 5
    at phase 0 with a tie."""
    scores = np.full((6, 3), NAN, np.float32)
    scores[:, 0] = [5, 1, NAN, 3, 2, 3]
    scores[1, 1] = 0.5
    scores[0, 1] = 4
    phases = np.array([2, 2, 1, 1, 1, 1], np.int32)
    slot_config = jnp.array([4, 1, 5, 3])
    active = jnp.array([True, True, True, False])
    evicted = hypertrick.evictions(jnp.asarray(scores), jnp.asarray(phases),
                                   slot_config, active, 0.5)
    # Config 4 at phase 0: 6 ranked, below it 1 and NaN: k = 2,
    # floor(0.5 * 6) = 3, k + 1 = 3 <= 3: evicted.
    # Config 1 at phase 1: 2 ranked (0 and 1), k = 0, floor(1) = 1:
    # evicted. Config 5 at phase 0 ties config 3 (3.0) and ranks below it
    # (the later index): k = 3 (1, NaN, 2), 4 > 3: kept. Slot 3 is idle.
    np.testing.assert_array_equal(evicted, [True, True, False, False])
    evicted = hypertrick.evictions(jnp.asarray(scores), jnp.asarray(phases),
                                   slot_config, active, 0.3)
    # floor(0.3 * 6) = 1: config 4 (k = 2) kept; config 1: floor(0.6) = 0.
    np.testing.assert_array_equal(evicted, [False, False, False, False])
    evicted = hypertrick.evictions(jnp.asarray(scores), jnp.asarray(phases),
                                   slot_config, active, 0.7)
    # floor(0.7 * 6) = 4: config 5 (k = 3, the tie lost) goes too, as
    # does config 1 (floor(1.4) = 1).
    np.testing.assert_array_equal(evicted, [True, True, True, False])


def test_a_later_boundary_can_evict_all_its_reporters():
    """Configs 0-3 recorded 10-13 at phase 0 earlier; configs 4 and 5
    now report 1 and 2 there: 6 ranked, floor(0.5 * 6) = 3, and even the
    better of the two (k = 1) is in the bottom half. Only the first
    boundary's best reporter at a phase is safe."""
    scores = jnp.array([[10.0, NAN], [11.0, NAN], [12.0, NAN],
                        [13.0, NAN], [1.0, NAN], [2.0, NAN]])
    phases = jnp.array([1, 1, 1, 1, 1, 1])
    evicted = hypertrick.evictions(scores, phases, jnp.array([4, 5]),
                                   jnp.array([True, True]), 0.5)
    np.testing.assert_array_equal(evicted, [True, True])
    # Had all six reported at one boundary, the bottom three (1, 2 and
    # 10) would go and the best (13) would stay.
    first = hypertrick.evictions(scores, phases, jnp.arange(6),
                                 jnp.ones(6, bool), 0.5)
    np.testing.assert_array_equal(first, [True, False, False, False,
                                          True, True])


def test_the_last_phase_finishes_never_evicts():
    scores = jnp.array([[5.0, 5.0], [1.0, 1.0]])
    phases = jnp.array([2, 2])
    evicted = hypertrick.evictions(scores, phases, jnp.array([0, 1]),
                                   jnp.array([True, True]), 0.9)
    np.testing.assert_array_equal(evicted, [False, False])


# --- the scripted agent -------------------------------------------------

NUM_ENVS = 2


def scripted_agent(table, phase_updates):
    """An agent whose update `u` of configuration `c` (its `ent_coef`)
    reports `table[c, u // phase_updates]` and steps `t_max * NUM_ENVS`
    frames; its parameter counts its updates."""
    config = core.Config(num_envs=NUM_ENVS, num_steps=8,
                         total_steps=10**6)
    table = jnp.asarray(table, jnp.float32)

    def init(key, hparams):
        return core.AgentState(
            params={"updates": jnp.float32(0)}, opt_state=(),
            hparams=hparams, key=key, env_state=jnp.zeros(()),
            obs=jnp.zeros((NUM_ENVS, 1)),
            episode_return=jnp.zeros((NUM_ENVS,)),
            episode_length=jnp.zeros((NUM_ENVS,), jnp.int32),
            update=jnp.int32(0), env_steps=jnp.int32(0))

    def update(state):
        index = state.hparams.ent_coef.astype(jnp.int32)
        phase = jnp.minimum(state.update // phase_updates,
                            table.shape[1] - 1)
        env_steps = state.env_steps + state.hparams.t_max * NUM_ENVS
        state = state.replace(
            params={"updates": state.params["updates"] + 1},
            update=state.update + 1, env_steps=env_steps)
        return state, {"episode_return": table[index, phase],
                       "env_steps": env_steps, "frames": env_steps,
                       "finite": jnp.bool_(True)}

    env = types.SimpleNamespace(num_envs=NUM_ENVS, frameskip=1)
    return core.Agent(init, update, config, env, None)


SPACE = {"learning_rate": spaces.LogUniform(1e-4, 1e-2)}


def run_scripted(config, table, t_max):
    """The schedule with configuration c's ent_coef set to c and its
    t_max to `t_max[c]` (the state's table, rewritten after init)."""
    agent = scripted_agent(table, config.phase_updates)
    init, step = hypertrick.make(config, agent, SPACE)

    def train(key):
        state = init(key)
        budget = config.budget
        hparams = state.config_hparams.replace(
            ent_coef=jnp.arange(budget, dtype=jnp.float32),
            t_max=jnp.asarray(t_max, jnp.int32))
        first = jax.tree.map(lambda x: x[:config.members], hparams)
        state = state.replace(
            config_hparams=hparams,
            slots=jax.vmap(agent.init)(state.config_keys[:config.members],
                                       first))
        state, metrics = jax.lax.scan(lambda s, _: step(s), state, None,
                                      length=config.boundaries)
        return state, {**metrics,
                       "configurations": hypertrick.configurations(state)}

    return jax.device_get(jax.jit(train)(jax.random.key(0)))


def simulate(config, table):
    """The documented rule in plain Python, one slot at a time."""
    budget, phases = config.budget, config.phases
    history = {}                                  # (config, phase) -> score
    reached = [0] * budget
    evicted = [False] * budget
    slots = list(range(config.members))           # None: idle
    next_config = config.members
    schedule = []
    for _ in range(config.boundaries):
        schedule.append(list(slots))
        reports = [(s, c, reached[c]) for s, c in enumerate(slots)
                   if c is not None]
        for _, c, p in reports:
            history[c, p] = table[c][p]
            reached[c] += 1
        freed = []
        for s, c, p in reports:
            def key(j):
                value = history[j, p]
                return (-math.inf if math.isnan(value) else value, -j)
            ranked = [j for j in range(budget) if (j, p) in history]
            below = sum(key(j) < key(c) for j in ranked)
            if p < phases - 1 and below + 1 <= math.floor(
                    config.eviction_fraction * len(ranked) + 1e-4):
                evicted[c] = True
                freed.append(s)
            elif p == phases - 1:
                freed.append(s)
        for s in sorted(freed):
            slots[s] = next_config if next_config < budget else None
            next_config += next_config < budget
    return schedule, reached, evicted


TABLE = np.array([[3, 6, 2], [5, 1, 9], [4, 4, 4], [NAN, 7, 7],
                  [8, 2, 5], [2, 2, 2], [6, 6, 6]], np.float32)


@pytest.fixture(scope="module")
def scripted():
    config = ht_config()
    t_max = [1, 2, 3, 4, 5, 6, 7]
    return config, t_max, run_scripted(config, TABLE, t_max)


def test_schedule_matches_the_simulation(scripted):
    config, _, (state, metrics) = scripted
    schedule, reached, evicted = simulate(config, TABLE.tolist())
    assert any(evicted) and not all(evicted)
    expected_slots = [[-1 if c is None else c for c in row]
                      for row in schedule]
    np.testing.assert_array_equal(metrics["slot_config"], expected_slots)
    table = metrics["configurations"]
    np.testing.assert_array_equal(table["phases_reached"], reached)
    np.testing.assert_array_equal(table["evicted"], evicted)
    np.testing.assert_array_equal(table["finished"],
                                  np.array(reached) == config.phases)
    for c in range(config.budget):
        expected = np.full(config.phases, NAN, np.float32)
        expected[:reached[c]] = TABLE[c, :reached[c]]
        np.testing.assert_array_equal(table["scores"][c], expected)


def test_budget_is_spent_exactly(scripted):
    config, _, (state, metrics) = scripted
    assert int(state.next_config) == config.budget
    started = metrics["configurations"]["phases_reached"] > 0
    assert started.all()
    assert not state.active.any()
    ids = metrics["slot_config"][metrics["active"]]
    assert set(ids.tolist()) == set(range(config.budget))
    assert metrics["refilled"].sum() == config.budget - config.members
    for row, active in zip(metrics["slot_config"], metrics["active"]):
        np.testing.assert_array_equal(row >= 0, active)


def test_idle_slots_step_no_frames(scripted):
    config, t_max, (state, metrics) = scripted
    per_phase = config.phase_updates * NUM_ENVS * np.asarray(t_max)
    expected = np.where(metrics["active"],
                        per_phase[np.maximum(metrics["slot_config"], 0)], 0)
    np.testing.assert_array_equal(metrics["frames"], expected)
    assert (metrics["frames"][~metrics["active"]] == 0).all()
    assert np.all(np.isnan(metrics["scores"][~metrics["active"]]))


def test_frames_saved_arithmetic(scripted):
    config, t_max, (state, metrics) = scripted
    table = metrics["configurations"]
    per_phase = config.phase_updates * NUM_ENVS * np.asarray(t_max)
    np.testing.assert_array_equal(table["frames"],
                                  per_phase * table["phases_reached"])
    np.testing.assert_array_equal(table["frames_full"],
                                  per_phase * config.phases)
    summary = hypertrick.summarise(config, metrics)
    spent = int(np.sum(per_phase * table["phases_reached"]))
    full = int(np.sum(per_phase)) * config.phases
    assert summary["frames_spent"] == spent == int(metrics["frames"].sum())
    assert summary["frames_full_training"] == full
    assert summary["frames_saved"] == full - spent > 0
    assert summary["saved_fraction"] == pytest.approx((full - spent) / full)
    assert summary["configurations_started"] == config.budget


def test_constant_t_max_saves_the_textbook_figure():
    """With one t_max for all, full training is budget * phases *
    phase_updates * frames_per_update."""
    config = ht_config()
    state, metrics = run_scripted(config, TABLE, [4] * config.budget)
    summary = hypertrick.summarise(config, metrics)
    frames_per_update = 4 * NUM_ENVS
    assert summary["frames_full_training"] == (
        config.budget * config.phases * config.phase_updates
        * frames_per_update)
    reached = metrics["configurations"]["phases_reached"]
    assert summary["frames_spent"] == (
        int(reached.sum()) * config.phase_updates * frames_per_update)


def test_best_configuration(scripted):
    """The best finished configuration by last-phase score, its state
    kept after its slot was refilled."""
    config, _, (state, metrics) = scripted
    table = metrics["configurations"]
    finished = np.flatnonzero(table["finished"])
    last = table["scores"][finished, -1]
    best = finished[np.argmax(last)]
    assert table["best_config"] == best
    assert table["best_score"] == last.max()
    assert table["best_hparams"]["ent_coef"] == best
    assert state.best.params["updates"] == config.phases * \
        config.phase_updates
    assert state.best.hparams.ent_coef == best


def test_nan_scores_rank_last():
    """A configuration with no finished episode is the one evicted."""
    config = ht_config(members=2, budget=2, phases=2)
    table = np.array([[NAN, 1.0], [-50.0, 1.0]], np.float32)
    _, metrics = run_scripted(config, table, [1, 1])
    np.testing.assert_array_equal(metrics["configurations"]["evicted"],
                                  [True, False])


# --- a real agent ---------------------------------------------------------

@pytest.fixture(scope="module")
def cartpole_run():
    env, env_params = gymnax.make("CartPole-v1")
    agent = a2c.make(a2c.A2CConfig(num_envs=8, num_steps=5,
                                   total_steps=10**6,
                                   life_loss_terminal=False),
                     env, env_params)
    config = ht_config(members=3, budget=5, phases=3, phase_updates=20)
    train = jax.jit(hypertrick.make_train(
        config, agent, {"learning_rate": spaces.LogUniform(1e-4, 3e-2)}))
    state, metrics = jax.device_get(train(jax.random.key(1)))
    return agent, config, state, metrics


def test_cartpole_schedule(cartpole_run):
    agent, config, state, metrics = cartpole_run
    table = metrics["configurations"]
    assert (table["phases_reached"] > 0).all()
    assert table["finished"].any()
    summary = hypertrick.summarise(config, metrics)
    frames_per_update = agent.config.num_envs * agent.config.num_steps
    assert summary["frames_full_training"] == (
        config.budget * config.phases * config.phase_updates
        * frames_per_update)
    assert summary["frames_spent"] == int(metrics["frames"].sum())
    assert summary["best_hparams"]["learning_rate"] == pytest.approx(
        float(table["hparams"]["learning_rate"][summary["best_config"]]))


def test_cartpole_best_trains_as_alone(cartpole_run):
    """The kept best state is its configuration trained alone from its
    own key: nothing of the slot's previous occupant leaks in."""
    agent, config, state, metrics = cartpole_run
    best = int(metrics["configurations"]["best_config"])
    hparams = jax.tree.map(lambda x: x[best], state.config_hparams)
    alone, _ = jax.device_get(jax.jit(lambda k, h: core.scan_updates(
        agent, agent.init(k, h), config.phases * config.phase_updates))(
            state.config_keys[best], hparams))
    for x, y in zip(jax.tree.leaves(state.best.params),
                    jax.tree.leaves(alone.params)):
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5)
    assert int(state.best.env_steps) == int(alone.env_steps)
