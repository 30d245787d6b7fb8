"""Splitting a batch of consoles over devices.

Every device runs its share of the batch as an independent program
(`jax.shard_map`), so each share's frame loop stops when *its* consoles are
done. Handing XLA a sharded batch instead (`jit` with a sharded input) makes
one loop over the whole batch whose predicate, "does any console still
run", needs a cross-device reduction every instruction: on a 2-core CPU
that made a 16-console lock-step frame three times slower than on one
device (0.62 s against 1.88 s, measured with `lockstep._frames`).

On the CPU one XLA host device per core gives the cores to the batch
(`XLA_FLAGS=--xla_force_host_platform_device_count=N`, set by the benchmark
scripts before JAX starts). The same code spreads a batch over GPUs.
"""
from __future__ import annotations

from typing import Callable

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

AXIS = "batch"


def batch_mesh(size: int) -> Mesh:
    """A 1-D mesh of as many devices as divide `size` evenly."""
    devices = jax.devices()
    count = max(n for n in range(1, len(devices) + 1) if size % n == 0)
    return Mesh(np.array(devices[:count]), (AXIS,))


def batch_sharding(mesh: Mesh) -> NamedSharding:
    """Leading axis split over `mesh`."""
    return NamedSharding(mesh, PartitionSpec(AXIS))


def replicated(mesh: Mesh) -> NamedSharding:
    """A copy on every device of `mesh`."""
    return NamedSharding(mesh, PartitionSpec())


def over_batch(fn: Callable, mesh: Mesh, batched_args: tuple[bool, ...],
               donate_argnums: tuple[int, ...] = ()) -> Callable:
    """`fn` run on each device's share of the batch, jitted.

    Args:
        fn: a function of batched arrays (leading batch axis) whose outputs
            are all batched.
        mesh: from `batch_mesh`.
        batched_args: per positional argument, whether it is split over the
            batch (True) or the same for every device (False).
        donate_argnums: the arguments whose buffers the call may reuse
            for its outputs (`jax.jit`'s), e.g. a state passed in a loop.

    Returns:
        The jitted, sharded function.
    """
    specs = tuple(PartitionSpec(AXIS) if b else PartitionSpec()
                  for b in batched_args)
    return jax.jit(jax.shard_map(fn, mesh=mesh, in_specs=specs,
                                 out_specs=PartitionSpec(AXIS),
                                 check_vma=False),
                   donate_argnums=donate_argnums)
