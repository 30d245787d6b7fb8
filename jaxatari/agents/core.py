"""What the actor-critic agents share: hyperparameters, the batched env,
the rollout, the optimiser step, the policy-gradient loss and `train`.

An agent is a pair of pure functions, in the optax style:

* `init(key, hparams) -> AgentState`: network parameters, optimiser
  state, `num_envs` reset envs and the episode counters;
* `update(state) -> (state, metrics)`: one rollout of `num_steps` steps
  and its learning step.

`hparams` (`HParams`) is a pytree of arrays that lives in the state, so
`jax.vmap(train)` over a batch of them trains a population in one
program, and population methods can rewrite a member's hyperparameters
between updates. Everything that sets a shape (env count, rollout length,
network, minibatches) is the static `Config`.

t_max, the n-step length, varies per member up to the static rollout
length `num_steps`: every update runs `num_steps` steps, and steps
`t >= hparams.t_max` are masked. A masked step leaves the envs as they
were (a select over the env state), counts no frames and weighs nothing
in the loss, and the taken steps bootstrap from the observation after the
last taken step. So an A2C or GA3C member with t_max 5 under a rollout of
20 learns as a rollout of 5 would (one update per 5 steps, equal to float
rounding), at the compute cost of 20: the price of a shared program is
the slowest member's length. PPO with one minibatch does too; with
several, the masked samples spread over the shuffled minibatches, so its
minibatches differ from a 5-step rollout's (the same expected update,
not the same numbers). Truncation (a time limit) is treated as an
episode end, without bootstrapping, as PureJaxRL and CleanRL do.

Frames: `metrics["env_steps"]` counts agent steps summed over envs;
`metrics["frames"]` multiplies them by the env's frameskip (emulated
Atari frames, ALE's and CuLE's unit; 1 for gymnax envs).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import struct

from jaxatari import wrappers
from jaxatari.agents import networks

Metrics = dict[str, jax.Array]


@struct.dataclass
class HParams:
    """The hyperparameters a population may vary: scalars (or, under
    vmap, one per member). Each algorithm reads the ones it uses: PPO
    all but t_max's role as n-step length; A2C and GA3C ignore
    `gae_lambda` (A2C) and `clip_eps`."""
    learning_rate: jax.Array
    gamma: jax.Array
    gae_lambda: jax.Array
    ent_coef: jax.Array
    vf_coef: jax.Array
    clip_eps: jax.Array
    max_grad_norm: jax.Array
    t_max: jax.Array


_HPARAM_RANGES = {
    "learning_rate": (0.0, math.inf, False), "gamma": (0.0, 1.0, True),
    "gae_lambda": (0.0, 1.0, True), "ent_coef": (0.0, math.inf, True),
    "vf_coef": (0.0, math.inf, True), "clip_eps": (0.0, math.inf, False),
    "max_grad_norm": (0.0, math.inf, True)}


def _check_range(name: str, value: Any, low: float, high: float,
                 low_closed: bool, what: str) -> None:
    array = np.asarray(value, np.float64)
    ok = (array >= low) if low_closed else (array > low)
    if not np.all(ok & (array <= high) & np.isfinite(array)):
        bracket = "[" if low_closed else "("
        raise ValueError(f"{what}{name} must be in {bracket}{low}, {high}], "
                         f"got {value}")


@dataclasses.dataclass(frozen=True)
class Config:
    """Static settings shared by the actor-critic agents (each algorithm's
    config subclasses this with its own defaults).

    Attributes:
        num_envs: envs stepped in parallel.
        num_steps: the rollout length per update (the largest t_max).
        total_steps: agent steps for `train`, summed over envs; it sets the
            update count, `total_steps // (num_envs * num_steps)`.
        network: `networks.make_network`'s kind.
        optimizer: "adam" (eps `adam_eps`) or "rmsprop" (TF/baselines
            style: decay `rms_decay`, eps `rms_eps` inside the square root,
            mean square starting at 1).
        anneal_lr: decay the learning rate linearly to 0 over the updates.
        life_loss_terminal: where the env reports `info["life_lost"]`
            (jaxatari's Atari wrappers), a lost life cuts the returns as
            an episode end does while the game plays on (ale-py's
            `life_loss_info`, SB3's `EpisodicLifeEnv`, EnvPool's
            `episodic_life`); episode returns still count whole games.
        reward_clip: clip rewards to [-c, c] for learning (None: as the
            env gives them). The Atari preset clips already.
        loss_reduction: "mean" or "sum" over the batch's steps.
        learning_rate ... max_grad_norm: the default `HParams` (t_max
            defaults to `num_steps`). `max_grad_norm` 0 turns clipping off.
    """
    num_envs: int = 8
    num_steps: int = 128
    total_steps: int = 10_000_000
    network: str = "auto"
    optimizer: str = "adam"
    adam_eps: float = 1e-5
    rms_decay: float = 0.99
    rms_eps: float = 1e-5
    anneal_lr: bool = False
    life_loss_terminal: bool = True
    reward_clip: float | None = None
    loss_reduction: str = "mean"
    learning_rate: float = 2.5e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    clip_eps: float = 0.1
    max_grad_norm: float = 0.5

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raises ValueError naming the first field out of range."""
        for name in ("num_envs", "num_steps", "total_steps"):
            check_int(name, getattr(self, name), 1)
        check_choice("network", self.network, networks.NETWORKS)
        check_choice("optimizer", self.optimizer, ("adam", "rmsprop"))
        check_choice("loss_reduction", self.loss_reduction, ("mean", "sum"))
        for name in ("adam_eps", "rms_eps"):
            _check_range(name, getattr(self, name), 0.0, math.inf, False,
                         "config.")
        _check_range("rms_decay", self.rms_decay, 0.0, 1.0, False, "config.")
        if self.reward_clip is not None:
            _check_range("reward_clip", self.reward_clip, 0.0, math.inf,
                         False, "config.")
        for name, (low, high, closed) in _HPARAM_RANGES.items():
            _check_range(name, getattr(self, name), low, high, closed,
                         "config.")
        if self.num_updates < 1:
            raise ValueError(
                f"config.total_steps ({self.total_steps}) is below one "
                f"update (num_envs * num_steps = "
                f"{self.num_envs * self.num_steps})")

    @property
    def num_updates(self) -> int:
        """The updates `train` runs."""
        return self.total_steps // (self.num_envs * self.num_steps)

    def hparams(self, **overrides: Any) -> HParams:
        """The default hyperparameters, with `overrides` (float32 scalars,
        t_max int32); checked against `check_hparams`."""
        values = {name: overrides.pop(name, getattr(self, name))
                  for name in _HPARAM_RANGES}
        t_max = overrides.pop("t_max", self.num_steps)
        if overrides:
            raise ValueError(f"unknown hyperparameters {sorted(overrides)}; "
                             f"known: {sorted(_HPARAM_RANGES) + ['t_max']}")
        hparams = HParams(**{k: jnp.float32(v) for k, v in values.items()},
                          t_max=jnp.int32(t_max))
        check_hparams(hparams, self)
        return hparams

    def to_dict(self) -> dict[str, Any]:
        """The config as JSON-ready values, with its class name."""
        return {"algo_config": type(self).__name__,
                **dataclasses.asdict(self)}


def check_int(name: str, value: Any, low: int) -> None:
    """Raises ValueError naming `config.<name>` unless `value` is an
    integer (not a bool) of at least `low`."""
    if (isinstance(value, (bool, np.bool_))
            or not isinstance(value, (int, np.integer)) or value < low):
        raise ValueError(f"config.{name} must be an integer >= {low}, "
                         f"got {value!r}")


def check_choice(name: str, value: Any, choices: tuple) -> None:
    """Raises ValueError naming `config.<name>` unless `value` is one of
    `choices`."""
    if value not in choices:
        raise ValueError(f"config.{name} must be one of {list(choices)}, "
                         f"got {value!r}")


def check_hparams(hparams: HParams, config: Config) -> None:
    """Host-side range checks (any batch shape); skipped under tracing.

    Raises:
        ValueError: naming the hyperparameter out of range.
    """
    if any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(hparams)):
        return
    for name, (low, high, closed) in _HPARAM_RANGES.items():
        _check_range(name, getattr(hparams, name), low, high, closed,
                     "hparams.")
    t_max = np.asarray(hparams.t_max)
    if not np.all((t_max >= 1) & (t_max <= config.num_steps)):
        raise ValueError(f"hparams.t_max must be in [1, config.num_steps = "
                         f"{config.num_steps}], got {hparams.t_max}")


class StepResult(NamedTuple):
    """One batched env step, normalised across env APIs."""
    obs: jax.Array
    env_state: Any
    reward: jax.Array        # what the agent learns from
    score: jax.Array         # what counts in the episode's return
    done: jax.Array          # the episode ended (the env reset itself)
    learn_done: jax.Array    # cut the returns here (done, or a lost life)


class BatchedEnv:
    """`num_envs` copies of a gymnax-convention env, auto-resetting.

    Takes any env with `reset(key, params) -> (obs, state)` and `step(key,
    state, action, params)` returning gymnax's 5-tuple `(obs, state,
    reward, done, info)` (jaxatari, gymnax < 1) or gymnax 1.x's 6-tuple
    `(obs, state, reward, terminated, truncated, info)`. A jaxatari
    `VecEnv` (`make_atari`) is unwrapped to its single env, and batched
    again here as `VecEnv` batches it (`VecEnv.step_each`: a jaxatari
    env's auto-resets for the done envs alone on the CPU, any other env's
    `step` vmapped).
    """

    def __init__(self, env: Any, env_params: Any, num_envs: int,
                 life_loss_terminal: bool = True):
        if hasattr(env, "num_envs") and hasattr(env, "env"):
            if env.num_envs != num_envs:   # a jaxatari VecEnv
                raise ValueError(
                    f"the env is a batch of {env.num_envs} but the config "
                    f"asks for num_envs={num_envs}; make it with "
                    f"make_atari(game, {num_envs}) or set num_envs to match")
            env = env.env        # the agent batches the single env
        self.env, self.params, self.num_envs = env, env_params, num_envs
        self._batch = wrappers.VecEnv(env, num_envs)   # `step`'s batching
        self.life_loss_terminal = life_loss_terminal
        obs = jax.eval_shape(lambda k: env.reset(k, env_params)[0],
                             jax.random.key(0))
        self.obs_shape, self.obs_dtype = tuple(obs.shape), obs.dtype
        self.num_actions = _num_actions(env, env_params)
        self.frameskip = int(getattr(env_params, "frameskip", 1))

    def reset(self, key: jax.Array) -> tuple[jax.Array, Any]:
        keys = jax.random.split(key, self.num_envs)
        return jax.vmap(self.env.reset, in_axes=(0, None))(keys, self.params)

    def step(self, key: jax.Array, env_state: Any,
             actions: jax.Array) -> StepResult:
        keys = jax.random.split(key, self.num_envs)
        out = self._batch.step_each(keys, env_state, actions, self.params)
        if len(out) == 6:
            obs, env_state, reward, terminated, truncated, info = out
            done = terminated | truncated
        else:
            obs, env_state, reward, done, info = out
        reward = jnp.asarray(reward, jnp.float32)
        done = jnp.asarray(done, bool)
        score = jnp.asarray(info.get("unclipped_reward", reward), jnp.float32)
        learn_done = done
        if self.life_loss_terminal and "life_lost" in info:
            learn_done = done | info["life_lost"]
        return StepResult(obs, env_state, reward, score, done, learn_done)


def batched_env_and_network(config: Config, env: Any, env_params: Any
                            ) -> tuple[BatchedEnv, Any]:
    """What every agent's `make` builds first: the env batched to
    `config.num_envs` and the actor-critic for its observations."""
    batched = BatchedEnv(env, env_params, config.num_envs,
                         config.life_loss_terminal)
    network = networks.make_network(config.network, batched.obs_shape,
                                    batched.num_actions)
    return batched, network


def _num_actions(env: Any, env_params: Any) -> int:
    if hasattr(env, "action_space"):
        space = env.action_space(env_params)
        if hasattr(space, "n"):
            return int(space.n)
    if hasattr(env, "action_set"):
        return len(env.action_set)
    raise ValueError("the env has no discrete action space (action_space("
                     "params).n or action_set); these agents need one")


@struct.dataclass
class AgentState:
    """An agent's whole state: everything `update` needs, nothing static.

    Attributes:
        params, opt_state: the network's parameters and optimiser state.
        hparams: `HParams` (per member under vmap).
        key: the PRNG key for the next update.
        env_state, obs: the envs and their current observations.
        episode_return, episode_length: per env, of the running episodes.
        update: updates done.
        env_steps: agent steps taken, summed over envs (int32).
        extra: an algorithm's own state (GA3C: the lagged parameters).
    """
    params: Any
    opt_state: Any
    hparams: HParams
    key: jax.Array
    env_state: Any
    obs: jax.Array
    episode_return: jax.Array
    episode_length: jax.Array
    update: jax.Array
    env_steps: jax.Array
    extra: Any = None


class Trajectory(NamedTuple):
    """A rollout, time-major `[T, num_envs, ...]`; `mask[T]` marks the
    steps taken (`t < t_max`)."""
    obs: jax.Array
    actions: jax.Array
    behaviour_logp: jax.Array
    values: jax.Array
    rewards: jax.Array
    dones: jax.Array
    mask: jax.Array
    last_obs: jax.Array


class Agent(NamedTuple):
    """`init(key, hparams) -> state`, `update(state) -> (state, metrics)`;
    `config`, `env` (a `BatchedEnv`) and `network` describe it."""
    init: Callable[[jax.Array, HParams], AgentState]
    update: Callable[[AgentState], tuple[AgentState, Metrics]]
    config: Config
    env: BatchedEnv
    network: Any


def make_optimizer(config: Config) -> optax.GradientTransformation:
    """The optimiser's scaling, without the learning rate (applied in
    `apply_gradients`, so it can be a per-member traced value)."""
    if config.optimizer == "adam":
        return optax.scale_by_adam(eps=config.adam_eps)
    return optax.scale_by_rms(decay=config.rms_decay, eps=config.rms_eps,
                              initial_scale=1.0, eps_in_sqrt=True)


def init_state(config: Config, env: BatchedEnv, network: Any,
               key: jax.Array, hparams: HParams,
               extra: Callable[[Any], Any] | None = None) -> AgentState:
    """A fresh agent: initialised network and optimiser, reset envs."""
    check_hparams(hparams, config)
    key, net_key, env_key = jax.random.split(key, 3)
    obs, env_state = env.reset(env_key)
    params = network.init(net_key, obs)
    opt_state = make_optimizer(config).init(params)
    zeros = jnp.zeros((env.num_envs,), jnp.float32)
    return AgentState(
        params=params, opt_state=opt_state, hparams=hparams, key=key,
        env_state=env_state, obs=obs, episode_return=zeros,
        episode_length=jnp.zeros((env.num_envs,), jnp.int32),
        update=jnp.int32(0), env_steps=jnp.int32(0),
        extra=None if extra is None else extra(params))


def policy_terms(logits: jax.Array,
                 actions: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(log pi(a), entropy) of a categorical policy."""
    log_probs = jax.nn.log_softmax(logits)
    logp = jnp.take_along_axis(log_probs, actions[..., None], -1)[..., 0]
    entropy = -jnp.sum(jnp.exp(log_probs) * log_probs, axis=-1)
    return logp, entropy


def rollout(config: Config, env: BatchedEnv, network: Any,
            acting_params: Any, state: AgentState
            ) -> tuple[AgentState, Trajectory, Metrics]:
    """`num_steps` steps of all envs with `acting_params`' policy.

    Returns:
        The state with the envs, episode counters, key and `env_steps`
        moved on; the trajectory; and the metrics of the episodes that
        ended (`episode_return`, `episode_length`: their means, NaN if
        none; `episodes`: how many).
    """
    key, rollout_key = jax.random.split(state.key)

    def one_step(carry, t):
        key, env_state, obs, ep_return, ep_length, ended = carry
        key, act_key, env_key = jax.random.split(key, 3)
        logits, value = network.apply(acting_params, obs)
        action = jax.random.categorical(act_key, logits)
        logp, _ = policy_terms(logits, action)
        step = env.step(env_key, env_state, action)
        taken = t < state.hparams.t_max
        env_state = jax.tree.map(lambda a, b: jnp.where(taken, a, b),
                                 step.env_state, env_state)
        ep_return = ep_return + jnp.where(taken, step.score, 0.0)
        ep_length = ep_length + taken.astype(jnp.int32)
        finished = step.done & taken
        ended = (ended[0] + jnp.sum(jnp.where(finished, ep_return, 0.0)),
                 ended[1] + jnp.sum(jnp.where(finished, ep_length, 0)),
                 ended[2] + jnp.sum(finished))
        reward = step.reward
        if config.reward_clip is not None:
            reward = jnp.clip(reward, -config.reward_clip, config.reward_clip)
        carry = (key, env_state, jnp.where(taken, step.obs, obs),
                 jnp.where(finished, 0.0, ep_return),
                 jnp.where(finished, 0, ep_length), ended)
        return carry, (obs, action, logp, value, reward, step.learn_done,
                       taken)

    ended = (jnp.float32(0), jnp.int32(0), jnp.int32(0))
    carry = (rollout_key, state.env_state, state.obs, state.episode_return,
             state.episode_length, ended)
    carry, steps = jax.lax.scan(one_step, carry, jnp.arange(config.num_steps))
    _, env_state, obs, ep_return, ep_length, ended = carry
    trajectory = Trajectory(*steps, last_obs=obs)
    taken_steps = jnp.minimum(state.hparams.t_max, config.num_steps)
    state = state.replace(
        key=key, env_state=env_state, obs=obs, episode_return=ep_return,
        episode_length=ep_length,
        env_steps=state.env_steps + taken_steps * env.num_envs)
    count = ended[2]
    metrics = {"episode_return": jnp.where(count > 0, ended[0] / count,
                                           jnp.nan),
               "episode_length": jnp.where(count > 0, ended[1] / count,
                                           jnp.nan),
               "episodes": count}
    return state, trajectory, metrics


def learning_rate(config: Config, state: AgentState) -> jax.Array:
    """This update's learning rate: `hparams.learning_rate`, decayed
    linearly to 0 over `config.num_updates` if `anneal_lr` (CleanRL's
    schedule: the first update uses the full rate)."""
    rate = state.hparams.learning_rate
    if config.anneal_lr:
        done = state.update.astype(jnp.float32) / config.num_updates
        rate = rate * jnp.maximum(1.0 - done, 0.0)
    return rate


def apply_gradients(config: Config, params: Any, opt_state: Any,
                    grads: Any, rate: jax.Array, max_grad_norm: jax.Array
                    ) -> tuple[Any, Any, jax.Array]:
    """Clip by global norm (optax's rule; off when `max_grad_norm` is 0),
    scale by the optimiser, step by `-rate`.

    Returns:
        (params, opt_state, the gradients' global norm before clipping).
    """
    norm = optax.tree.norm(grads)
    keep = (max_grad_norm <= 0) | (norm < max_grad_norm)
    # One scalar for all leaves: XLA compiles `g / norm * max` as a
    # multiply by `1/norm` in some programs and not in others (1 device
    # against a member axis split over 2), which cost the last bit.
    scale = jnp.where(keep, 1.0, max_grad_norm / norm)
    grads = jax.tree.map(lambda g: g * scale.astype(g.dtype), grads)
    updates, opt_state = make_optimizer(config).update(grads, opt_state,
                                                       params)
    updates = jax.tree.map(lambda u: -rate * u, updates)
    return optax.apply_updates(params, updates), opt_state, norm


def reduce(config: Config, values: jax.Array, weights: jax.Array
           ) -> jax.Array:
    """The weighted sum (`loss_reduction="sum"`) or weighted mean."""
    total = jnp.sum(values * weights)
    if config.loss_reduction == "sum":
        return total
    return total / jnp.maximum(jnp.sum(weights), 1.0)


def evaluate(network: Any, params: Any, trajectory: Trajectory
             ) -> tuple[jax.Array, jax.Array, jax.Array]:
    """One forward pass over the rollout and the observation after it.

    Returns:
        (logits `[T, N, A]`, values `[T, N]`, bootstrap values `[N]`).
    """
    obs = jnp.concatenate([trajectory.obs, trajectory.last_obs[None]])
    logits, values = network.apply(params, obs)
    return logits[:-1], values[:-1], values[-1]


TargetsFn = Callable[[Trajectory, jax.Array, jax.Array, jax.Array, HParams],
                     tuple[jax.Array, jax.Array]]
"""(trajectory, values, bootstrap values, log pi(a), hparams) ->
(value targets, policy-gradient advantages), both `[T, N]`."""


def actor_critic_loss(config: Config, network: Any, targets_fn: TargetsFn,
                      params: Any, trajectory: Trajectory, hparams: HParams
                      ) -> tuple[jax.Array, Metrics]:
    """The A2C/A3C loss: policy gradient with the targets' advantages,
    0.5 * squared value error, minus the entropy bonus.

    The targets are computed from the same forward pass's values, under
    `stop_gradient`; masked steps weigh nothing.
    """
    logits, values, bootstrap = evaluate(network, params, trajectory)
    logp, entropy = policy_terms(logits, trajectory.actions)
    targets, advantages = targets_fn(
        trajectory, jax.lax.stop_gradient(values),
        jax.lax.stop_gradient(bootstrap), jax.lax.stop_gradient(logp),
        hparams)
    targets = jax.lax.stop_gradient(targets)
    advantages = jax.lax.stop_gradient(advantages)
    weights = jnp.broadcast_to(trajectory.mask[:, None],
                               logp.shape).astype(jnp.float32)
    policy_loss = -reduce(config, advantages * logp, weights)
    value_loss = reduce(config, 0.5 * jnp.square(targets - values), weights)
    entropy_mean = reduce(config, entropy, weights)
    loss = (policy_loss + hparams.vf_coef * value_loss
            - hparams.ent_coef * entropy_mean)
    return loss, {"loss": loss, "policy_loss": policy_loss,
                  "value_loss": value_loss, "entropy": entropy_mean}


def actor_critic_step(config: Config, network: Any, targets_fn: TargetsFn,
                      state: AgentState, trajectory: Trajectory
                      ) -> tuple[AgentState, Metrics]:
    """One gradient step of `actor_critic_loss` on a trajectory."""
    grads, metrics = jax.grad(
        lambda p: actor_critic_loss(config, network, targets_fn, p,
                                    trajectory, state.hparams),
        has_aux=True)(state.params)
    rate = learning_rate(config, state)
    params, opt_state, norm = apply_gradients(
        config, state.params, state.opt_state, grads, rate,
        state.hparams.max_grad_norm)
    state = state.replace(params=params, opt_state=opt_state)
    return state, {**metrics, "grad_norm": norm, "learning_rate": rate}


def finish_update(env: BatchedEnv, state: AgentState, metrics: Metrics
                  ) -> tuple[AgentState, Metrics]:
    """Count the update; add the counters and a finiteness flag (the
    loss and every parameter finite) to the metrics."""
    finite = jnp.isfinite(metrics["loss"])
    for leaf in jax.tree.leaves(state.params):
        finite = finite & jnp.all(jnp.isfinite(leaf))
    state = state.replace(update=state.update + 1)
    return state, {**metrics, "update": state.update,
                   "env_steps": state.env_steps,
                   "frames": state.env_steps * env.frameskip,
                   "finite": finite}


def scan_updates(agent: Agent, state: AgentState, count: int,
                 callback: Callable[[Metrics], None] | None = None,
                 callback_every: int = 1) -> tuple[AgentState, Metrics]:
    """`count` updates in one `lax.scan`, metrics stacked over them.

    Args:
        agent, state: the agent and its state.
        count: the updates (static).
        callback: called on the host with an update's metrics every
            `callback_every` updates (`jax.debug.callback`, unordered, so
            the device does not wait on it; under `vmap` the metrics carry
            the member axis). The predicate is the scan's own counter, so
            under `vmap` it stays one branch, not a select.
    """
    def body(state, index):
        state, metrics = agent.update(state)
        if callback is not None:
            jax.lax.cond(index % callback_every == 0,
                         lambda m: jax.debug.callback(callback, m),
                         lambda m: None, metrics)
        return state, metrics

    return jax.lax.scan(body, state, jnp.arange(count))


def make_train(agent: Agent,
               callback: Callable[[Metrics], None] | None = None,
               callback_every: int = 1
               ) -> Callable[..., tuple[AgentState, Metrics]]:
    """Compose an agent into `train(key, hparams=None) -> (state,
    metrics)`: `config.num_updates` updates in one `lax.scan`, metrics
    stacked over them. `hparams` defaults to the config's.

    Args:
        agent: from an algorithm's `make`.
        callback, callback_every: as `scan_updates`.
    """
    config = agent.config

    def train(key: jax.Array, hparams: HParams | None = None
              ) -> tuple[AgentState, Metrics]:
        hparams = config.hparams() if hparams is None else hparams
        return scan_updates(agent, agent.init(key, hparams),
                            config.num_updates, callback, callback_every)

    return train
