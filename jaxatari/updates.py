"""Array updates that let XLA:CPU run a small batch's frame loop as one
kernel.

XLA:CPU runs a program as a sequence of thunks, each with a fixed cost of a
fraction of a microsecond. A frame runs thousands of instructions, each a
few hundred small operations, so for one console those costs were most of
the frame. XLA can compile a whole while loop into
one kernel instead (`_config.prefer_kernel_loops` lets it for loops of any
size), except a loop with a scatter in it. One console's updates are
dynamic slice updates, which are not scatters; under `jax.vmap` they
become scatters, so `update_slice` batches them itself:

* a batch of at most `KERNEL_MAX_BATCH` on the CPU updates one console
  after another (a loop inside the kernel): the frame loop stays one
  kernel, 6.3, 2.4 and 1.6 times faster than thunks through `env.step`
  on Pong at batches of 1, 4 and 8 (BENCHMARKS.md);
* a larger batch, or another platform, scatters as plain vmap would: the
  kernel's code is not vectorised over the batch, and at 128 consoles it
  took twice as long as thunks over whole-batch arrays.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxatari import lowering

KERNEL_MAX_BATCH = 8
"""The largest batch whose updates keep the frame loop one kernel."""


@jax.custom_batching.custom_vmap
def update_slice(array: jax.Array, update: jax.Array,
                 start: tuple[jax.Array, ...]) -> jax.Array:
    """`lax.dynamic_update_slice(array, update, start)`, batched as the
    module docstring says."""
    return jax.lax.dynamic_update_slice(array, update, start)


@update_slice.def_vmap
def _update_slice_batched(axis_size: int, in_batched, array, update, start):
    array, update, start = broadcast(axis_size, tuple(in_batched),
                                     (array, update, start))

    def scatter():
        return jax.vmap(jax.lax.dynamic_update_slice)(array, update, start)

    def one_by_one():
        out = array
        for k in range(axis_size):   # in place, at the console's index
            out = update_slice(out, update[k][None],
                               (jnp.int32(k),) + tuple(s[k] for s in start))
        return out

    return small_batch_on_cpu(axis_size, one_by_one, scatter), True


def broadcast(axis_size: int, batched, tree):
    """`tree` with every unbatched leaf given the batch axis (a
    `custom_vmap` rule's arguments made uniform; `batched` has the tree's
    structure, a bool per leaf)."""
    return jax.tree.map(
        lambda x, b: jnp.asarray(x) if b else jnp.broadcast_to(
            x, (axis_size,) + jnp.shape(x)), tree, batched)


def merge_batch_axes(outer: int, inner: int, tree, outer_batched,
                     inner_axes):
    """`tree`'s leaves with an outer vmap axis (of size `outer`, where
    `outer_batched`) and a batch axis (of size `inner`, where `inner_axes`
    is 0) made one batch axis of `outer * inner`; leaves with neither stay
    as they are. Returns the tree and its new axes (0 or None a leaf)."""
    leaves, treedef = jax.tree.flatten(tree)
    merged, axes = [], []
    for x, outer_on, inner_axis in zip(
            leaves, treedef.flatten_up_to(outer_batched),
            treedef.flatten_up_to(inner_axes)):
        if not outer_on and inner_axis is None:
            merged.append(x)
            axes.append(None)
            continue
        x = jnp.asarray(x)
        if not outer_on:
            x = jnp.broadcast_to(x, (outer,) + x.shape)
        if inner_axis is None:
            x = jnp.broadcast_to(x[:, None], (outer, inner) + x.shape[1:])
        merged.append(x.reshape((outer * inner,) + x.shape[2:]))
        axes.append(0)
    return treedef.unflatten(merged), treedef.unflatten(axes)


def small_batch_on_cpu(axis_size: int, one_by_one, whole_batch):
    """`one_by_one()` for a batch of at most `KERNEL_MAX_BATCH` on the CPU,
    `whole_batch()` otherwise (both are traced for a small batch; the
    accelerator's lowering, `lowering.batch_conds()` false, takes
    `whole_batch()` on any backend)."""
    if axis_size > KERNEL_MAX_BATCH or not lowering.batch_conds():
        return whole_batch()
    return jax.lax.platform_dependent(cpu=one_by_one, default=whole_batch)


def set_item(array: jax.Array, index: jax.Array, value: jax.Array
             ) -> jax.Array:
    """`array.at[index].set(value)` for one index along the first axis
    (in range), through `update_slice`."""
    value = jnp.asarray(value, array.dtype).reshape((1,) + array.shape[1:])
    index = jnp.asarray(index, jnp.int32)
    zeros = (jnp.int32(0),) * (array.ndim - 1)
    return update_slice(array, value, (index,) + zeros)
