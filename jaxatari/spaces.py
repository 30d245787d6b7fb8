"""gymnax's action and observation spaces for jaxatari's envs.

gymnax code asks an env for `env.action_space(params).n` and
`env.observation_space(params).shape` (PureJaxRL sizes its network and
samples random actions from them). An env's actions are indices into its
`action_set`; its observation is whatever its `reset` returns, so the
space is read from the reset's shape and dtype (`jax.eval_shape`: traced,
not run, with the concrete `params` closed over so that host-side checks
of them still run).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp

if TYPE_CHECKING:   # importing gymnax starts JAX's backend, which must
    # wait for `jax.distributed.initialize` (`jaxatari sweep`'s processes)
    from gymnax.environments.spaces import Box, Discrete


def action_space(env: Any) -> Discrete:
    """Discrete over the indices of `env.action_set`."""
    from gymnax.environments.spaces import Discrete
    return Discrete(len(env.action_set))


def observation_space(env: Any, params: Any) -> Box:
    """Box of `env.reset`'s observation: bytes in [0, 255], floats (a
    scaled observation) in [0, 1]."""
    from gymnax.environments.spaces import Box
    obs, _ = jax.eval_shape(lambda key: env.reset(key, params),
                            jax.random.key(0))
    high = 255 if jnp.issubdtype(obs.dtype, jnp.integer) else 1.0
    return Box(0, high, obs.shape, obs.dtype)
