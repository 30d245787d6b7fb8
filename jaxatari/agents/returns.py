"""Return and advantage estimators: GAE, n-step returns and V-trace.

Every function takes time-major arrays, `[T, ...]` (any trailing batch axes,
usually `[T, num_envs]`), and walks them backwards with one `lax.scan`:

* `rewards[t]` is the reward of step `t`;
* `dones[t]` says the episode ended at step `t` (the next observation is a
  new episode's), so nothing is bootstrapped across it;
* `values[t]` is V(x_t), the value of the observation step `t` acted on,
  and `bootstrap_value` is V(x_T), the value of the observation after the
  last step;
* `mask[t]`, optional, says step `t` was taken. A member whose t_max is
  below the rollout's static length masks its last steps: masked steps
  must all come after the taken ones, they get zero advantage, and the
  taken steps bootstrap from `bootstrap_value` (the observation after the
  last *taken* step, since masked steps do not move the env).

These are the textbook recursions (Schulman et al. 2016 for GAE, Espeholt
et al. 2018 for V-trace); `tests/agents/test_returns.py` checks them against
rlax and against plain-numpy loops.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


def _discounts(dones: jax.Array, gamma: jax.Array) -> jax.Array:
    return gamma * (1.0 - dones.astype(jnp.float32))


def _taken(mask: jax.Array | None, like: jax.Array) -> jax.Array:
    """The mask broadcast to `like`'s shape (all steps taken if None)."""
    if mask is None:
        return jnp.ones(like.shape, bool)
    mask = mask.reshape(mask.shape + (1,) * (like.ndim - mask.ndim))
    return jnp.broadcast_to(mask, like.shape)


def gae(rewards: jax.Array, values: jax.Array, dones: jax.Array,
        bootstrap_value: jax.Array, gamma: jax.Array, lambda_: jax.Array,
        mask: jax.Array | None = None) -> tuple[jax.Array, jax.Array]:
    """Generalised advantage estimation, truncated at the rollout's end.

    A_t = delta_t + gamma_t * lambda * A_{t+1}, with
    delta_t = r_t + gamma_t * V(x_{t+1}) - V(x_t) and gamma_t = 0 at an
    episode's end. `lambda_ = 1` gives n-step returns bootstrapped at the
    rollout's end (A2C's targets).

    Args:
        rewards, values, dones: `[T, ...]`.
        bootstrap_value: `[...]`, V(x_T).
        gamma, lambda_: scalars (traced is fine).
        mask: optional bool `[T]` or `[T, ...]`, see the module docstring.

    Returns:
        (advantages, returns), both `[T, ...]`; returns = advantages +
        values; both are 0 and `values` at masked steps.
    """
    discounts = _discounts(dones, gamma)
    taken = _taken(mask, rewards)

    def backward(carry, step):
        advantage, next_value = carry
        reward, value, discount, is_taken = step
        delta = reward + discount * next_value - value
        new = delta + discount * lambda_ * advantage
        carry = (jnp.where(is_taken, new, advantage),
                 jnp.where(is_taken, value, next_value))
        return carry, jnp.where(is_taken, new, 0.0)

    init = (jnp.zeros_like(bootstrap_value, jnp.float32),
            bootstrap_value.astype(jnp.float32))
    _, advantages = jax.lax.scan(
        backward, init, (rewards.astype(jnp.float32), values, discounts,
                         taken), reverse=True)
    return advantages, advantages + values


def n_step_returns(rewards: jax.Array, values: jax.Array, dones: jax.Array,
                   bootstrap_value: jax.Array, gamma: jax.Array,
                   mask: jax.Array | None = None) -> jax.Array:
    """R_t = r_t + gamma_t * R_{t+1}, R_T = V(x_T): the A2C/A3C target,
    bootstrapped once at the rollout's end (GAE with lambda 1).

    Returns:
        `[T, ...]`, equal to `values` at masked steps.
    """
    return gae(rewards, values, dones, bootstrap_value, gamma, 1.0, mask)[1]


class VTraceOutput(NamedTuple):
    """V-trace's value targets `vs` (v_s) and policy-gradient advantages
    (rho_s^pg * (r_s + gamma_s * v_{s+1} - V(x_s)))."""
    vs: jax.Array
    pg_advantages: jax.Array


def vtrace(rewards: jax.Array, values: jax.Array, dones: jax.Array,
           bootstrap_value: jax.Array, log_rhos: jax.Array,
           gamma: jax.Array, lambda_: jax.Array = 1.0,
           clip_rho_threshold: float = 1.0,
           clip_pg_rho_threshold: float = 1.0,
           mask: jax.Array | None = None) -> VTraceOutput:
    """V-trace targets for off-policy actor-critic (IMPALA, eq. 1).

    v_s - V(x_s) = delta_s + gamma_s * c_s * (v_{s+1} - V(x_{s+1})), with
    delta_s = rho_s * (r_s + gamma_s * V(x_{s+1}) - V(x_s)),
    rho_s = min(rho_bar, pi/mu), c_s = lambda * min(1, pi/mu).

    Args:
        rewards, values, dones: `[T, ...]`; `values` are the learner's.
        bootstrap_value: `[...]`, the learner's V(x_T).
        log_rhos: `[T, ...]`, log pi(a_t|x_t) - log mu(a_t|x_t) (target
            policy minus behaviour policy).
        gamma, lambda_: scalars (traced is fine).
        clip_rho_threshold, clip_pg_rho_threshold: rho_bar for the value
            targets and for the policy-gradient advantages.
        mask: optional, see the module docstring.

    Returns:
        `VTraceOutput`, with `vs = values` and zero advantage at masked
        steps. Neither output carries gradients (both are targets).
    """
    rhos = jnp.exp(log_rhos)
    clipped_rhos = jnp.minimum(clip_rho_threshold, rhos)
    cs = lambda_ * jnp.minimum(1.0, rhos)
    discounts = _discounts(dones, gamma)
    taken = _taken(mask, rewards)
    rewards = rewards.astype(jnp.float32)
    next_values = jnp.concatenate([values[1:], bootstrap_value[None]])
    next_values = _last_taken_bootstrap(next_values, bootstrap_value, taken)
    deltas = clipped_rhos * (rewards + discounts * next_values - values)

    def backward(acc, step):
        delta, discount, c, is_taken = step
        new = delta + discount * c * acc
        acc = jnp.where(is_taken, new, 0.0)
        return acc, acc

    _, corrections = jax.lax.scan(
        backward, jnp.zeros_like(bootstrap_value, jnp.float32),
        (deltas, discounts, cs, taken), reverse=True)
    vs = values + corrections
    next_vs = jnp.concatenate([vs[1:], bootstrap_value[None]])
    next_vs = _last_taken_bootstrap(next_vs, bootstrap_value, taken)
    pg_rhos = jnp.minimum(clip_pg_rho_threshold, rhos)
    pg_advantages = pg_rhos * (rewards + discounts * next_vs - values)
    return VTraceOutput(
        vs=jax.lax.stop_gradient(vs),
        pg_advantages=jax.lax.stop_gradient(
            jnp.where(taken, pg_advantages, 0.0)))


def _last_taken_bootstrap(next_values: jax.Array, bootstrap_value: jax.Array,
                          taken: jax.Array) -> jax.Array:
    """The value after each step, with V(x_T) after the last taken step
    (the first masked step's neighbour)."""
    next_taken = jnp.concatenate([taken[1:], jnp.zeros_like(taken[:1])])
    return jnp.where(taken & ~next_taken, bootstrap_value[None], next_values)
