"""A flat 64 KiB bus for the CPU: plain memory, no devices.

The tests and `benchmarks/cpu.py` run `cpu6502` on it; games run on the
Atari bus of `console.py`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxatari import cpu6502
from jaxatari.cpu6502 import Bus

MAX_WRITES = 3  # the most writes one instruction makes (BRK)


@struct.dataclass
class FlatMemory:
    """State of the flat bus: 64 KiB of memory and this instruction's writes.

    Writes are held in `pending_*` until `settle`, at the start of the next
    instruction, scatters them into `memory` at once; reads see them before
    that. Each instruction's reads then all come from the version of
    `memory` that its first operation wrote, which lets XLA update it in
    place. (Scattering at each write made XLA copy all 64 KiB per write.)
    """
    memory: jax.Array           # uint8[65536]
    pending_address: jax.Array  # int32[MAX_WRITES]; 65536 = empty
    pending_value: jax.Array    # int32[MAX_WRITES]
    num_pending: jax.Array      # int32


def flat_memory(memory: jax.Array | np.ndarray) -> FlatMemory:
    """Wraps a uint8[65536] array as the state of `FLAT_BUS`."""
    memory = jnp.asarray(memory, jnp.uint8)
    assert memory.shape[-1] == 0x10000, memory.shape
    empty = jnp.full(memory.shape[:-1] + (MAX_WRITES,), 0x10000, jnp.int32)
    return FlatMemory(memory=memory, pending_address=empty,
                      pending_value=jnp.zeros_like(empty),
                      num_pending=jnp.zeros(memory.shape[:-1], jnp.int32))


def _flat_read(state: FlatMemory, address, cycle, enabled):
    del cycle, enabled  # plain memory: reads have no side effects
    address = address & 0xFFFF
    value = state.memory[address].astype(jnp.int32)
    for i in range(MAX_WRITES):  # later writes win
        hit = state.pending_address[i] == address
        value = jnp.where(hit, state.pending_value[i], value)
    return state, value


def _flat_write(state: FlatMemory, address, value, cycle, enabled):
    del cycle
    slot = jnp.where(enabled, state.num_pending, MAX_WRITES)
    return state.replace(
        pending_address=state.pending_address.at[slot].set(
            address & 0xFFFF, mode="drop"),
        pending_value=state.pending_value.at[slot].set(value, mode="drop"),
        num_pending=state.num_pending + enabled)


def _flat_settle(state: FlatMemory) -> FlatMemory:
    memory = state.memory.at[state.pending_address].set(
        state.pending_value.astype(jnp.uint8), mode="drop")
    return FlatMemory(memory=memory,
                      pending_address=jnp.full_like(state.pending_address,
                                                    0x10000),
                      pending_value=state.pending_value,
                      num_pending=jnp.zeros_like(state.num_pending))


#: A bus whose state is a `FlatMemory`: 64 KiB of RAM, no devices.
FLAT_BUS = Bus(read=_flat_read, write=_flat_write, settle=_flat_settle)


def random_programs(batch: int, seed: int = 0
                    ) -> tuple[cpu6502.CPUState, FlatMemory]:
    """`batch` CPUs, each on its own random code: random memory (the JAM
    opcodes replaced by NOP) and random registers, so a batch diverges at
    once (the workload of `benchmarks/cpu.py`), as numpy arrays.

    Args:
        batch: how many CPUs.
        seed: numpy's seed for the draws.

    Returns:
        The CPUs' state and their `FlatMemory`.
    """
    rng = np.random.default_rng(seed)
    memory = rng.integers(0, 256, (batch, 0x10000), np.uint8)
    memory[np.isin(memory, cpu6502.JAM_OPCODES)] = 0xEA
    regs = rng.integers(0, 256, (6, batch)).astype(np.int32)
    regs[4] = rng.integers(0, 0x10000, batch)
    cpu = cpu6502.CPUState(
        a=regs[0], x=regs[1], y=regs[2], sp=regs[3], pc=regs[4],
        p=regs[5] | 0x30, cycles=np.zeros(batch, np.int32),
        jammed=np.zeros(batch, bool))
    return cpu, flat_memory(memory)
