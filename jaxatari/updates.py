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
  after another (a `fori_loop` inside the kernel, so the program's size
  does not grow with the batch): the frame loop stays one kernel, 6.3,
  2.4 and 1.6 times faster than thunks through `env.step` on Pong at
  batches of 1, 4 and 8 (BENCHMARKS.md, "The one-kernel frame loop up to
  16 consoles"); with a rendered frame's TIA writes drawn in turn at a
  cost per writer that does not grow with the batch
  (`tia_gather.write_one_by_one`), the preset's step ran 1.33 to 1.55
  times faster than compacted thunks on Pong, Breakout and Ms. Pac-Man at
  256 and 1,024 envs, and 1.35 times on Pong at 2,048 (BENCHMARKS.md,
  "Draws one by one at a cost per console");
* a larger batch, or another platform, scatters as plain vmap would
  (nothing was measured above 2,048 consoles on the CPU).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxatari import lowering

KERNEL_MAX_BATCH = 2048
"""The largest batch whose updates keep the frame loop one kernel (8,
then 16 until 2026-11-28; 2,048 is the largest batch measured)."""


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

    if not lowering.batch_conds() and _selects(array, update):
        scatter = lambda: selected(array, update, start)   # noqa: E731

    def one_by_one():   # in place, at the console's index
        def put(k, out):
            return jax.lax.dynamic_update_slice(
                out, jax.lax.dynamic_slice_in_dim(update, k, 1),
                (k,) + tuple(console_item(s, k) for s in start))
        return jax.lax.fori_loop(0, axis_size, put, array)

    return small_batch_on_cpu(axis_size, one_by_one, scatter), True


SELECT_MAX = 256
"""The largest array (elements per console) that the accelerator's
lowering updates by a select over the whole array (`selected`) rather
than a scatter: its registers, RAM and TIA-write slots, not a screen."""


def _selects(array: jax.Array, update: jax.Array) -> bool:
    """Whether a batched update is `selected`'s kind: a small array, the
    update one element or the whole extent along each axis."""
    inner, part = array.shape[1:], update.shape[1:]
    return (0 < len(inner) and math.prod(inner) <= SELECT_MAX
            and all(u in (1, a) for u, a in zip(part, inner)))


def selected(array: jax.Array, update: jax.Array,
             start: tuple[jax.Array, ...]) -> jax.Array:
    """A batch's `dynamic_update_slice`s as one elementwise select, for
    updates one element (or the whole extent) along each axis: the same
    bits, with the start as `lax.dynamic_update_slice` takes it (a
    negative one counted from the end, then clamped into range).

    A scatter is a kernel of its own on a GPU; a select fuses with the
    elementwise work around it. Compiled for an H100
    (`benchmarks/gpu_aot.py`), the accelerator's instruction loop
    (`packed`) launched 47 kernels a trip this way against 58 with
    scatters (BENCHMARKS.md, "The GPU program without a GPU").
    """
    mask = jnp.ones(array.shape, bool)
    for axis, (size, extent) in enumerate(zip(update.shape[1:],
                                              array.shape[1:])):
        if size == 1:   # negative starts count from the end, as in JAX
            at = start[axis] + jnp.where(start[axis] < 0, extent, 0)
            at = jnp.clip(at, 0, extent - 1)
            iota = jax.lax.broadcasted_iota(jnp.int32, array.shape, axis + 1)
            mask &= iota == at.reshape((-1,) + (1,) * (array.ndim - 1))
    return jnp.where(mask, jnp.broadcast_to(update, array.shape), array)


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


def console_item(x: jax.Array, k: jax.Array) -> jax.Array:
    """`x[k]` for a traced console index `k` (a dynamic slice, not a
    gather)."""
    return jax.lax.dynamic_index_in_dim(x, k, keepdims=False)


def small_batch_on_cpu(axis_size: int, one_by_one, whole_batch):
    """`one_by_one()` for a batch of at most `KERNEL_MAX_BATCH` on the CPU,
    `whole_batch()` otherwise (both are traced for a small batch; the
    accelerator's lowering, `lowering.batch_conds()` false, takes
    `whole_batch()` on any backend; where nothing traced is lowered for
    another platform, `lowering.cpu_alone()`, only `one_by_one()`)."""
    if axis_size > KERNEL_MAX_BATCH or not lowering.batch_conds():
        return whole_batch()
    if lowering.cpu_alone():
        return one_by_one()
    return jax.lax.platform_dependent(cpu=one_by_one, default=whole_batch)


def set_item(array: jax.Array, index: jax.Array, value: jax.Array
             ) -> jax.Array:
    """`array.at[index].set(value)` for one index along the first axis
    (in range), through `update_slice`."""
    value = jnp.asarray(value, array.dtype).reshape((1,) + array.shape[1:])
    index = jnp.asarray(index, jnp.int32)
    zeros = (jnp.int32(0),) * (array.ndim - 1)
    return update_slice(array, value, (index,) + zeros)


class Groups(NamedTuple):
    """A batch cut into `slots` groups of `share` consecutive consoles,
    and in each the first console flagged (`first_in_groups`)."""
    share: int
    rows: jax.Array    # int32[slots]: each group's console (its first if
    #                    none is flagged)
    taken: jax.Array   # bool[batch]: the consoles chosen


def first_in_groups(flag: jax.Array, share: int) -> Groups:
    """The first console flagged in each group of `share` consecutive
    consoles of a batch (its size a multiple of `share`): an argmax over
    each group, one kernel on a GPU, no scan over the batch (as
    `jnp.nonzero` would make)."""
    groups = flag.reshape(-1, share)
    first = jnp.argmax(groups, axis=1).astype(jnp.int32)
    taken = (jnp.arange(share) == first[:, None]) & jnp.any(
        groups, axis=1, keepdims=True)
    return Groups(share, jnp.arange(groups.shape[0], dtype=jnp.int32)
                  * share + first, taken.reshape(flag.shape))


def take_rows(tree, groups: Groups):
    """Each group's chosen row (`groups.rows`) of every leaf of `tree` (a
    batch on the first axis), gathered as one array per dtype: on a GPU
    a gather a dtype, not one a leaf."""
    packing = lowering.Packing(tree, groups.taken.shape, limit=None)
    arrays, _ = packing.pack(tree)
    return packing.unpack(([rows[:, groups.rows] for rows in arrays], []))


def put_rows(tree, groups: Groups, part):
    """`tree` with the chosen rows of its leaves (`groups.taken`) set to
    `part`'s (`take_rows`' shapes), by a select over each group rather
    than a scatter, so that XLA can fuse it with what reads the result."""
    packing = lowering.Packing(tree, groups.taken.shape, limit=None)
    (arrays, _), (parts, _) = packing.pack(tree), packing.pack(part)
    taken = groups.taken.reshape(-1, groups.share)

    def put(rows, new):
        grouped = rows.reshape(rows.shape[0], -1, groups.share)
        return jnp.where(taken, new[:, :, None], grouped).reshape(rows.shape)
    return packing.unpack(([put(rows, new) for rows, new in
                            zip(arrays, parts)], []))
