"""Population Based Training (Jaderberg et al. 2017) as one jitted program.

The method. `members` agents train side by side, each with its own
hyperparameters drawn from a search space (`spaces`). Every
`ready_updates` updates (one *generation*) all members are *ready* at
once: the population is vmapped, so the asynchronous workers of the paper
become one synchronous clock, and "ready" means "has done `ready_updates`
updates since it was last ready". Each member is then scored by the mean
of its last `score_window` updates' episode returns (`nanmean`: updates
in which no episode ended do not count; a member with no finished episode
in the window scores NaN and ranks last). Truncation selection follows:
the members ranked in the bottom `truncation` fraction (ties broken by
member index, the lower index ranking higher) each copy a member drawn
uniformly from the top `truncation` fraction (*exploit*), and the copies'
hyperparameters are perturbed (*explore*: each one x0.8 or x1.2, or
redrawn from the prior with probability 0.25; `spaces.perturb`).

What is copied. The parent's network parameters, optimiser state,
hyperparameters and `extra` (GA3C's lagged acting parameters, so the
copy acts with the policy it copied): everything that is "the learner".
Not copied: the env states and observations, the episode counters, the
PRNG key and the counters (`update`, `env_steps`). Each slot keeps its
own envs and random stream, so a copy and its parent go on sampling
independent experience (copying the key and envs would make the two
replay the same trajectories until their hyperparameters diverge, and a
population of duplicates explores nothing), and each slot's frame count
stays the frames it stepped. One consequence: the episodes running at the
copy finish under the copied policy, so their returns mix two policies;
a `score_window` shorter than `ready_updates` keeps them out of the next
score.

The last generation. At the end of generation `generations` (and of any
step called past it) the members are scored and ranked, but nobody is
copied or perturbed: the run ends there, so a copy made then would never
train, and the final population would hold duplicates of the top members
carrying explored hyperparameters nobody tried. The final state is the
members as trained; its `parents` are the identity. The key is split the
same way, so the generations before are unchanged.

The baseline. `exploit=False, explore=False` is the same program with
the selection step off: the same population drawn from the same prior,
trained for the same updates and frames, with hyperparameters fixed:
random search. That is the comparison a claim that PBT helps needs
(`shared/reference/rl-notes.md`, "Claiming that a population method
wins, honestly"). With t_max in the space the frames can differ (PBT
copies the t_max of the winners), so the metrics carry every member's
frames.

Everything between generations (scoring, ranking, the gathers over the
member axis, the perturbation) runs inside the jitted `step`; a
generation is `jax.vmap` over members of `core.scan_updates`, and
`make_train` scans `step` over the generations: one program, no host
loop.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import jax
import jax.numpy as jnp
from flax import struct

from jaxatari.agents import core
from jaxatari.agents.core import Agent, AgentState, HParams
from jaxatari.population import spaces

Metrics = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class PBTConfig:
    """PBT's settings.

    Attributes:
        members: the population size.
        ready_updates: agent updates per generation; every member is ready
            after this many.
        generations: generations `make_train` runs.
        truncation: the fraction replaced, and the fraction copied from
            (Jaderberg et al.'s 20%); `members * truncation` rounds down
            and must be >= 1, and truncation <= 0.5 keeps the two apart.
        factors: explore's multiplicative factors.
        resample_probability: explore's chance of a fresh draw from the
            prior instead of a factor.
        score_window: the recent updates a score averages (None: all the
            generation's `ready_updates`).
        exploit: copy the top members into the bottom ones.
        explore: perturb the copies' hyperparameters (needs `exploit`).
    """
    members: int
    ready_updates: int
    generations: int
    truncation: float = 0.2
    factors: tuple[float, ...] = (0.8, 1.2)
    resample_probability: float = 0.25
    score_window: int | None = None
    exploit: bool = True
    explore: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "factors", tuple(self.factors))
        self.validate()

    def validate(self) -> None:
        """Raises ValueError naming what to change."""
        for name in ("members", "ready_updates", "generations"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"pbt.{name} must be an integer >= 1, got "
                                 f"{value!r}")
        if not 0.0 < self.truncation <= 0.5:
            raise ValueError(f"pbt.truncation must be in (0, 0.5] (the "
                             f"bottom and top fractions must not overlap), "
                             f"got {self.truncation}")
        if self.truncated < 1:
            raise ValueError(
                f"a population too small for the truncation fractions: "
                f"members * truncation = {self.members} * {self.truncation}"
                f" < 1 member; use members >= {_members_needed(self)} or "
                f"truncation >= {1 / self.members:.3g}")
        if not self.factors or any(not f > 0 for f in self.factors):
            raise ValueError(f"pbt.factors must be a non-empty list of "
                             f"positive factors, got {self.factors}")
        if not 0.0 <= self.resample_probability <= 1.0:
            raise ValueError(f"pbt.resample_probability must be in [0, 1], "
                             f"got {self.resample_probability}")
        if self.score_window is not None and not (
                isinstance(self.score_window, int)
                and 1 <= self.score_window <= self.ready_updates):
            raise ValueError(f"pbt.score_window must be an integer in [1, "
                             f"ready_updates = {self.ready_updates}] or "
                             f"None, got {self.score_window!r}")
        if self.explore and not self.exploit:
            raise ValueError("pbt.explore perturbs the members exploit "
                             "copied; with exploit=False set explore=False "
                             "too (both off: the random-search baseline)")

    @property
    def truncated(self) -> int:
        """Members replaced (and members copied from) per generation."""
        return int(self.members * self.truncation + 1e-9)

    @property
    def window(self) -> int:
        """The updates a score averages."""
        return self.ready_updates if self.score_window is None \
            else self.score_window


def _members_needed(config: PBTConfig) -> int:
    count = 1
    while count * config.truncation + 1e-9 < 1:
        count += 1
    return count


@struct.dataclass
class PopulationState:
    """The whole population between generations.

    Attributes:
        members: `AgentState` batched over the member axis.
        key: the PRNG key for selection and perturbation.
        generation: generations done (int32).
        parents: `[members]`, whom each member copied at the last
            generation's end (itself if nobody; the identity at init).
        scores: `[members]`, the last generation's scores (NaN at init).
    """
    members: AgentState
    key: jax.Array
    generation: jax.Array
    parents: jax.Array
    scores: jax.Array


def check_agent(agent: Agent, space: spaces.SearchSpace,
                updates: int) -> None:
    """Host-side checks that the space fits the agent and that a learning
    rate schedule matches the run's length.

    Raises:
        ValueError: from `spaces.validate`, or an `anneal_lr` schedule
            over `config.num_updates` that is not the run's `updates`.
    """
    spaces.validate(space, agent.config)
    config = agent.config
    if config.anneal_lr and config.num_updates != updates:
        raise ValueError(
            f"agent config anneals the learning rate over num_updates = "
            f"{config.num_updates} updates but the population runs "
            f"{updates}; set anneal_lr=False or total_steps = {updates} * "
            f"num_envs * num_steps")


def score(episode_returns: jax.Array, window: int) -> jax.Array:
    """Each member's score: the NaN-ignoring mean of its last `window`
    updates' mean episode returns (`[members, updates]` in; NaN for a
    member with no finished episode in the window)."""
    return jnp.nanmean(episode_returns[..., -window:], axis=-1)


def rank(scores: jax.Array) -> jax.Array:
    """Member indices best first: by score descending, NaN last, ties by
    index (a stable sort)."""
    filled = jnp.where(jnp.isnan(scores), -jnp.inf, scores)
    return jnp.argsort(-filled, stable=True)


def select_parents(scores: jax.Array, key: jax.Array,
                   truncated: int) -> jax.Array:
    """Truncation selection: each of the `truncated` lowest-ranked members
    gets a parent drawn uniformly (with replacement) from the
    `truncated` highest-ranked; everyone else is their own parent.

    Returns:
        `parents[members]` (int32).
    """
    order = rank(scores)
    top, bottom = order[:truncated], order[-truncated:]
    picks = jax.random.randint(key, (truncated,), 0, truncated)
    parents = jnp.arange(scores.shape[0], dtype=jnp.int32)
    return parents.at[bottom].set(top[picks].astype(jnp.int32))


def copy_from_parents(members: AgentState, parents: jax.Array) -> AgentState:
    """Member i takes member `parents[i]`'s parameters, optimiser state,
    hyperparameters and `extra` (a gather over the member axis; members
    that are their own parents come back bit for bit). Env states,
    observations, episode counters, keys and counters stay each slot's
    own."""
    def gather(tree: Any) -> Any:
        return jax.tree.map(lambda x: x[parents], tree)

    return members.replace(params=gather(members.params),
                           opt_state=gather(members.opt_state),
                           hparams=gather(members.hparams),
                           extra=gather(members.extra))


def explore(pbt_config: PBTConfig, space: spaces.SearchSpace,
            key: jax.Array, hparams: HParams,
            replaced: jax.Array) -> HParams:
    """Perturbs the space's hyperparameters of the `replaced` members
    (`spaces.perturb`); the other members and the fields outside the
    space keep their values bit for bit."""
    perturbed = spaces.perturb(space, key,
                               spaces.from_hparams(hparams, tuple(space)),
                               pbt_config.factors,
                               pbt_config.resample_probability)
    explored = spaces.replace_hparams(hparams, perturbed)
    return jax.tree.map(lambda new, old: jnp.where(replaced, new, old),
                        explored, hparams)


def exploit_and_explore(pbt_config: PBTConfig, space: spaces.SearchSpace,
                        members: AgentState, scores: jax.Array,
                        key: jax.Array, final: jax.Array | bool = False
                        ) -> tuple[AgentState, jax.Array]:
    """The between-generations step: select, copy, perturb (each as the
    config switches it on).

    Args:
        final: (traced) the run's last generation: every member is its
            own parent, so nothing is copied or perturbed.

    Returns:
        (members, `parents[members]`).
    """
    count = scores.shape[0]
    parents = jnp.arange(count, dtype=jnp.int32)
    if not pbt_config.exploit:
        return members, parents
    select_key, explore_key = jax.random.split(key)
    parents = jnp.where(final, parents, select_parents(
        scores, select_key, pbt_config.truncated))
    members = copy_from_parents(members, parents)
    if pbt_config.explore:
        replaced = parents != jnp.arange(count)
        members = members.replace(hparams=explore(
            pbt_config, space, explore_key, members.hparams, replaced))
    return members, parents


def _hparams_dict(hparams: HParams) -> dict[str, jax.Array]:
    return {name: getattr(hparams, name) for name in spaces.HPARAM_NAMES}


def init_population(pbt_config: PBTConfig, agent: Agent,
                    space: spaces.SearchSpace,
                    key: jax.Array) -> PopulationState:
    """A fresh population: hyperparameters drawn from the space (the
    config's defaults for the other fields), `jax.vmap(agent.init)` with
    a key per member."""
    count = pbt_config.members
    sample_key, members_key, key = jax.random.split(key, 3)
    hparams = spaces.to_hparams(
        agent.config, spaces.sample(space, sample_key, count), count)
    members = jax.vmap(agent.init)(jax.random.split(members_key, count),
                                   hparams)
    return PopulationState(
        members=members, key=key, generation=jnp.int32(0),
        parents=jnp.arange(count, dtype=jnp.int32),
        scores=jnp.full((count,), jnp.nan, jnp.float32))


def generation(pbt_config: PBTConfig, agent: Agent,
               space: spaces.SearchSpace, state: PopulationState
               ) -> tuple[PopulationState, Metrics]:
    """One generation: `ready_updates` updates of every member (vmapped
    `core.scan_updates`), scores, then `exploit_and_explore` (not at the
    last generation); see `make` for the metrics."""
    members, updates = jax.vmap(lambda s: core.scan_updates(
        agent, s, pbt_config.ready_updates))(state.members)
    scores = score(updates["episode_return"], pbt_config.window)
    key, select_key = jax.random.split(state.key)
    trained = members.hparams
    final = state.generation + 1 >= pbt_config.generations
    members, parents = exploit_and_explore(pbt_config, space, members,
                                           scores, select_key, final)
    metrics = {
        "generation": state.generation + 1, "scores": scores,
        "parents": parents,
        "replaced": parents != jnp.arange(pbt_config.members),
        "trained_hparams": _hparams_dict(trained),
        "hparams": _hparams_dict(members.hparams),
        "episode_return": updates["episode_return"],
        "frames": updates["frames"][:, -1],
        "env_steps": updates["env_steps"][:, -1],
        "finite": jnp.all(updates["finite"], axis=-1)}
    state = PopulationState(members=members, key=key,
                            generation=state.generation + 1,
                            parents=parents, scores=scores)
    return state, metrics


def make(pbt_config: PBTConfig, agent: Agent, space: spaces.SearchSpace,
         callback: Callable[[Metrics], None] | None = None
         ) -> tuple[Callable[[jax.Array], PopulationState],
                    Callable[[PopulationState],
                             tuple[PopulationState, Metrics]]]:
    """PBT as a pair of pure functions, after the host-side checks.

    Args:
        pbt_config: the population's settings.
        agent: from an algorithm's `make` (`anneal_lr` only if its
            `num_updates` is `generations * ready_updates`).
        space: the search space (checked with `spaces.validate`).
        callback: called on the host with each generation's metrics
            (`jax.debug.callback`, unordered); None adds no callback.

    Returns:
        `init(key) -> PopulationState` (`init_population`) and
        `step(state) -> (state, metrics)` (`generation`), with metrics
        `scores[M]`, `parents[M]`, `replaced[M]`, `trained_hparams` (the
        hparams the scores belong to) and `hparams` (after exploit and
        explore; dicts of `[M]` arrays), `episode_return[M,
        ready_updates]`, `frames[M]` and `env_steps[M]` (cumulative per
        slot), `finite[M]` and `generation`.
    """
    check_agent(agent, space,
                pbt_config.generations * pbt_config.ready_updates)

    def init(key: jax.Array) -> PopulationState:
        return init_population(pbt_config, agent, space, key)

    def step(state: PopulationState) -> tuple[PopulationState, Metrics]:
        state, metrics = generation(pbt_config, agent, space, state)
        if callback is not None:
            jax.debug.callback(callback, metrics)
        return state, metrics

    return init, step


def run(step: Callable[[PopulationState], tuple[PopulationState, Metrics]],
        state: PopulationState, generations: int
        ) -> tuple[PopulationState, Metrics]:
    """`generations` steps in one `lax.scan`, metrics stacked over them
    (a leading generation axis). Jit it, or call it under jit; a runner
    that checkpoints calls it a chunk of generations at a time."""
    return jax.lax.scan(lambda s, _: step(s), state, None,
                        length=generations)


def make_train(pbt_config: PBTConfig, agent: Agent,
               space: spaces.SearchSpace,
               callback: Callable[[Metrics], None] | None = None
               ) -> Callable[[jax.Array], tuple[PopulationState, Metrics]]:
    """The whole run: `train(key) -> (state, metrics)`, `init` then
    `pbt_config.generations` generations in one scan (see `make`)."""
    init, step = make(pbt_config, agent, space, callback)

    def train(key: jax.Array) -> tuple[PopulationState, Metrics]:
        return run(step, init(key), pbt_config.generations)

    return train
