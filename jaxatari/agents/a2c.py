"""Synchronous advantage actor-critic (A2C; Mnih et al. 2016, made
synchronous as in OpenAI baselines and SB3).

Each update steps `num_envs` envs for t_max steps with the current policy,
bootstraps n-step returns from the value of the last observation
(`returns.n_step_returns`) and takes one gradient step on the policy
gradient, value and entropy loss (`core.actor_critic_loss`).

The defaults are the SB3 zoo's Atari settings: 16 envs, 5 steps, RMSProp
as TF and baselines define it (decay 0.99, eps 1e-5 inside the square
root, mean square starting at 1), learning rate 7e-4, entropy 0.01,
gradient norm 0.5, lost lives as terminal for the returns. SB3's value
loss is `vf_coef * MSE` with `vf_coef` 0.25; here the value loss is
`0.5 * squared error`, so the same weight is `vf_coef` 0.5.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

import jax

from jaxatari.agents import core, returns
from jaxatari.agents.core import Agent, AgentState, HParams, Trajectory


@dataclasses.dataclass(frozen=True)
class A2CConfig(core.Config):
    """`core.Config` with the SB3 zoo's Atari A2C defaults."""
    num_envs: int = 16
    num_steps: int = 5
    optimizer: str = "rmsprop"
    rms_decay: float = 0.99
    rms_eps: float = 1e-5
    learning_rate: float = 7e-4
    gamma: float = 0.99
    gae_lambda: float = 1.0
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5


def n_step_targets(trajectory: Trajectory, values: jax.Array,
                   bootstrap: jax.Array, logp: jax.Array,
                   hparams: HParams) -> tuple[jax.Array, jax.Array]:
    """On-policy targets: n-step returns and advantages `R - V`."""
    del logp  # on-policy: no correction
    targets = returns.n_step_returns(trajectory.rewards, values,
                                     trajectory.dones, bootstrap,
                                     hparams.gamma, trajectory.mask)
    return targets, targets - values


def make(config: A2CConfig, env: Any, env_params: Any) -> Agent:
    """The A2C agent for an env in the gymnax convention.

    Args:
        config: the static settings (`A2CConfig()` for the defaults).
        env, env_params: a gymnax-style env (a jaxatari `make_atari` env,
            or any gymnax env) and its params.

    Returns:
        `Agent(init, update, ...)`.
    """
    batched, network = core.batched_env_and_network(config, env,
                                                    env_params)

    def update(state: AgentState) -> tuple[AgentState, core.Metrics]:
        state, trajectory, episodes = core.rollout(
            config, batched, network, state.params, state)
        state, metrics = core.actor_critic_step(
            config, network, n_step_targets, state, trajectory)
        return core.finish_update(batched, state, {**metrics, **episodes})

    init = functools.partial(core.init_state, config, batched, network)
    return Agent(init, update, config, batched, network)


def make_train(config: A2CConfig, env: Any, env_params: Any,
               callback: Callable[[core.Metrics], None] | None = None,
               callback_every: int = 1) -> Callable:
    """`train(key, hparams=None) -> (state, metrics)`; see
    `core.make_train`."""
    return core.make_train(make(config, env, env_params), callback,
                           callback_every)
