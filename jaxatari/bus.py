"""The Atari 2600's bus: how an instruction reaches the chips.

The 6507 drives 13 address lines, but Stella hands every device the full
16-bit address (the FE cartridge looks at bit 13). Decoding:

* A12 = 1: the cartridge (`cart.read` / `cart.write`; reads and writes
  both hit hotspots; Superchip RAM and the DPC chip live there too);
* A12 = 0, A7 = 1: the RIOT (A9 = 0: RAM, A9 = 1: ports and timer);
* A12 = 0, A7 = 0: the TIA.

Every access puts its byte on the data bus; TIA reads return that previous
byte's low 6 bits as noise. TIA *writes* are logged during the instruction
(up to three: JSR and BRK can push into the TIA) and applied right after it,
each drawing the screen up to its clock first. TIA *reads* see the collision
latches as a draw up to the read's cycle would leave them (`tia.collide`,
without moving the frontier: in the CPU's lowering the instruction runs
again, latches drawn, where it read one (`_speculative_step`); in the
accelerator's they are drawn before it runs, for an instruction that may
read one: `collision_read` plans its accesses by peeking); the screen
is drawn up to the frame's last read only when the frame loop stops, which
gives Stella's pixels because registers change only at writes. This is exact
because M6502Low makes all of an instruction's accesses at one cycle, its
end, save that a page-crossing penalty delays the data read by one, and the
plan knows which (only an instruction that read latches both before and
after its penalty, through a (zp),Y pointer in the TIA, would see the first
read's latches one cycle late).

Skipping work
-------------
Work that no console of a batch needs is skipped by a `lax.cond` on a
batch-wide flag (`when_any`) in the CPU's lowering; the accelerator's does
the work, masked (`jaxatari.lowering`).
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

from jaxatari import cart, cpu6502, folds, lowering, riot, tia, updates

if TYPE_CHECKING:   # console imports this module
    from jaxatari.console import Board, Console, Inputs

MAX_TIA_WRITES = 3
"""TIA writes one instruction may log (JSR and BRK push up to three)."""


def atari_bus(board: Board, inputs: Inputs, speculate: bool = False,
              axis_name: str | None = None) -> cpu6502.Bus:
    """The Atari bus; `speculate` (static) only notes DPC chip accesses
    (`cart.read`).

    An access that no console of the batch (`axis_name`) makes is skipped
    (`when_any`): an instruction makes 1 to 7 of the CPU's 12 access
    calls. Each evaluates the cart and RIOT RAM, and the chips'
    registers only where some console reads one (`_chip_reads`).
    """
    def read(state: Console, address, cycle, enabled):
        in_cart = (address & 0x1000) != 0
        in_riot = ~in_cart & ((address & 0x80) != 0)
        in_tia = enabled & ~in_cart & ~in_riot
        cart_value, segments, chips = cart.read(
            board.cart, state.segments, state.chips, address, cycle,
            enabled & in_cart, speculate)
        new_riot, riot_value, tia_value = _chip_reads(
            state, inputs, address, cycle, enabled & in_riot, in_tia,
            axis_name)
        value = jnp.where(in_cart, cart_value,
                          jnp.where(in_riot, riot_value, tia_value))
        return state.replace(
            segments=segments, chips=chips, riot=new_riot,
            tia=tia.note_read(state.tia, cycle * 3, in_tia),
            data_bus=jnp.where(enabled, value, state.data_bus),
            last_read=state.last_read | enabled), value

    def write(state: Console, address, value, cycle, enabled):
        in_cart = (address & 0x1000) != 0
        in_riot = ~in_cart & ((address & 0x80) != 0)
        in_tia = enabled & ~in_cart & ~in_riot
        segments, chips = cart.write(board.cart, state.segments,
                                          state.chips, address, value,
                                          enabled & in_cart, speculate)
        entry = jnp.stack([address, value, cycle,
                           state.last_read.astype(jnp.int32)])
        slot = jnp.minimum(state.log_count, MAX_TIA_WRITES - 1)
        log = updates.set_item(state.log, slot,
                               jnp.where(in_tia, entry, state.log[slot]))
        return state.replace(
            segments=segments, chips=chips,
            riot=riot.write(state.riot, address, value, cycle,
                            enabled & in_riot),
            log=log, log_count=state.log_count + in_tia,
            data_bus=jnp.where(enabled, value, state.data_bus),
            last_read=state.last_read & ~enabled)

    def skipping_read(state: Console, address, cycle, enabled):
        def access():
            new, value = read(state, address, cycle, enabled)
            return new, value.astype(jnp.int32)
        return when_any(enabled, axis_name, access, (state, jnp.int32(0)))

    def skipping_write(state: Console, address, value, cycle, enabled):
        return when_any(enabled, axis_name, lambda: write(
            state, address, value, cycle, enabled), state)

    return cpu6502.Bus(read=skipping_read, write=skipping_write)


def _chip_reads(state: Console, inputs: Inputs, address, cycle, in_riot,
                in_tia, axis_name: str | None):
    """A read's RIOT and TIA parts, for consoles reading the RIOT
    (`in_riot`) or the TIA (`in_tia`): the new RIOT state, the RIOT's
    byte and the TIA's byte.

    RIOT RAM is read always. The RIOT's ports and timer and the TIA's
    registers are read only where some console of the batch reads one
    (`when_any`): the opcode and operand fetches almost never do, and
    evaluating both chips' registers at every read was 4% to 7% of the
    preset's step on the CPU (BENCHMARKS.md, "The chips' registers read
    only when read").
    """
    riot_io = in_riot & ~riot.is_ram(address)

    def registers():
        riot_state, io_value = riot.read_io(
            state.riot, address, cycle, inputs.swcha, inputs.swchb, riot_io)
        return riot_state, io_value, tia.read(
            state.tia, address, cycle, state.data_bus, inputs._asdict())
    new_riot, io_value, tia_value = when_any(
        riot_io | in_tia, axis_name, registers,
        (state.riot, jnp.int32(0), jnp.int32(0)))
    riot_value = jnp.where(riot.is_ram(address),
                           riot.ram_byte(state.riot, address), io_value)
    return new_riot, riot_value, tia_value


def when_any(flag: jax.Array, axis_name: str | None, work, unchanged):
    """`work()` if `flag` holds for any console of the batch (`axis_name`:
    its vmap axis, or None for one console), else `unchanged` (what `work`
    gives where `flag` is off for all). The flag is summed over the batch
    so that `lax.cond` branches under vmap too, not selects. The
    accelerator's lowering has no conditional here (`lowering`): it always
    does the work, which for consoles without `flag` leaves them as
    `unchanged`."""
    if not lowering.batch_conds():
        return work()
    return jax.lax.cond(_anywhere(flag, axis_name), work, lambda: unchanged)


def peek(board: Board, state: Console, address: jax.Array):
    """The byte at `address` without side effects, and whether that is
    what a real read would give: cart ROM (and Superchip RAM) away from
    hotspots and DPC registers, or RIOT RAM."""
    address = jnp.asarray(address, jnp.int32)
    in_cart = (address & 0x1000) != 0
    offset = address & 0xFFF
    cart_plain = (board.cart.hotspot_mask[offset] == 0) & ~(
        board.cart.dpc & (offset < 0x80))
    riot_ram = (address & 0x1280) == 0x80
    value = jnp.where(in_cart, cart.opcode_byte(
        board.cart, state.segments, state.chips, address),
        riot.ram_byte(state.riot, address))
    return value, jnp.where(in_cart, cart_plain, riot_ram)


def collision_read(board: Board, state: Console, running: jax.Array):
    """Whether the next instruction may read a collision latch, and the
    clock of that read.

    The instruction is planned by `cpu6502.step` on a bus that only peeks
    (`peek`) and notes each read; only its addresses are used, so XLA
    keeps little more than the address arithmetic. The bytes that later
    addresses come from (the opcode, operands, pointers and pulled return
    address: the first four reads) must be peeked truly; where one is not
    (a hotspot, a DPC register, the TIA or the RIOT's ports) the answer is
    a conservative yes, at the instruction's planned data cycle.
    """
    def note(reads, address, cycle, enabled):
        value, plain = peek(board, state, address)
        return reads + ((address, cycle, enabled, plain),), value

    _, reads = cpu6502.step(state.cpu, (), cpu6502.Bus(
        read=note, write=lambda reads, *_: reads), running)
    address, cycle, enabled, plain = (jnp.stack(column)
                                      for column in zip(*reads))
    collision = enabled & _is_collision(address)
    unsure = folds.any_along(enabled[:4] & ~plain[:4])
    collides = folds.any_along(collision)
    clock = jnp.where(collides, folds.max_along(jnp.where(
        collision, cycle, 0)), folds.max_along(jnp.where(enabled, cycle,
                                                         0))) * 3
    return collides | unsure, clock


SPECULATIVE_LATCHES = True
"""Whether the CPU's lowering runs an instruction speculatively and again
where it read a collision latch (`_speculative_step`), or plans it and
sets the latches first (`collision_read`), as the accelerator's does.
Read when a step is traced (a benchmark sets it to time both)."""


def _is_collision(address: jax.Array) -> jax.Array:
    """Whether a read of `address` reads a TIA collision latch."""
    return ((address & 0x1080) == 0) & ((address & 0xF) < 8)


def _noting_collision_reads(bus: cpu6502.Bus) -> cpu6502.Bus:
    """`bus` with a carry of (state, whether a collision latch was read,
    the latest such read's cycle)."""
    def read(carry, address, cycle, enabled):
        state, seen, last = carry
        state, value = bus.read(state, address, cycle, enabled)
        hit = enabled & _is_collision(jnp.asarray(address, jnp.int32))
        return (state, seen | hit,
                jnp.where(hit, jnp.maximum(last, cycle), last)), value

    def write(carry, address, value, cycle, enabled):
        state, seen, last = carry
        return bus.write(state, address, value, cycle, enabled), seen, last
    return cpu6502.Bus(read=read, write=write)


def _speculative_step(board: Board, inputs: Inputs, state: Console,
                      running: jax.Array, axis_name: str | None,
                      undrawable: jax.Array):
    """`step` for a lowering with batch-wide conds, without a DPC chip:
    the instruction run with the latches as they are, and again, for the
    batch, where some console of it read one, those consoles' latches
    drawn up to the read. A console that read none reads the same in
    both runs, so the last run is exact for every console. The two runs
    are one traced step in a loop of one or two trips (its predicate is
    over the batch: no select of the state), so the step is traced and
    compiled once.

    A console `undrawable` (its TIA writes still queued: the latches
    cannot be drawn yet) that read a latch does not run in the second
    trip: it is left as it was, and the third result says so."""
    bus = _noting_collision_reads(atari_bus(board, inputs,
                                            axis_name=axis_name))

    def run(carry):
        trip, _, _, read, cycle, _ = carry
        deferred = read & undrawable
        latched = latch_collisions(board, state, read & ~deferred,
                                   cycle * 3, axis_name)
        cpu, (after, read, cycle) = cpu6502.step(
            state.cpu, (latched, jnp.asarray(False), jnp.int32(0)), bus,
            running & ~deferred)
        return trip + 1, cpu, after, read & running, cycle, deferred

    def again(carry):
        trip, read = carry[0], carry[3]
        return (trip == 0) | ((trip == 1) & _anywhere(read, axis_name))
    _, cpu, after, _, _, deferred = jax.lax.while_loop(
        again, run, (jnp.int32(0), state.cpu, state, jnp.asarray(False),
                     jnp.int32(0), jnp.asarray(False)))
    return cpu, after, deferred


def _anywhere(flag: jax.Array, axis_name: str | None) -> jax.Array:
    """Whether `flag` holds for some console of the batch (`axis_name`)."""
    count = flag.astype(jnp.int32)
    if axis_name is not None:
        count = jax.lax.psum(count, axis_name)
    return count > 0


def latch_collisions(board: Board, state: Console, reads: jax.Array,
                     clock: jax.Array, axis_name: str | None) -> Console:
    """Where `reads`, the collision latches as a draw up to `clock` would
    leave them (`tia.collide`), for a TIA read to see; skipped by the
    CPU's lowering where no console of the batch (`axis_name`) reads."""
    latches = lambda: tia.collide(state.tia, clock, board.ystart).collision
    return state.replace(tia=state.tia.set(collision=when_any(
        reads, axis_name, lambda: jnp.where(reads, latches(),
                                            state.tia.collision),
        state.tia.collision)))


def speculates(state: Console, latched: bool = False) -> bool:
    """Whether `step` runs the instruction speculatively
    (`_speculative_step`): in a lowering with batch-wide conds, unless
    `latched` or the board has a DPC chip (static)."""
    return (not latched and lowering.batch_conds() and SPECULATIVE_LATCHES
            and state.chips.dpc is None)


def step(board: Board, inputs: Inputs, state: Console, running: jax.Array,
          axis_name: str | None, latched: bool = False,
          undrawable: jax.Array | None = None):
    """`cpu6502.step` on the Atari bus, if `running`.

    A TIA read sees the collisions up to its cycle, drawn without moving
    the frontier. With `latched` (static) the caller has set the latches
    already (the accelerator's loop gathers the few consoles that need
    them: `tia_gather.latch`). Otherwise, where the lowering has batch-wide
    conds (the CPU's), the instruction first runs speculatively and notes
    its collision reads (`_noting_collision_reads`); if any running
    console of the batch made one, it runs again for all, from the same
    state, with those consoles' latches drawn up to the read
    (`_speculative_step`). Elsewhere the latches are set before the
    instruction, where a plan of it (`collision_read`) says it may read
    one (and so with a DPC chip compiled in). (A draw at the read itself
    would be traced at each of the CPU's 8 read calls: twice the compile
    time.) With a DPC chip, the instruction first runs speculatively,
    with the chip's cheap part only; if any running console of the batch
    touched chip data, it runs again exactly, for all (a `lax.cond` on a
    batch-wide flag, so instructions that touch no chip data pay for the
    cheap part only).

    `undrawable` (only where `speculates`): the consoles whose latches
    cannot be drawn (their TIA writes are queued); one that reads a latch
    is left as it was, and a third result, which consoles were, is
    returned.
    """
    if speculates(state, latched):
        cpu, after, deferred = _speculative_step(
            board, inputs, state, running, axis_name,
            jnp.asarray(False) if undrawable is None else undrawable)
        return (cpu, after) if undrawable is None else (cpu, after, deferred)
    if undrawable is not None:
        raise ValueError("only a speculative step defers consoles")
    if not latched:
        reads, clock = collision_read(board, state, running)
        state = latch_collisions(board, state, reads, clock, axis_name)
    bus = functools.partial(atari_bus, board, inputs, axis_name=axis_name)
    if state.chips.dpc is None:
        return cpu6502.step(state.cpu, state, bus(), running)
    state = state.replace(chips=state.chips.replace(
        dpc_touched=jnp.asarray(False)))
    guess = cpu6502.step(state.cpu, state, bus(True), running)
    cpu, after = when_any(
        guess[1].chips.dpc_touched & running, axis_name,
        lambda: cpu6502.step(state.cpu, state, bus(), running), guess)
    return cpu, after.replace(chips=after.chips.replace(
        dpc_touched=jnp.asarray(False)))
