"""HyperTrick (Heinrich and Frosio, 2019, arXiv:1902.02725) as one jitted
program.

What could be read. The paper's abstract: a meta-optimisation algorithm
that tunes deep RL hyperparameters while agents learn Atari games on a
distributed system, simpler than existing meta-optimisers, learning
similar policies and using distributed compute better. The GTC 2019 talk:
it "releases more computational resources during training by means of a
stochastic scheduling procedure", on MagLev; its GA3C space is
`spaces.GA3C_HYPERTRICK`. The paper's body could not be read, so what
follows is our reading, not a transcription:

* `budget` configurations are drawn from the space; `members` slots train
  them, `members` at a time.
* A configuration's training is cut into `phases` phases of
  `phase_updates` agent updates each. At the end of a phase p (before the
  last) the configuration reports a score (the mean recent episode
  return, as `pbt.score`) into a history table of scores per
  (configuration, phase), NaN where not reached. It is *evicted* if its
  score ranks in the bottom `eviction_fraction` of the scores recorded at
  phase p by all the configurations that reached phase p so far, itself
  and those reporting at the same boundary included: with n such scores
  and rank k (0 the worst; ties ranked by configuration index, the
  earlier ranking higher; NaN, no finished episode, lowest), it is
  evicted if `k + 1 <= floor(eviction_fraction * n)`. The first to
  report at a phase is never evicted, nor the best of the first
  boundary's reporters at that phase (k = n - 1), so some configuration
  always finishes. A later boundary's best reporter can be evicted: it
  ranks against the whole history, and if the earlier scores at that
  phase are all higher it is in the bottom fraction. Early reporters
  face a short, easy history and late ones the whole table: the rule is
  asynchronous successive halving (ASHA-like) without promotion rungs.
* No weights are copied (unlike PBT). An evicted configuration's slot
  restarts with the next configuration from the budget, fresh parameters
  from `agent.init` with that configuration's own key: a `jnp.where(
  refill, fresh, old)` over all the slot's leaves. A configuration that
  completes all phases is finished, and its slot restarts the same way.
  Once the budget is spent, freed slots idle: their state stops moving
  and their frames do not count.

In one vmapped program every slot steps in lockstep, so the paper's
asynchronous phase ends become global boundaries, one every
`phase_updates` updates: the program is a `lax.scan` over boundaries,
their number static: `ceil(budget / members) * phases`, the schedule's
length with no eviction at all (each slot runs configurations back to
back, each at most `phases` long, so configuration c starts by boundary
`floor(c / members) * phases`). Evictions end the schedule sooner;
boundaries with every slot idle skip the training (a `lax.cond`).

What eviction saves, and what it does not. The metrics give each
configuration's frames and the frames it would have had trained to the
end (its frames per phase times `phases`); `summarise` totals them: the
frames spent against `budget * phases * phase_updates * frames_per_update`
when every configuration has the same t_max. In a vmapped program an
idle slot still occupies its lane of the batch until every slot idles,
so eviction saves frames (the sample budget) and lets more configurations
run per frame; it saves wall-clock time only at the end of the schedule.
Successive halving can evict a late bloomer (Hertel et al. 2020); the
table of scores per phase shows where.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxatari.agents import core
from jaxatari.agents.core import Agent, AgentState, HParams
from jaxatari.population import pbt, spaces

Metrics = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class HyperTrickConfig:
    """HyperTrick's settings.

    Attributes:
        members: slots trained at once.
        budget: configurations drawn and trained in all (>= members).
        phases: phases per configuration (>= 2: one ends in a decision).
        phase_updates: agent updates per phase.
        eviction_fraction: the bottom fraction of a phase's scores that
            is evicted, in (0, 1).
        score_window: the recent updates a score averages (None: the
            whole phase).
    """
    members: int
    budget: int
    phases: int
    phase_updates: int
    eviction_fraction: float = 0.5
    score_window: int | None = None

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raises ValueError naming the field to change."""
        for name in ("members", "budget", "phases", "phase_updates"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"hypertrick.{name} must be an integer "
                                 f">= 1, got {value!r}")
        if self.budget < self.members:
            raise ValueError(
                f"hypertrick.budget ({self.budget}) must be >= members "
                f"({self.members}): every slot starts a configuration")
        if self.phases < 2:
            raise ValueError(f"hypertrick.phases must be >= 2 (eviction "
                             f"happens between phases), got {self.phases}")
        if not 0.0 < self.eviction_fraction < 1.0:
            raise ValueError(f"hypertrick.eviction_fraction must be in "
                             f"(0, 1), got {self.eviction_fraction}")
        if self.score_window is not None and not (
                isinstance(self.score_window, int)
                and 1 <= self.score_window <= self.phase_updates):
            raise ValueError(
                f"hypertrick.score_window must be an integer in [1, "
                f"phase_updates = {self.phase_updates}] or None, got "
                f"{self.score_window!r}")

    @property
    def boundaries(self) -> int:
        """The static number of phase boundaries the program scans: the
        schedule's length without evictions."""
        return math.ceil(self.budget / self.members) * self.phases

    @property
    def window(self) -> int:
        """The updates a score averages."""
        return self.phase_updates if self.score_window is None \
            else self.score_window


@struct.dataclass
class HyperTrickState:
    """The slots and the configurations' table between boundaries.

    Attributes:
        slots: `AgentState` batched over `members` slots.
        slot_config: `[members]` the configuration each slot trains
            (meaningful where `active`).
        active: `[members]` the slot trains a configuration.
        next_config: configurations started so far (int32).
        config_keys: `[budget]` each configuration's `agent.init` key.
        config_hparams: `HParams` batched over `[budget]`.
        config_phases: `[budget]` phases each configuration completed.
        config_scores: `[budget, phases]` the scores reported, NaN where
            not reached.
        config_evicted: `[budget]` evicted before the last phase.
        config_frames: `[budget]` the frames each configuration stepped.
        best: the `AgentState` of the best finished configuration so far
            (by last-phase score; a placeholder while `best_config` < 0).
        best_config, best_score: its index (-1: none yet) and score.
        boundary: boundaries done (int32).
    """
    slots: AgentState
    slot_config: jax.Array
    active: jax.Array
    next_config: jax.Array
    config_keys: jax.Array
    config_hparams: HParams
    config_phases: jax.Array
    config_scores: jax.Array
    config_evicted: jax.Array
    config_frames: jax.Array
    best: AgentState
    best_config: jax.Array
    best_score: jax.Array
    boundary: jax.Array


def _where(mask: jax.Array, new: Any, old: Any) -> Any:
    """`jnp.where` per member over every leaf (mask `[M]`, leaves
    `[M, ...]`)."""
    def select(a: jax.Array, b: jax.Array) -> jax.Array:
        return jnp.where(mask.reshape(mask.shape + (1,) * (a.ndim - 1)),
                         a, b)
    return jax.tree.map(select, new, old)


def evictions(config_scores: jax.Array, config_phases: jax.Array,
              slot_config: jax.Array, active: jax.Array,
              eviction_fraction: float) -> jax.Array:
    """Which active slots' configurations the history rule evicts.

    Call it after the boundary's scores are recorded: slot i's
    configuration c just completed phase `p = config_phases[c] - 1` and
    is ranked among every configuration j with `config_phases[j] > p` by
    `config_scores[j, p]` (NaN lowest, ties to the lower index). It is
    evicted if `k + 1 <= floor(eviction_fraction * n)`, k being the
    number ranked below it and n the number ranked, unless p is the last
    phase (then it is finished, not evicted).

    Returns:
        `evicted[members]` (bool).
    """
    phases = config_scores.shape[1]
    phase = config_phases[slot_config] - 1
    filled = jnp.where(jnp.isnan(config_scores), -jnp.inf, config_scores)
    column = filled.T[jnp.clip(phase, 0, phases - 1)]       # [M, budget]
    mine = filled[slot_config, jnp.clip(phase, 0, phases - 1)][:, None]
    others = jnp.arange(config_scores.shape[0])[None, :]
    ranked = config_phases[None, :] > phase[:, None]
    below = ranked & ((column < mine) | ((column == mine)
                                         & (others > slot_config[:, None])))
    below_count = jnp.sum(below, axis=1)
    evict_count = jnp.floor(eviction_fraction * jnp.sum(ranked, axis=1)
                            + 1e-4)
    return active & (phase < phases - 1) & (below_count + 1 <= evict_count)


def record(state: HyperTrickState, scores: jax.Array,
           frames: jax.Array) -> HyperTrickState:
    """The active slots' scores and frames written into the table, and
    their configurations' phase counts moved on (idle slots write
    nothing)."""
    budget = state.config_phases.shape[0]
    target = jnp.where(state.active, state.slot_config, budget)
    phase = state.config_phases[state.slot_config]
    return state.replace(
        config_scores=state.config_scores.at[target, phase].set(
            scores, mode="drop"),
        config_phases=state.config_phases.at[target].add(1, mode="drop"),
        config_frames=state.config_frames.at[target].set(frames,
                                                         mode="drop"))


def _keep_best(state: HyperTrickState, finished: jax.Array,
               scores: jax.Array) -> HyperTrickState:
    """The best finished configuration's state, kept past its slot's
    refill (ties keep the earlier)."""
    filled = jnp.where(jnp.isnan(scores), -jnp.inf, scores)
    candidates = jnp.where(finished, filled, -jnp.inf)
    slot = jnp.argmax(candidates)
    best_filled = jnp.where(jnp.isnan(state.best_score), -jnp.inf,
                            state.best_score)
    better = finished[slot] & ((state.best_config < 0)
                               | (candidates[slot] > best_filled))
    best = jax.tree.map(lambda old, new: jnp.where(better, new[slot], old),
                        state.best, state.slots)
    return state.replace(
        best=best,
        best_config=jnp.where(better, state.slot_config[slot],
                              state.best_config),
        best_score=jnp.where(better, scores[slot], state.best_score))


def _refill(init_config: Callable[[jax.Array, HParams], AgentState],
            state: HyperTrickState, freed: jax.Array
            ) -> tuple[HyperTrickState, jax.Array]:
    """Freed slots, in slot order, start the next configurations while
    the budget lasts; the rest idle.

    Returns:
        (state, `refilled[members]`).
    """
    budget = state.config_phases.shape[0]
    candidate = state.next_config + jnp.cumsum(freed) - 1
    refilled = freed & (candidate < budget)
    index = jnp.clip(candidate, 0, budget - 1)

    def fresh(slots: AgentState) -> AgentState:
        hparams = jax.tree.map(lambda x: x[index], state.config_hparams)
        return _where(refilled, jax.vmap(init_config)(
            state.config_keys[index], hparams), slots)

    slots = jax.lax.cond(jnp.any(refilled), fresh, lambda s: s,
                         state.slots)
    return state.replace(
        slots=slots,
        slot_config=jnp.where(refilled, candidate, state.slot_config),
        active=(state.active & ~freed) | refilled,
        next_config=state.next_config + jnp.sum(refilled)), refilled


def init_schedule(ht_config: HyperTrickConfig, agent: Agent,
                  space: spaces.SearchSpace,
                  key: jax.Array) -> HyperTrickState:
    """`budget` configurations drawn from the space, each with its own
    `agent.init` key; the first `members` started in the slots."""
    members, budget = ht_config.members, ht_config.budget
    sample_key, keys_key = jax.random.split(key)
    hparams = spaces.to_hparams(
        agent.config, spaces.sample(space, sample_key, budget), budget)
    keys = jax.random.split(keys_key, budget)
    slots = jax.vmap(agent.init)(
        keys[:members], jax.tree.map(lambda x: x[:members], hparams))
    return HyperTrickState(
        slots=slots, slot_config=jnp.arange(members, dtype=jnp.int32),
        active=jnp.ones((members,), bool), next_config=jnp.int32(members),
        config_keys=keys, config_hparams=hparams,
        config_phases=jnp.zeros((budget,), jnp.int32),
        config_scores=jnp.full((budget, ht_config.phases), jnp.nan,
                               jnp.float32),
        config_evicted=jnp.zeros((budget,), bool),
        config_frames=jnp.zeros((budget,), jnp.int32),
        best=jax.tree.map(lambda x: x[0], slots),
        best_config=jnp.int32(-1), best_score=jnp.float32(jnp.nan),
        boundary=jnp.int32(0))


def train_phase(ht_config: HyperTrickConfig, agent: Agent,
                slots: AgentState) -> tuple[AgentState, Metrics]:
    """`phase_updates` updates of every slot (vmapped
    `core.scan_updates`)."""
    return jax.vmap(lambda s: core.scan_updates(
        agent, s, ht_config.phase_updates))(slots)


def _skip_phase(ht_config: HyperTrickConfig, agent: Agent,
                slots: AgentState) -> tuple[AgentState, Metrics]:
    """`train_phase`'s outputs when every slot idles: the slots as they
    were, zero metrics."""
    shapes = jax.eval_shape(
        functools.partial(train_phase, ht_config, agent), slots)[1]
    return slots, jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype),
                               shapes)


def run_phase(ht_config: HyperTrickConfig, agent: Agent,
              state: HyperTrickState) -> tuple[HyperTrickState, Metrics]:
    """One phase of training, then the boundary: record the scores,
    evict by the history rule, keep the best finished state, refill the
    freed slots. See `make` for the metrics."""
    active, slot_config = state.active, state.slot_config
    trained, updates = jax.lax.cond(
        jnp.any(active), functools.partial(train_phase, ht_config, agent),
        functools.partial(_skip_phase, ht_config, agent), state.slots)
    scores = jnp.where(active, pbt.score(updates["episode_return"],
                                         ht_config.window), jnp.nan)
    frames_before = state.config_frames[slot_config]
    state = record(state.replace(slots=_where(active, trained, state.slots)),
                   scores, updates["frames"][:, -1])
    frames = jnp.where(active, state.config_frames[slot_config]
                       - frames_before, 0)
    evicted = evictions(state.config_scores, state.config_phases,
                        slot_config, active, ht_config.eviction_fraction)
    phase = state.config_phases[slot_config] - 1
    finished = active & (phase == ht_config.phases - 1)
    state = _keep_best(state, finished, scores)
    state = state.replace(config_evicted=state.config_evicted.at[
        jnp.where(evicted, slot_config, ht_config.budget)].set(
            True, mode="drop"))
    state, refilled = _refill(agent.init, state, evicted | finished)
    return state.replace(boundary=state.boundary + 1), {
        "slot_config": jnp.where(active, slot_config, -1),
        "active": active, "scores": scores, "evicted": evicted,
        "finished": finished, "refilled": refilled, "frames": frames,
        "episode_return": updates["episode_return"]}


def make(ht_config: HyperTrickConfig, agent: Agent,
         space: spaces.SearchSpace
         ) -> tuple[Callable[[jax.Array], HyperTrickState],
                    Callable[[HyperTrickState],
                             tuple[HyperTrickState, Metrics]]]:
    """HyperTrick as a pair of pure functions, after the host-side
    checks.

    Args:
        ht_config: the settings.
        agent: from an algorithm's `make` (`anneal_lr` only if its
            `num_updates` is `phases * phase_updates`).
        space: the search space (checked with `spaces.validate`).

    Returns:
        `init(key) -> HyperTrickState` (`init_schedule`) and
        `step(state) -> (state, metrics)` (`run_phase`: one phase and its
        boundary), with metrics per slot `slot_config` (-1 idle),
        `active` (trained in this phase), `scores`, `evicted`,
        `finished`, `refilled`, `frames` (stepped in this phase, 0 idle)
        and `episode_return[M, phase_updates]`.
    """
    pbt.check_agent(agent, space,
                    ht_config.phases * ht_config.phase_updates)
    return (functools.partial(init_schedule, ht_config, agent, space),
            functools.partial(run_phase, ht_config, agent))


def configurations(state: HyperTrickState) -> Metrics:
    """The configurations' table and the best one (jittable).

    Returns:
        `hparams` (a dict of `[budget]` arrays), `phases_reached`,
        `scores[budget, phases]`, `evicted`, `finished`, `frames` (what
        each stepped) and `frames_full` (its frames per phase times
        `phases`: what it would have stepped trained to the end; 0 for a
        configuration never started), `best_config`, `best_score` and
        `best_hparams`.
    """
    phases = state.config_scores.shape[1]
    per_phase = state.config_frames // jnp.maximum(state.config_phases, 1)
    hparams = {name: getattr(state.config_hparams, name)
               for name in spaces.HPARAM_NAMES}
    best = jnp.maximum(state.best_config, 0)
    return {
        "hparams": hparams, "phases_reached": state.config_phases,
        "scores": state.config_scores, "evicted": state.config_evicted,
        "finished": state.config_phases == phases,
        "frames": state.config_frames, "frames_full": per_phase * phases,
        "best_config": state.best_config, "best_score": state.best_score,
        "best_hparams": {name: value[best] for name, value in
                         hparams.items()}}


def make_train(ht_config: HyperTrickConfig, agent: Agent,
               space: spaces.SearchSpace
               ) -> Callable[[jax.Array], tuple[HyperTrickState, Metrics]]:
    """The whole schedule: `train(key) -> (state, metrics)`, `init` then
    `ht_config.boundaries` steps in one `lax.scan`. `metrics` holds the
    per-boundary metrics stacked (a leading boundary axis) and, under
    "configurations", `configurations(state)`."""
    init, step = make(ht_config, agent, space)

    def train(key: jax.Array) -> tuple[HyperTrickState, Metrics]:
        state, metrics = jax.lax.scan(lambda s, _: step(s), init(key),
                                      None, length=ht_config.boundaries)
        return state, {**metrics, "configurations": configurations(state)}

    return train


def summarise(ht_config: HyperTrickConfig, metrics: Metrics
              ) -> dict[str, Any]:
    """Host-side totals in exact integers, JSON-ready.

    Returns:
        `frames_spent` (summed over configurations), `frames_full_training`
        (every configuration trained to the end), `frames_saved`,
        `saved_fraction`, `configurations_started`, `evicted`, `finished`,
        `best_config`, `best_score`, `best_hparams`.
    """
    table = jax.device_get(metrics["configurations"])
    spent = int(np.sum(table["frames"].astype(np.int64)))
    full = int(np.sum(table["frames_full"].astype(np.int64)))
    return {
        "frames_spent": spent, "frames_full_training": full,
        "frames_saved": full - spent,
        "saved_fraction": (full - spent) / full if full else 0.0,
        "configurations_started": int(np.sum(table["phases_reached"] > 0)),
        "budget": ht_config.budget,
        "evicted": int(np.sum(table["evicted"])),
        "finished": int(np.sum(table["finished"])),
        "best_config": int(table["best_config"]),
        "best_score": float(table["best_score"]),
        "best_hparams": {name: int(value) if name == "t_max"
                         else float(value) for name, value
                         in table["best_hparams"].items()}}
