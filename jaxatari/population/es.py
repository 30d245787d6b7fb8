"""Evolution strategies over a policy network's parameters, in one program.

Two strategies from evosax 0.3 (`evosax.algorithms`), chosen by
`ESConfig.strategy`:

* "open_es": OpenAI-ES (Salimans et al. 2017, "Evolution Strategies as a
  Scalable Alternative to Reinforcement Learning", arXiv:1703.03864),
  evosax's `Open_ES`: an isotropic Gaussian `N(centre, sigma^2 I)` with a
  fixed `sigma`, mirrored (antithetic) samples, centred-rank fitness
  shaping, and the search-gradient estimate `sum_i f_i eps_i / (n sigma)`
  fed to Adam (or SGD).
* "snes": separable NES (Schaul, Glasmachers & Schmidhuber 2011, "High
  Dimensions and Heavy Tails for Natural Evolution Strategies"; Wierstra
  et al. 2014, "Natural Evolution Strategies", JMLR 15), evosax's `SNES`:
  a diagonal Gaussian whose per-coordinate standard deviations adapt
  multiplicatively, rank-based utility weights, a natural-gradient step on
  the centre (SGD, learning rate 1 by default).

The search space is the flattened parameters of `networks.make_network`'s
actor-critic, value head included: only the logits enter the fitness, so
the value coordinates drift as noise. Both strategies are separable
(per-coordinate updates from the same shaped fitness), so those coordinates
do not change how the policy's coordinates move; they only cost their
share of the noise sampling.

Fitness of a candidate: the mean over `num_envs` envs (one `BatchedEnv`,
vmapped) of the return of each env's *first* episode in a rollout of at
most `rollout_steps` steps; an episode still running at the horizon counts
with the return it has accumulated (a truncated return). Counting only the
first episode keeps short episodes from weighing more than long ones (a
pool of all completed episodes would be biased towards the short ones).
When `rollout_steps` is at least the env's time limit (CartPole-v1: 500)
every episode completes and the fitness is the exact mean return of
`num_envs` episodes. The rollout is a `lax.scan` of exactly
`rollout_steps` steps, not a `while_loop` that stops once every first
episode has ended: on a GPU each while iteration waits on the host for its
predicate (XLA's `WhileThunk`), while a scan's trip count is static. Steps
after an env's first episode are computed and ignored. Returns sum `StepResult.score` (unclipped rewards;
whole games, lost lives do not cut them).

Actions are greedy (`argmax` of the logits) by default, as in Salimans et
al.; with `greedy=False` they are sampled. With `common_random_numbers`
(the default) every candidate of a generation rolls out from the same
reset key and the same action-sampling key (common random numbers, a
variance reduction: candidates differ only by their parameters); a fresh
key each generation. Without it each candidate gets its own key.

evosax minimises, so the candidates' returns are negated before `tell`;
every figure this module reports is a return (higher is better).

One program: `make_train(...)` gives `train(key)`, a `lax.scan` over
`generations` generations of ask -> a `vmap` over candidates of the
rollout -> tell -> a greedy/sampled evaluation of the centre on fresh
episodes (`eval_envs` envs, its own key). `jax.jit(train)` compiles it
once.

Keys: `init(key)` splits `key` into the network's initialisation (which
is the first centre), the strategy's init and the loop's key; each
generation splits the loop key into ask, tell, fitness and evaluation
keys. Env `i` of a rollout with key `k` resets with
`jax.random.split(jax.random.split(k)[1], n)[i]` (`rollout_returns`).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from evosax.algorithms import SNES, Open_ES
from flax import struct

from jaxatari.agents import core, networks

Metrics = dict[str, jax.Array]
Policy = Callable[[Any, jax.Array, jax.Array], jax.Array]
"""(params, obs `[N, ...]`, key) -> actions `[N]`."""

STRATEGIES = ("open_es", "snes")
OPTIMIZERS = ("auto", "adam", "sgd")
_DEFAULT_LR = {"open_es": 0.05, "snes": 1.0}
_DEFAULT_OPTIMIZER = {"open_es": "adam", "snes": "sgd"}


@dataclasses.dataclass(frozen=True)
class ESConfig:
    """Static settings of an evolution-strategies run.

    Attributes:
        strategy: "open_es" (OpenAI-ES) or "snes" (separable NES).
        population_size: candidates per generation (even for "open_es":
            evosax's `Open_ES` requires it, its samples come in mirrored
            pairs).
        generations: generations `train` runs.
        num_envs: envs per candidate's fitness rollout.
        rollout_steps: the rollout's horizon, in agent steps per env.
        eval_envs: envs for the centre's evaluation each generation.
        sigma: the search distribution's standard deviation: fixed for
            "open_es", the initial per-coordinate one for "snes".
        learning_rate: the centre's step size (None: 0.05 for "open_es"
            with Adam, 1.0 for "snes", the natural-gradient step).
        sigma_learning_rate: "snes" only: the step size of the log
            standard deviations (None: evosax's `(3 + ln d) / (5 sqrt d)`
            for `d` parameters).
        optimizer: the centre's optimiser, "adam", "sgd", or "auto" (Adam
            for "open_es", SGD for "snes").
        weight_decay: decay of the centre towards 0 per step (decoupled,
            AdamW's, with Adam; added to the gradient with SGD); 0 is off.
        antithetic: "open_es" only: mirrored samples `centre +- sigma eps`
            (evosax's `SNES` always samples plainly).
        greedy: act by `argmax` of the logits (else sample them).
        common_random_numbers: all candidates of a generation share the
            rollout key (env resets and action sampling).
        network: `networks.make_network`'s kind.
    """
    strategy: str = "open_es"
    population_size: int = 64
    generations: int = 100
    num_envs: int = 4
    rollout_steps: int = 500
    eval_envs: int = 8
    sigma: float = 0.1
    learning_rate: float | None = None
    sigma_learning_rate: float | None = None
    optimizer: str = "auto"
    weight_decay: float = 0.0
    antithetic: bool = True
    greedy: bool = True
    common_random_numbers: bool = True
    network: str = "auto"

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raises ValueError naming the first field out of range."""
        core.check_choice("strategy", self.strategy, STRATEGIES)
        for name in ("population_size", "generations", "num_envs",
                     "rollout_steps", "eval_envs"):
            core.check_int(name, getattr(self, name),
                       2 if name == "population_size" else 1)
        if self.strategy == "open_es" and self.population_size % 2:
            raise ValueError(f"config.population_size must be even for "
                             f"open_es (mirrored pairs), got "
                             f"{self.population_size}")
        _check_positive("sigma", self.sigma)
        for name in ("learning_rate", "sigma_learning_rate"):
            if getattr(self, name) is not None:
                _check_positive(name, getattr(self, name))
        if self.sigma_learning_rate is not None and self.strategy != "snes":
            raise ValueError("config.sigma_learning_rate applies to snes "
                             "only (open_es keeps sigma fixed)")
        core.check_choice("optimizer", self.optimizer, OPTIMIZERS)
        if not (math.isfinite(self.weight_decay) and self.weight_decay >= 0):
            raise ValueError(f"config.weight_decay must be a finite number "
                             f">= 0, got {self.weight_decay!r}")
        for name in ("antithetic", "greedy", "common_random_numbers"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"config.{name} must be a bool, got "
                                 f"{getattr(self, name)!r}")
        core.check_choice("network", self.network, networks.NETWORKS)

    @property
    def centre_learning_rate(self) -> float:
        """The learning rate in use (the strategy's default if None)."""
        if self.learning_rate is None:
            return _DEFAULT_LR[self.strategy]
        return float(self.learning_rate)

    @property
    def centre_optimizer(self) -> str:
        """The optimiser in use, "adam" or "sgd"."""
        if self.optimizer == "auto":
            return _DEFAULT_OPTIMIZER[self.strategy]
        return self.optimizer

    def to_dict(self) -> dict[str, Any]:
        """The config as JSON-ready values, with its class name."""
        return {"algo_config": type(self).__name__,
                **dataclasses.asdict(self)}


def _check_positive(name: str, value: Any) -> None:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not \
        isinstance(value, (bool, np.bool_))
    if not (ok and math.isfinite(value) and value > 0):
        raise ValueError(f"config.{name} must be a finite number > 0, "
                         f"got {value!r}")


@struct.dataclass
class ESState:
    """An ES run's whole state.

    Attributes:
        strategy_state: evosax's state (flat centre, sigma, optimiser).
        centre: the centre as network parameters (kept equal to the
            strategy's mean; `centre_params`).
        key: the PRNG key for the next generation.
        generation: generations done.
    """
    strategy_state: Any
    centre: Any
    key: jax.Array
    generation: jax.Array


class ES(NamedTuple):
    """`init(key) -> state` and `step(state) -> (state, metrics)`, one
    generation. `fitness(params, key) -> (fitness, env steps)` is one
    candidate's fitness as `step` computes it (`num_envs` envs);
    `evaluate(params, key) -> returns [eval_envs]` rolls a policy out as
    the centre's evaluation does. `config`, `env` (the fitness rollout's
    `BatchedEnv`), `network`, `strategy` (the evosax algorithm) and
    `strategy_params` describe it."""
    init: Callable[[jax.Array], ESState]
    step: Callable[[ESState], tuple[ESState, Metrics]]
    fitness: Callable[[Any, jax.Array], tuple[jax.Array, jax.Array]]
    evaluate: Callable[[Any, jax.Array], jax.Array]
    config: ESConfig
    env: core.BatchedEnv
    network: Any
    strategy: Any
    strategy_params: Any


def make_policy(network: Any, greedy: bool) -> Policy:
    """The actions of a network's categorical policy.

    Args:
        network: an actor-critic returning `(logits, value)`.
        greedy: `argmax` of the logits, else a sample from them.
    """
    def policy(params: Any, obs: jax.Array, key: jax.Array) -> jax.Array:
        logits, _ = network.apply(params, obs)
        if greedy:
            return jnp.argmax(logits, axis=-1)
        return jax.random.categorical(key, logits)

    return policy


def rollout_returns(env: core.BatchedEnv, policy: Policy, params: Any,
                    key: jax.Array, max_steps: int
                    ) -> tuple[jax.Array, jax.Array]:
    """Each env's first-episode return under a policy.

    `key` splits into (loop key, reset key); `env.reset(reset_key)`, then
    each step splits the loop key into (loop, action, env) keys. The scan
    runs `max_steps` steps; each env's return stops counting when its first
    episode ends, and an episode still running then counts its return so
    far. The step count is the steps until every first episode ended.

    Args:
        env: the batched env (`env.num_envs` envs).
        policy: `(params, obs, key) -> actions`.
        params: the policy's parameters.
        key: the rollout's key.
        max_steps: the horizon (static).

    Returns:
        (returns `[num_envs]` float32, steps taken: int32 scalar).
    """
    loop_key, reset_key = jax.random.split(key)
    obs, env_state = env.reset(reset_key)
    zeros = jnp.zeros((env.num_envs,), jnp.float32)
    ended = jnp.zeros((env.num_envs,), bool)

    def one_step(carry, _):
        t, key, env_state, obs, returns, ended = carry
        key, act_key, env_key = jax.random.split(key, 3)
        step = env.step(env_key, env_state, policy(params, obs, act_key))
        returns = returns + jnp.where(ended, 0.0, step.score)
        t = t + (~jnp.all(ended)).astype(jnp.int32)
        return (t, key, step.env_state, step.obs, returns,
                ended | step.done), None

    carry = (jnp.int32(0), loop_key, env_state, obs, zeros, ended)
    (t, _, _, _, returns, _), _ = jax.lax.scan(one_step, carry, None,
                                               length=max_steps)
    return returns, t


def make_strategy(config: ESConfig, solution: Any) -> tuple[Any, Any]:
    """The evosax algorithm and its params for a solution template.

    Args:
        config: the run's settings.
        solution: a pytree shaped as one candidate (the network's params).

    Returns:
        (algorithm, params): `Open_ES` or `SNES` from evosax 0.3.
    """
    rate = config.centre_learning_rate
    if config.centre_optimizer == "adam":
        optimizer = optax.adamw(rate, weight_decay=config.weight_decay)
    else:
        optimizer = optax.chain(optax.add_decayed_weights(
            config.weight_decay), optax.sgd(rate))
    size = config.population_size
    if config.strategy == "open_es":
        strategy = Open_ES(size, solution,
                           use_antithetic_sampling=config.antithetic,
                           optimizer=optimizer,
                           std_schedule=optax.constant_schedule(
                               config.sigma))
        return strategy, strategy.default_params
    strategy = SNES(size, solution, optimizer=optimizer)
    params = strategy.default_params.replace(
        std_init=jnp.float32(config.sigma))
    if config.sigma_learning_rate is not None:
        params = params.replace(
            lr_std_init=jnp.float32(config.sigma_learning_rate))
    return strategy, params


def _rollout_keys(config: ESConfig, key: jax.Array) -> jax.Array:
    """One rollout key per candidate (the same one under common random
    numbers)."""
    if config.common_random_numbers:
        return jnp.broadcast_to(key, (config.population_size,) + key.shape)
    return jax.random.split(key, config.population_size)


def _summary(fitness: jax.Array, centre_return: jax.Array,
             strategy_state: Any) -> Metrics:
    return {"mean_fitness": jnp.mean(fitness),
            "max_fitness": jnp.max(fitness),
            "median_fitness": jnp.median(fitness),
            "min_fitness": jnp.min(fitness),
            "centre_return": centre_return,
            "best_fitness": -strategy_state.best_fitness,
            "sigma": jnp.mean(strategy_state.std)}


def make(config: ESConfig, env: Any, env_params: Any) -> ES:
    """ES for an env in the gymnax convention.

    Args:
        config: the run's settings.
        env, env_params: a gymnax-style env with discrete actions (a
            jaxatari `make_atari` env, unbatched here, or any gymnax env)
            and its params.

    Returns:
        `ES(init, step, fitness, evaluate, ...)`; `step` is one
        generation, its metrics (scalars): `mean_fitness`, `max_fitness`,
        `median_fitness`, `min_fitness` (the population's), `centre_return`
        (the mean return of the centre the population was sampled around,
        on `eval_envs` fresh episodes), `best_fitness` (the best candidate
        so far), `sigma` (the mean standard deviation), `generation`
        (generations done after it) and `env_steps` (agent steps this
        generation, fitness rollouts and evaluation, summed over envs).
    """
    single = env.env if hasattr(env, "num_envs") and hasattr(env, "env") \
        else env
    batched = core.BatchedEnv(single, env_params, config.num_envs)
    eval_env = core.BatchedEnv(single, env_params, config.eval_envs)
    network = networks.make_network(config.network, batched.obs_shape,
                                     batched.num_actions)
    policy = make_policy(network, config.greedy)
    obs = jnp.zeros((1,) + batched.obs_shape, batched.obs_dtype)
    template = jax.eval_shape(network.init, jax.random.key(0), obs)
    template = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), template)
    strategy, strategy_params = make_strategy(config, template)

    def fitness(params: Any, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        returns, steps = rollout_returns(batched, policy, params, key,
                                         config.rollout_steps)
        return jnp.mean(returns), steps * config.num_envs

    def evaluate(params: Any, key: jax.Array) -> jax.Array:
        return rollout_returns(eval_env, policy, params, key,
                               config.rollout_steps)[0]

    def init(key: jax.Array) -> ESState:
        key, net_key, strategy_key = jax.random.split(key, 3)
        params = network.init(net_key, obs)
        state = strategy.init(strategy_key, params, strategy_params)
        return ESState(strategy_state=state, centre=params, key=key,
                       generation=jnp.int32(0))

    def step(state: ESState) -> tuple[ESState, Metrics]:
        key, ask_key, tell_key, fit_key, eval_key = jax.random.split(
            state.key, 5)
        population, strategy_state = strategy.ask(
            ask_key, state.strategy_state, strategy_params)
        fit, steps = jax.vmap(fitness)(population,
                                       _rollout_keys(config, fit_key))
        eval_returns, eval_steps = rollout_returns(
            eval_env, policy, state.centre, eval_key, config.rollout_steps)
        strategy_state, _ = strategy.tell(tell_key, population, -fit,
                                          strategy_state, strategy_params)
        metrics = _summary(fit, jnp.mean(eval_returns), strategy_state)
        state = ESState(strategy_state=strategy_state,
                        centre=strategy.get_mean(strategy_state), key=key,
                        generation=state.generation + 1)
        return state, {**metrics, "generation": state.generation,
                       "env_steps": jnp.sum(steps)
                       + eval_steps * config.eval_envs}

    return ES(init, step, fitness, evaluate, config, batched, network,
              strategy, strategy_params)


def make_train(config: ESConfig, env: Any, env_params: Any
               ) -> Callable[[jax.Array], tuple[ESState, Metrics]]:
    """`train(key) -> (state, metrics)`: `config.generations` generations
    in one `lax.scan`, metrics stacked over them (see `make`).

    Args:
        config, env, env_params: as `make`.
    """
    es = make(config, env, env_params)

    def train(key: jax.Array) -> tuple[ESState, Metrics]:
        return jax.lax.scan(lambda state, _: es.step(state), es.init(key),
                            None, length=config.generations)

    return train


def centre_params(state: ESState) -> Any:
    """The search distribution's centre as network parameters: the policy
    ES has found (apply it with `ES.network`; act greedily, as the
    fitness does by default)."""
    return state.centre
