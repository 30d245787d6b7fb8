"""Proximal policy optimisation (Schulman et al. 2017), as CleanRL's
`ppo_atari_envpool_xla_jax` does it.

Each update steps `num_envs` envs for `num_steps` steps, computes GAE
advantages and returns from the values recorded while acting
(`returns.gae`), then runs `update_epochs` epochs over the batch in
`num_minibatches` shuffled minibatches: the clipped surrogate objective,
advantages normalised per minibatch, the clipped value loss, and an
entropy bonus.

The defaults are CleanRL's Atari settings, so scores compare with theirs:
8 envs x 128 steps, Adam (eps 1e-5) at 2.5e-4 annealed linearly to 0,
gamma 0.99, lambda 0.95, 4 minibatches x 4 epochs, clip 0.1, entropy 0.01,
value coefficient 0.5, gradient norm 0.5, lost lives as terminal for the
returns (EnvPool's `episodic_life`), the Nature CNN.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp

from jaxatari.agents import core, returns
from jaxatari.agents.core import Agent, AgentState, HParams


@dataclasses.dataclass(frozen=True)
class PPOConfig(core.Config):
    """`core.Config` with CleanRL's Atari PPO defaults, and:

    Attributes:
        num_minibatches: minibatches per epoch (must divide
            `num_envs * num_steps`).
        update_epochs: passes over each rollout.
        norm_adv: normalise advantages per minibatch.
        clip_vloss: clip the value function's change as the policy's.
    """
    anneal_lr: bool = True
    num_minibatches: int = 4
    update_epochs: int = 4
    norm_adv: bool = True
    clip_vloss: bool = True

    def validate(self) -> None:
        super().validate()
        for name in ("num_minibatches", "update_epochs"):
            core.check_int(name, getattr(self, name), 1)
        batch = self.num_envs * self.num_steps
        if batch % self.num_minibatches:
            raise ValueError(
                f"config.num_minibatches ({self.num_minibatches}) must "
                f"divide num_envs * num_steps ({batch})")


class Batch(NamedTuple):
    """One rollout flattened to `[num_steps * num_envs, ...]`."""
    obs: jax.Array
    actions: jax.Array
    logp: jax.Array
    values: jax.Array
    advantages: jax.Array
    returns: jax.Array
    weights: jax.Array


def _normalised(config: PPOConfig, advantages: jax.Array,
                weights: jax.Array) -> jax.Array:
    """Advantages less their (weighted) mean, over their unbiased std."""
    if not config.norm_adv:
        return advantages
    count = jnp.maximum(jnp.sum(weights), 1.0)
    mean = jnp.sum(advantages * weights) / count
    var = jnp.sum(jnp.square(advantages - mean) * weights) / jnp.maximum(
        count - 1.0, 1.0)
    return (advantages - mean) / (jnp.sqrt(var) + 1e-8)


def ppo_loss(config: PPOConfig, network: Any, params: Any, batch: Batch,
             hparams: HParams) -> tuple[jax.Array, core.Metrics]:
    """CleanRL's PPO loss on one minibatch."""
    logits, new_values = network.apply(params, batch.obs)
    logp, entropy = core.policy_terms(logits, batch.actions)
    log_ratio = logp - batch.logp
    ratio = jnp.exp(log_ratio)
    advantages = _normalised(config, batch.advantages, batch.weights)
    clip = hparams.clip_eps
    surrogate = jnp.maximum(-advantages * ratio,
                            -advantages * jnp.clip(ratio, 1 - clip, 1 + clip))
    value_error = jnp.square(new_values - batch.returns)
    if config.clip_vloss:
        clipped = batch.values + jnp.clip(new_values - batch.values,
                                          -clip, clip)
        value_error = jnp.maximum(value_error,
                                  jnp.square(clipped - batch.returns))

    def mean(x):
        return core.reduce(config, x, batch.weights)

    policy_loss, value_loss = mean(surrogate), mean(0.5 * value_error)
    entropy_mean = mean(entropy)
    loss = (policy_loss - hparams.ent_coef * entropy_mean
            + hparams.vf_coef * value_loss)
    return loss, {"loss": loss, "policy_loss": policy_loss,
                  "value_loss": value_loss, "entropy": entropy_mean,
                  "approx_kl": mean((ratio - 1.0) - log_ratio),
                  "clip_fraction": mean(
                      (jnp.abs(ratio - 1.0) > clip).astype(jnp.float32))}


def _flatten(trajectory: core.Trajectory, advantages: jax.Array,
             targets: jax.Array) -> Batch:
    weights = jnp.broadcast_to(trajectory.mask[:, None],
                               advantages.shape).astype(jnp.float32)
    batch = Batch(trajectory.obs, trajectory.actions,
                  trajectory.behaviour_logp, trajectory.values, advantages,
                  targets, weights)
    return jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), batch)


def _learn(config: PPOConfig, network: Any, state: AgentState, batch: Batch
           ) -> tuple[AgentState, core.Metrics]:
    """`update_epochs` epochs of shuffled minibatch steps."""
    rate = core.learning_rate(config, state)
    size = batch.actions.shape[0]

    def minibatch_step(carry, minibatch):
        params, opt_state = carry
        grads, metrics = jax.grad(
            lambda p: ppo_loss(config, network, p, minibatch, state.hparams),
            has_aux=True)(params)
        params, opt_state, norm = core.apply_gradients(
            config, params, opt_state, grads, rate,
            state.hparams.max_grad_norm)
        return (params, opt_state), {**metrics, "grad_norm": norm}

    def epoch(carry, key):
        order = jax.random.permutation(key, size)
        minibatches = jax.tree.map(
            lambda x: x[order].reshape((config.num_minibatches, -1)
                                       + x.shape[1:]), batch)
        return jax.lax.scan(minibatch_step, carry, minibatches)

    key, epochs_key = jax.random.split(state.key)
    (params, opt_state), metrics = jax.lax.scan(
        epoch, (state.params, state.opt_state),
        jax.random.split(epochs_key, config.update_epochs))
    metrics = jax.tree.map(jnp.mean, metrics)
    state = state.replace(params=params, opt_state=opt_state, key=key)
    return state, {**metrics, "learning_rate": rate}


def make(config: PPOConfig, env: Any, env_params: Any) -> Agent:
    """The PPO agent for an env in the gymnax convention.

    Args:
        config: the static settings (`PPOConfig()` for CleanRL's).
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
        _, bootstrap = network.apply(state.params, trajectory.last_obs)
        advantages, targets = returns.gae(
            trajectory.rewards, trajectory.values, trajectory.dones,
            bootstrap, state.hparams.gamma, state.hparams.gae_lambda,
            trajectory.mask)
        state, metrics = _learn(config, network, state,
                                _flatten(trajectory, advantages, targets))
        return core.finish_update(batched, state, {**metrics, **episodes})

    init = functools.partial(core.init_state, config, batched, network)
    return Agent(init, update, config, batched, network)


def make_train(config: PPOConfig, env: Any, env_params: Any,
               callback: Callable[[core.Metrics], None] | None = None,
               callback_every: int = 1) -> Callable:
    """`train(key, hparams=None) -> (state, metrics)`; see
    `core.make_train`."""
    return core.make_train(make(config, env, env_params), callback,
                           callback_every)
