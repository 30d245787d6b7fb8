"""GA3C's design in one program, with V-trace for its policy lag.

GA3C (Babaeizadeh et al. 2017) runs A3C on a GPU by queueing: agents put
observations on a prediction queue, predictors batch them through the
model, and trainers batch finished t_max-step experiences into updates.
Its actors therefore act with a model a few updates older than the one
being trained (the policy lag), and GA3C does not correct for it.

Here both queues are batch dimensions: the `num_envs` agents' predictions
are one batched forward pass per step, and their experiences are one
`[t_max, num_envs]` training batch per update. The policy lag is a static
parameter, `policy_lag`: the actors act with the parameters of
`policy_lag` updates ago (a FIFO of past parameters in the state), their
log-probabilities are stored at acting time, and V-trace (Espeholt et al.
2018, `returns.vtrace`) corrects the learner's targets for the lag.
`policy_lag=0` is on-policy: the rollout uses the current parameters and
V-trace's ratios are 1, so the update equals A2C's n-step update on the
same batch (`tests/agents/test_ga3c.py`).

The defaults are GA3C's released settings (`ga3c/Config.py`): RMSProp
(TF's) with learning rate 3e-4, decay 0.99 and epsilon 0.1, t_max 5,
gamma 0.99, entropy beta 0.01, rewards clipped to [-1, 1], 32 agents, no
gradient clipping, and losses summed over the batch (GA3C's
`reduce_sum`); its value cost is `0.5 * sum((R - V)^2)` (vf_coef 1). The
lag defaults to 1, one update, what a pipeline with one batch in flight
gives.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp

from jaxatari.agents import core, returns
from jaxatari.agents.core import Agent, AgentState, HParams, Trajectory


@dataclasses.dataclass(frozen=True)
class GA3CConfig(core.Config):
    """`core.Config` with GA3C's defaults, and:

    Attributes:
        policy_lag: how many updates old the acting parameters are.
        vtrace_lambda, clip_rho_threshold, clip_pg_rho_threshold:
            V-trace's lambda, rho-bar and the policy gradient's rho-bar.
    """
    num_envs: int = 32
    num_steps: int = 5
    optimizer: str = "rmsprop"
    rms_decay: float = 0.99
    rms_eps: float = 0.1
    reward_clip: float | None = 1.0
    loss_reduction: str = "sum"
    learning_rate: float = 3e-4
    gamma: float = 0.99
    gae_lambda: float = 1.0
    ent_coef: float = 0.01
    vf_coef: float = 1.0
    max_grad_norm: float = 0.0
    policy_lag: int = 1
    vtrace_lambda: float = 1.0
    clip_rho_threshold: float = 1.0
    clip_pg_rho_threshold: float = 1.0

    def validate(self) -> None:
        super().validate()
        core.check_int("policy_lag", self.policy_lag, 0)
        for name in ("vtrace_lambda", "clip_rho_threshold",
                     "clip_pg_rho_threshold"):
            if not getattr(self, name) > 0:
                raise ValueError(f"config.{name} must be > 0, got "
                                 f"{getattr(self, name)!r}")


def vtrace_targets(config: GA3CConfig) -> core.TargetsFn:
    """V-trace targets and advantages, from the behaviour log-probs
    stored in the trajectory."""
    def targets(trajectory: Trajectory, values: jax.Array,
                bootstrap: jax.Array, logp: jax.Array,
                hparams: HParams) -> tuple[jax.Array, jax.Array]:
        out = returns.vtrace(
            trajectory.rewards, values, trajectory.dones, bootstrap,
            logp - trajectory.behaviour_logp, hparams.gamma,
            config.vtrace_lambda, config.clip_rho_threshold,
            config.clip_pg_rho_threshold, trajectory.mask)
        return out.vs, out.pg_advantages
    return targets


def _lagged_params(config: GA3CConfig) -> Callable[[Any], Any]:
    """The FIFO's start: `policy_lag` copies of the first parameters."""
    def fifo(params: Any) -> Any:
        if config.policy_lag == 0:
            return None
        return jax.tree.map(
            lambda p: jnp.repeat(p[None], config.policy_lag, axis=0), params)
    return fifo


def make(config: GA3CConfig, env: Any, env_params: Any) -> Agent:
    """The GA3C agent for an env in the gymnax convention (see
    `a2c.make`)."""
    batched, network = core.batched_env_and_network(config, env,
                                                    env_params)
    targets = vtrace_targets(config)

    def update(state: AgentState) -> tuple[AgentState, core.Metrics]:
        fifo = state.extra
        acting = (state.params if fifo is None
                  else jax.tree.map(lambda p: p[0], fifo))
        learner_params = state.params
        state, trajectory, episodes = core.rollout(config, batched, network,
                                                   acting, state)
        state, metrics = core.actor_critic_step(config, network, targets,
                                                state, trajectory)
        if fifo is not None:   # drop the oldest, keep this update's input
            state = state.replace(extra=jax.tree.map(
                lambda old, p: jnp.concatenate([old[1:], p[None]]),
                fifo, learner_params))
        return core.finish_update(batched, state, {**metrics, **episodes})

    init = functools.partial(core.init_state, config, batched, network,
                             extra=_lagged_params(config))
    return Agent(init, update, config, batched, network)


def make_train(config: GA3CConfig, env: Any, env_params: Any,
               callback: Callable[[core.Metrics], None] | None = None,
               callback_every: int = 1) -> Callable:
    """`train(key, hparams=None) -> (state, metrics)`; see
    `core.make_train`."""
    return core.make_train(make(config, env, env_params), callback,
                           callback_every)
