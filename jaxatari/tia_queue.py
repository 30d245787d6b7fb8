"""TIA writes queued per console and applied many at a time (the CPU's
lowering of a batch's instruction loop).

Why
---
In the CPU's lowering a batch runs one instruction of every console per
trip of its loop, and applies the trip's TIA writes right after it: a
draw (object masks, collisions, registers) for every console of the
batch, masked, though only about a sixth of an env's consoles write the
TIA at an instruction. Here a console's writes wait in a queue of its
own instead, and the queues are applied together, slot by slot: a slot
of the drain is one such masked draw for the whole batch, and most
consoles have a write in most slots.

When a queued write may wait
----------------------------
A write's effects that the CPU can see before the TIA is drawn are taken
when it is queued (`enqueue`): its WSYNC stall goes on the CPU's cycles
and on the later writes' cycles (the entries hold their cycles with the
stalls added). The rest waits, except where the CPU could see it:

* a write of VSYNC (it may end the frame), of VBLANK (it switches the
  paddles' dump, which INPT0-3 read), or at or past the frame's scanline
  limit (it ends the frame) is *urgent*: the batch's queues are drained
  at the end of that instruction;
* where the frame draws the Cosmic Ark motion's line ends
  (`tia.line_end_due`, from the TIA as drawn), a write of HMM0 (which may
  turn the motion on) and every write of a console with the motion on
  are urgent too, so such a console's queue is empty before each
  instruction;
* a console that reads a collision latch with writes queued runs that
  instruction again in the next trip, after the drain
  (`bus.step`'s `undrawable`);
* a console that stops (its frame ended, its CPU jammed, the instruction
  cap reached) is drained before it stops, and a queue with no room for
  one more instruction's writes is drained.

The TIA thus sees the same writes, at the same clocks and in the same
order, as when each is applied at its instruction, and the CPU sees the
same bytes and cycles: the bits are the same (`tests/test_tia_queue.py`).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp

from jaxatari import bus, tia, tia_gather

SLOTS = 16
"""The TIA writes each console of a batch may queue in the CPU's lowering,
or 0 to apply each at its instruction (read when a frame is traced).
At 256 envs in play the preset stepped 1.36x to 1.48x faster at 16 than
at 0 on Pong, 1.24x to 1.37x on Ms. Pac-Man and 1.38x to 1.59x on
Breakout; 32 and 64 were no faster on Pong (BENCHMARKS.md, "TIA writes
queued in the CPU's lowering")."""

ENTRY = 4
"""An entry as `Console.log` holds it: address, value, CPU cycle (the
stalls before it added) and whether the access before was a read."""


class Queue(NamedTuple):
    """A batch's queued TIA writes.

    Attributes:
        entries: int32[batch, slots, ENTRY], in order from slot 0.
        count: int32[batch], the entries each console has queued.
    """
    entries: jax.Array
    count: jax.Array


def checked_slots() -> int:
    """`SLOTS`, checked: a queue must hold one instruction's writes."""
    if 0 < SLOTS < bus.MAX_TIA_WRITES:
        raise ValueError(
            f"tia_queue.SLOTS is {SLOTS}: a queue must hold an "
            f"instruction's {bus.MAX_TIA_WRITES} TIA writes; set it to "
            f"{bus.MAX_TIA_WRITES} or more, or to 0 for no queue")
    return SLOTS


def empty(batch: int, slots: int) -> Queue:
    """An empty queue of `slots` entries for each of `batch` consoles."""
    return Queue(jnp.zeros((batch, slots, ENTRY), jnp.int32),
                 jnp.zeros((batch,), jnp.int32))


def room_left(queue: Queue) -> jax.Array:
    """How many more entries each console's queue holds."""
    return queue.entries.shape[1] - queue.count


def enqueue(state, queue: Queue, on: jax.Array,
            anywhere: Callable[[jax.Array], jax.Array],
            line_ends: bool = False):
    """The batch's just-logged TIA writes (`state.log`, a console's
    `log_count` of them) queued for the consoles `on`, their WSYNC stalls
    put on the CPU's cycles.

    Args:
        state: the batch's console state after the instruction.
        queue: the batch's queue, with room for every logged write.
        on: the consoles whose writes to queue.
        anywhere: whether a flag holds for some console of the batch.
        line_ends: whether the frame draws the Cosmic Ark motion's line
            ends (static).

    Returns:
        The state (log spent, cycles stalled), the queue, and which
        consoles queued an urgent write (see the module's docstring).
    """
    slots = state.log.shape[-2]
    counts = jnp.where(on, jnp.minimum(state.log_count, slots), 0)
    frame_limit = tia.frame_limit_clock(state.tia)
    motion = (state.tia.cosmic != 0) if line_ends else False
    positions = jnp.arange(queue.entries.shape[1])

    def body(carry):
        k, entries, count, waited, urgent = carry
        address, value, cycle, last_read = tia_gather.logged_write(
            jnp.take(state.log, k, axis=1).T, waited)
        writes = k < counts
        reg = address & 0x3F
        waited = waited + tia.wsync_wait(state.tia.frame_start, reg, cycle,
                                         last_read, writes)
        entry = jnp.stack([address, value, cycle,
                           last_read.astype(jnp.int32)], axis=-1)
        at = writes[:, None] & (positions[None, :] == count[:, None])
        entries = jnp.where(at[..., None], entry[:, None, :], entries)
        urgent = urgent | (writes & (
            (reg == tia.VSYNC) | (reg == tia.VBLANK)
            | (cycle * 3 >= frame_limit)
            | (line_ends & (reg == tia.HMM0)) | motion))
        return k + 1, entries, count + writes, waited, urgent

    zeros = jnp.zeros_like(counts)
    _, entries, count, waited, urgent = jax.lax.while_loop(
        lambda carry: anywhere(carry[0] < counts), body,
        (jnp.int32(0), queue.entries, queue.count, zeros,
         jnp.zeros_like(on)))
    cpu = state.cpu.replace(cycles=state.cpu.cycles + waited)
    return (state.replace(cpu=cpu, log_count=zeros), Queue(entries, count),
            urgent)


def settle(state, queue: Queue, running: jax.Array, deferred: jax.Array,
           stops: jax.Array, drain: Callable,
           anywhere: Callable[[jax.Array], jax.Array],
           line_ends: bool = False):
    """After a trip's instruction: the writes of the consoles that ran it
    queued (`enqueue`), and the batch's queues drained if some running
    console needs it: it was `deferred` (read a latch with writes
    queued), it queued an urgent write, it `stops` (jammed, or at the
    instruction cap), or its queue has no room for another instruction's
    writes.

    Args:
        drain: `(state, queue) -> (state, ends)`: every queued write
            applied in order, the CPU left as it was (the stalls are on
            it already), and which consoles' frames the writes ended
            (`console._drain`).

    Returns:
        The state, the queue, and which consoles' frames the writes ended.
    """
    state, queue, urgent = enqueue(state, queue, running & ~deferred,
                                   anywhere, line_ends)
    drains = running & (deferred | urgent | stops | (
        room_left(queue) < bus.MAX_TIA_WRITES))
    drained = anywhere(drains)
    state, ends = jax.lax.cond(drained, lambda: drain(state, queue),
                               lambda: (state, jnp.zeros_like(running)))
    return state, queue._replace(count=jnp.where(drained, 0,
                                                 queue.count)), ends
