"""Reductions over a few elements, written as elementwise folds.

XLA:GPU ends a fusion at a reduction: a `jnp.any` over three offsets, or
a `jnp.select` (whose index is an `argmax`), is a kernel launch of its
own inside the emulator's instruction loop, which runs thousands of
times a frame (BENCHMARKS.md, "The GPU program without a GPU"). Folded
into `|`, `max` and `where` over the elements, the same values fuse with
the elementwise work around them. Only for small static sizes; the
results are the same bits as the reductions they replace.
"""
from __future__ import annotations

import functools
from typing import Sequence

import jax
import jax.numpy as jnp


def _parts(x: jax.Array, axis: int) -> list[jax.Array]:
    x = jnp.asarray(x)
    return [jax.lax.index_in_dim(x, k, axis, keepdims=False)
            for k in range(x.shape[axis])]


def any_along(x: jax.Array, axis: int = 0) -> jax.Array:
    """`jnp.any(x, axis)` as an `|` of its elements along `axis`."""
    return functools.reduce(jnp.logical_or, _parts(x, axis))


def max_along(x: jax.Array, axis: int = 0) -> jax.Array:
    """`jnp.max(x, axis)` as a `maximum` of its elements along `axis`."""
    return functools.reduce(jnp.maximum, _parts(x, axis))


def or_along(x: jax.Array, axis: int = 0) -> jax.Array:
    """The bitwise or of `x`'s elements along `axis` (the sum of bits
    that do not overlap)."""
    return functools.reduce(jnp.bitwise_or, _parts(x, axis))


def select(conditions: Sequence[jax.Array], choices: Sequence[jax.Array],
           default: jax.Array) -> jax.Array:
    """`jnp.select(conditions, choices, default)`: the first choice whose
    condition holds, as nested `where`s."""
    out = jnp.asarray(default)
    for condition, choice in reversed(list(zip(conditions, choices))):
        out = jnp.where(condition, choice, out)
    return out
