"""A frame's TIA log, and the render phase that replays it with pixels.

Why
---
In the accelerator's lowering of the frame loop (`console._pixels_after`;
the CPU's draws pixels as the writes come, faster there), a frame's pixels
are not drawn while its instructions run. The instruction loop runs the
TIA without pixels (`render=False`): registers, object positions, the
render frontier and the collision latches, which is everything the CPU
can see. For a frame whose pixels are wanted, it also
logs every operation that moves the frontier, in order:

* each TIA write: the register, the byte, the CPU cycle it lands at (after
  the stalls of the instruction's earlier writes) and whether the CPU's
  previous access was a read (WSYNC);
* while the Cosmic Ark motion is on, each line end the console draws to
  before an instruction (`tia.draw_line_end`).

After the loop, `replay` starts from the TIA as the loop found it and
applies the same operations in the same order, now drawing pixels. Its
registers evolve exactly as the loop's did, so its pixels are the ones a
draw during the loop would have made: exact by construction, with no
screen in the instruction loop's carry and no pixel work per instruction.
Reads need no entry: they change only the collision latches and the last
read's clock, and the frame's end takes both from the loop's TIA.

Entries
-------
One int32 each: the byte in bits 0-7, the register (`address & 0x3F`) in
8-13, "previous access was a read" in 14, "line end" in 15, and the CPU
cycle in 16-30. A cycle past 0x7FFF is stored as 0x7FFF: only a write
past every scanline limit can have one, it ends the frame, so it is the
last entry, and a draw to any clock past the display's end draws the same
pixels.

Capacity
--------
A write that does not end the frame lands before scanline 343 (PAL's limit
of 342, plus one): before CPU cycle 343 * 76. No 6507 instruction writes
more often than BRK, 3 writes in 7 cycles (JSR 2 in 6, read-modify-write
2 in 5), so a frame logs at most 343 * 76 * 3 / 7 writes, plus the frame's
last instruction's 3, plus one line end per displayed row (250 at most).
`CAPACITY` is that bound, so the log cannot overflow; `append` still
never writes out of bounds.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxatari import tia, updates
from jaxatari.tia_tables import LINE, PAL_HEIGHT, PAL_MAX_SCANLINES

_CYCLES_PER_LINE = LINE // 3
CAPACITY = ((PAL_MAX_SCANLINES + 1) * _CYCLES_PER_LINE * 3 + 6) // 7 \
    + 3 + PAL_HEIGHT
"""Entries a frame can log at most (see the module docstring)."""
MAX_CYCLE = 0x7FFF
"""The largest cycle an entry stores (later ones are stored as this)."""
_READ_BIT = 1 << 14
_LINE_END_BIT = 1 << 15


@struct.dataclass
class FrameLog:
    """One console's log of this frame: `entries` int32[CAPACITY], the
    first `count` of them in order."""
    entries: jax.Array
    count: jax.Array


def empty() -> FrameLog:
    """A log with no entries."""
    return FrameLog(entries=jnp.zeros((CAPACITY,), jnp.int32),
                    count=jnp.int32(0))


def encode_write(address: jax.Array, value: jax.Array, cycle: jax.Array,
                 last_access_was_read: jax.Array) -> jax.Array:
    """The entry of a TIA write (the arguments of `tia.write`)."""
    return ((address & 0x3F) << 8 | (value & 0xFF)
            | jnp.where(last_access_was_read, _READ_BIT, 0)
            | jnp.minimum(cycle, MAX_CYCLE) << 16).astype(jnp.int32)


def line_end() -> jax.Array:
    """The entry of a draw to the next line end (`tia.draw_line_end`)."""
    return jnp.int32(_LINE_END_BIT)


def append(log: FrameLog, entry: jax.Array, on: jax.Array) -> FrameLog:
    """`log` with `entry` added if `on`.

    The entry is stored at `count` either way (where nothing counts yet, so
    the next entry overwrites it): one slice update, no select.
    """
    at = jnp.minimum(log.count, CAPACITY - 1)
    return FrameLog(entries=updates.set_item(log.entries, at, entry),
                    count=log.count + on.astype(jnp.int32))


def extend(log: FrameLog, entries: jax.Array, count: jax.Array
           ) -> FrameLog:
    """`log` with the first `count` of `entries` added, in one update:
    the rest are stored after them, where nothing counts yet (as
    `append` stores an entry that is not on), or dropped past the
    capacity."""
    at = log.count + jnp.arange(entries.shape[0])
    return FrameLog(entries=log.entries.at[at].set(entries, mode="drop"),
                    count=log.count + count)


def decode(entry: jax.Array) -> tuple[jax.Array, ...]:
    """An entry's register, byte, cycle, previous-access-was-read flag and
    line-end flag."""
    return ((entry >> 8) & 0x3F, entry & 0xFF, (entry >> 16) & MAX_CYCLE,
            (entry & _READ_BIT) != 0, (entry & _LINE_END_BIT) != 0)


def replay(state: tia.TIAState, log: FrameLog, k: jax.Array,
           ystart: jax.Array, allow_hmove_blanks: jax.Array,
           line_ends: bool) -> tia.TIAState:
    """Entry `k` of `log` applied to `state`, with pixels (nothing if
    `k >= log.count`).

    Args:
        state: the TIA replayed up to entry `k`, with its screen.
        log: the frame's log.
        k: the entry (the same for a whole batch).
        ystart: the game's first displayed scanline.
        allow_hmove_blanks: the game's HMOVE-blank property.
        line_ends: whether the log may hold line ends (static: the board
            has the Cosmic Ark motion); without them a write is all an
            entry can be, and no line end is traced.
    """
    register, value, cycle, read, is_line_end = decode(
        jax.lax.dynamic_index_in_dim(log.entries, k, keepdims=False))
    on = k < log.count
    if line_ends:   # each is a no-op where not enabled: no select
        state = tia.draw_line_end(state, ystart, True, on & is_line_end)
        on = on & ~is_line_end
    return tia.write(state, register, value, cycle, read, ystart,
                     allow_hmove_blanks, True, on)[0]
