"""A batch's instructions in one Pallas kernel, its TIA writes queued (the
GPU's frame loop).

XLA runs the accelerator's instruction loop (`console._accelerator_step`)
as a few dozen kernel launches an emulated instruction, so a Pong frame of
about 6,800 instructions is some 230,000 launches at 4,096 consoles. Most
instructions need none of that machinery: about 4 in 5 of Pong's touch
only the cartridge's ROM and the RIOT, and most of the rest only write the
TIA. This module runs those in one kernel, a thread a console.

The state machine, for each console of a block (`run`):

* **ready** (no TIA writes of XLA's waiting, frame not over, under the
  cap): the kernel executes the next instruction (`cpu6502.step`,
  unchanged) on a bus whose ROM, hotspot table and RIOT RAM are refs,
  with the RIOT's own timer and ports (`riot.read_io` / `riot.write_io`);
  its TIA writes are held, as `bus` logs them (address, value, cycle,
  whether the access before was a read);
* if the instruction made no **event** it lands: its registers and RIOT
  state are kept, its RAM writes (held in `WRITE_SLOTS` slots until then)
  are stored, its TIA writes join the console's **queue** (`QUEUE`
  entries), each at its cycle after the WSYNC stalls before it, and the
  CPU's cycles take the instruction's stalls (`tia.wsync_wait`, as
  `console._write_logged` counts them); the console stays ready, for up to
  `steps` instructions;
* an event is a TIA read, a VSYNC write, a TIA write past the frame's
  scanline limit (VSYNC's and those are the writes that can end a frame),
  a TIA write the queue has no room for, a cartridge hotspot or a
  Superchip's RAM ports: the kernel undoes the instruction (registers
  selected back, writes dropped) and the console is **at an event**;
* the kernel ends when no console of its block is ready.

The caller (`console._kernel_trip`) then applies the first few queued
writes of each console (`tia.write`, in order: the TIA sees the same
writes at the same clocks as in XLA's loop) and runs XLA's step for the
consoles at an event whose queue is empty, and repeats until no console
runs. The bits are the CPU lowering's (`tests/test_plain_kernel.py`, the
kernel in Pallas's interpreter; the GPU's digest in BENCHMARKS.md).

Limits (`supports`): one game's batch on a shared board, a cartridge
without the DPC chip or Cosmic Ark's line ends (Pitfall II and Journey
Escape of ale-py's 104 ROMs).
"""
from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp

from jaxatari import cart, cpu6502, riot, tia
from jaxatari.bus import MAX_TIA_WRITES

STEPS = 64
"""Instructions a console may run per kernel call (Pong reads the TIA or
makes another event about every 20)."""
QUEUE = 16
"""TIA writes a console may queue (`run`'s `queue`): an instruction whose
writes would overflow it is an event."""
ENTRY = 4
"""A queued write's ints: address, value, CPU cycle (its stalls counted),
whether the access before it was a read (`Console.log`'s entries)."""
BLOCK = 128
"""Consoles per Pallas program on a GPU (a thread each, 4 warps)."""
WRITE_SLOTS = 4
"""RAM writes an instruction may make (the CPU's write calls)."""
CPU_FIELDS = ("a", "x", "y", "sp", "pc", "p", "cycles", "jammed")
RIOT_FIELDS = ("timer", "shift", "set_cycle", "interrupt_cycle",
               "read_after_interrupt", "ddra", "ddrb")
FIELDS = (tuple(f"cpu.{n}" for n in CPU_FIELDS)
          + tuple(f"riot.{n}" for n in RIOT_FIELDS)
          + ("data_bus", "last_read", "seg0", "seg1", "seg2", "seg3",
             "bit13", "swcha", "swchb", "count", "ready", "at_event",
             "frame_start", "late_clock", "queued"))
ROWS = 32
"""The lane block's rows: `FIELDS`, padded to a power of 2 (Triton)."""


CART_RAM_WINDOW = 0x100
"""A Superchip cart's RAM ports: its offsets below this (writes below
$080, reads from $080), events to the kernel, which holds no cart RAM."""


def supports(board: Any) -> bool:
    """Whether the kernel runs `board`'s cartridge: not the DPC chip (its
    registers and clocked counters) nor Cosmic Ark's line ends (drawn
    before any instruction)."""
    features = board.features
    return not (features.dpc or features.cosmic_lines)


def _events(board: Any) -> jax.Array:
    """int32[4096], nonzero at the cart offsets whose access is an event:
    its hotspots, and a Superchip's RAM ports."""
    hot = jnp.asarray(board.cart.hotspot_mask, jnp.int32)
    if board.features.cart_ram:
        hot = jnp.where(jnp.arange(hot.shape[0]) < CART_RAM_WINDOW, 1, hot)
    return hot


class _RefRow:
    """An opcode's row of `cpu6502.CONTROL_TABLE`, each column read
    through the table's ref when indexed (`cpu6502.step`'s `control`)."""

    def __init__(self, table_ref, opcode: jax.Array):
        self.table_ref, self.opcode = table_ref, opcode

    def __getitem__(self, column: int) -> jax.Array:
        return self.table_ref[self.opcode, jnp.full_like(self.opcode,
                                                         column)]


def _pack(state, inputs, board, ready: jax.Array, count: jax.Array,
          queued: jax.Array) -> jax.Array:
    """The lane rows (`FIELDS`) of a batch, int32[ROWS, B]."""
    lead = ready.shape
    rows = [getattr(state.cpu, n) for n in CPU_FIELDS]
    rows += [getattr(state.riot, n) for n in RIOT_FIELDS]
    rows += [state.data_bus, state.last_read]
    rows += [state.segments[:, k] for k in range(4)]
    rows += [board.cart.bit13_offset, inputs.swcha, inputs.swchb, count,
             ready, jnp.zeros(lead, bool), state.tia.frame_start,
             tia.frame_limit_clock(state.tia), queued]
    rows = [jnp.broadcast_to(jnp.asarray(r).astype(jnp.int32), lead)
            for r in rows]
    pad = [jnp.zeros(lead, jnp.int32)] * (ROWS - len(rows))
    return jnp.stack(rows + pad)


def _unpack(lanes: jax.Array, ram: jax.Array, state):
    """The batch's state, count, at-event flags and queued writes' count
    from the lane rows."""
    row = {name: lanes[k] for k, name in enumerate(FIELDS)}
    like = lambda x, name: row[name].astype(x.dtype)
    cpu = state.cpu.replace(**{n: like(getattr(state.cpu, n), f"cpu.{n}")
                               for n in CPU_FIELDS})
    riot_state = state.riot.replace(
        ram=ram, **{n: like(getattr(state.riot, n), f"riot.{n}")
                    for n in RIOT_FIELDS})
    state = state.replace(cpu=cpu, riot=riot_state,
                          data_bus=like(state.data_bus, "data_bus"),
                          last_read=like(state.last_read, "last_read"))
    return state, row["count"], row["at_event"] != 0, row["queued"]


def _decode(hot_ref, address: jax.Array):
    """Where an access goes: (cartridge, RIOT, RIOT RAM, the TIA, a
    cartridge event)."""
    in_cart = (address & 0x1000) != 0
    in_riot = ~in_cart & ((address & 0x80) != 0)
    hot = in_cart & (hot_ref[address & 0xFFF] != 0)
    return (in_cart, in_riot, (address & 0x0200) == 0, ~in_cart & ~in_riot,
            hot)


def _rom_index(address: jax.Array, fixed: dict) -> jax.Array:
    """The cartridge image's index of a ROM read (`cart`'s segments)."""
    offset = address & 0xFFF
    segment = offset >> 10
    base = jnp.where(segment == 0, fixed["seg0"], jnp.where(
        segment == 1, fixed["seg1"], jnp.where(
            segment == 2, fixed["seg2"], fixed["seg3"])))
    extra = jnp.where((address & 0x2000) == 0, fixed["bit13"], 0)
    return jnp.clip(base + (offset & 0x3FF) + extra, 0,
                    cart.IMAGE_SIZE - 1)   # XLA's gather clamps too


def _kernel_bus(image_ref, hot_ref, ram_ref, lanes: jax.Array,
                fixed: dict) -> cpu6502.Bus:
    """`cpu6502.Bus` for the kernel: ROM and RIOT through refs, TIA writes
    held in the bus state's `tia` slots, and an event noted (not made) at
    a TIA read, a VSYNC write or a hotspot access."""
    def read(bus_state, address, cycle, enabled):
        address = address.astype(jnp.int32)
        in_cart, in_riot, is_ram, in_tia, hot = _decode(hot_ref, address)
        rom = image_ref[_rom_index(address, fixed)].astype(jnp.int32)
        ram = ram_ref[lanes, address & 0x7F].astype(jnp.int32)
        new_riot, io = riot.read_io(bus_state["riot"], address, cycle,
                                    fixed["swcha"], fixed["swchb"],
                                    enabled & in_riot & ~is_ram)
        value = jnp.where(in_cart, rom, jnp.where(is_ram, ram, io))
        return {**bus_state, "riot": new_riot,
                "data_bus": jnp.where(enabled, value, bus_state["data_bus"]),
                "last_read": bus_state["last_read"] | enabled,
                "event": bus_state["event"] | (enabled & (in_tia | hot))
                }, value

    def write(bus_state, address, value, cycle, enabled):
        address, value = address.astype(jnp.int32), value.astype(jnp.int32)
        _, in_riot, is_ram, in_tia, hot = _decode(hot_ref, address)
        vsync = in_tia & ((address & 0x3F) == tia.VSYNC)
        to_ram = enabled & in_riot & is_ram
        slot = bus_state["writes"]
        pending = _hold(bus_state["pending"], slot, (
            jnp.ones_like(address), address & 0x7F, value), to_ram)
        return {**bus_state, "pending": pending,
                "writes": slot + to_ram.astype(jnp.int32),
                **_tia_written(bus_state, address, value, cycle,
                               enabled & in_tia & ~vsync),
                "riot": riot.write_io(bus_state["riot"], address, value,
                                      cycle, enabled & in_riot & ~is_ram),
                "data_bus": jnp.where(enabled, value, bus_state["data_bus"]),
                "last_read": bus_state["last_read"] & ~enabled,
                "event": bus_state["event"] | (enabled & (vsync | hot))}

    return cpu6502.Bus(read=read, write=write)


def _tia_written(bus_state: dict, address: jax.Array, value: jax.Array,
                 cycle: jax.Array, on: jax.Array) -> dict:
    """The bus state's `tia` slots with a TIA write added if `on` (as
    `bus` logs it: the access before it a read or not)."""
    slot = bus_state["tia_writes"]
    entry = (jnp.ones_like(address), address, value, cycle,
             bus_state["last_read"].astype(jnp.int32))
    return {"tia": _hold(bus_state["tia"], slot, entry, on),
            "tia_writes": slot + on.astype(jnp.int32)}


def _hold(slots: list, filled: jax.Array, entry: tuple,
          on: jax.Array) -> list:
    """An instruction's held accesses (`slots`, tuples of lanes, the first
    `filled` of them taken) with `entry` in the next slot where `on`."""
    return [tuple(jnp.where(on & (filled == k), n, o)
                  for n, o in zip(entry, old)) for k, old in enumerate(slots)]


def _kernel(table_ref, image_ref, hot_ref, lanes_ref, ram_in_ref,
            queue_in_ref, lanes_out, ram_ref, queue_ref, *, steps: int,
            block: int, cap: int, dtypes: dict) -> None:
    """Up to `steps` instructions of each console of the block (the
    module's state machine); the RAM and the TIA write queue are read and
    written in place (`ram_ref` and `queue_ref` are the inputs' buffers,
    aliased)."""
    del ram_in_ref, queue_in_ref
    lanes = jnp.arange(block, dtype=jnp.int32)
    row = {name: lanes_ref[k, :] for k, name in enumerate(FIELDS)}
    fixed = {n: row[n] for n in ("seg0", "seg1", "seg2", "seg3", "bit13",
                                 "swcha", "swchb", "frame_start",
                                 "late_clock")}
    bus = _kernel_bus(image_ref, hot_ref, ram_ref, lanes, fixed)
    cast = lambda name: row[name].astype(dtypes[name])
    cpu = cpu6502.CPUState(**{n: cast(f"cpu.{n}") for n in CPU_FIELDS})
    riot_state = riot.RIOTState(ram=None, **{
        n: cast(f"riot.{n}") for n in RIOT_FIELDS})
    carry = (cpu, riot_state, row["data_bus"], row["last_read"] != 0,
             row["count"], row["ready"] != 0, jnp.zeros(block, bool),
             row["queued"])

    def runs(carry):
        cpu, _, _, _, count, ready, at_event, _ = carry
        return ready & ~at_event & ~cpu.jammed & (count < cap)

    def more(looped):   # a max of ints: Triton lowers no `any`
        k, carry = looped
        return (k < steps) & (jnp.max(runs(carry).astype(jnp.int32)) > 0)

    body = functools.partial(_kernel_step, table_ref, ram_ref, queue_ref, bus,
                             lanes, fixed, runs)
    _, (cpu, riot_state, data_bus, last_read, count, _, at_event,
        queued) = jax.lax.while_loop(
            more, lambda looped: (looped[0] + 1, body(looped[1])),
            (jnp.int32(0), carry))
    out = {**row, "data_bus": data_bus, "last_read": last_read,
           "count": count, "at_event": at_event, "queued": queued}
    out.update({f"cpu.{n}": getattr(cpu, n) for n in CPU_FIELDS})
    out.update({f"riot.{n}": getattr(riot_state, n) for n in RIOT_FIELDS})
    for k, name in enumerate(FIELDS):
        lanes_out[k, :] = out[name].astype(jnp.int32)


def _kernel_step(table_ref, ram_ref, queue_ref, bus: cpu6502.Bus,
                 lanes: jax.Array, fixed: dict, runs, carry):
    """One instruction of the block's consoles that run, kept only where
    it made no event: its RAM writes land then, in the bus's order, and its
    TIA writes join the console's queue, their WSYNC stalls counted."""
    cpu, riot_state, data_bus, last_read, count, ready, at_event, queued = \
        carry
    run = runs(carry)
    zero = jnp.zeros_like(lanes)
    start = {"riot": riot_state, "data_bus": data_bus,
             "last_read": last_read, "event": jnp.zeros_like(run),
             "writes": zero, "pending": [(zero, zero, zero)] * WRITE_SLOTS,
             "tia_writes": zero, "tia": [(zero,) * 5] * MAX_TIA_WRITES}
    new_cpu, after = cpu6502.step(
        cpu, start, bus, run, control=lambda op: _RefRow(table_ref, op))
    entries, stall, late = _stalled(after["tia"], fixed)
    written = after["tia_writes"]
    done = run & ~after["event"] & ~late & (queued + written <= QUEUE)
    for on, address, value in after["pending"]:
        old = ram_ref[lanes, address]
        ram_ref[lanes, address] = jnp.where(done & (on != 0),
                                            value.astype(old.dtype), old)
    for k, (on, entry) in enumerate(entries):
        slot = jnp.minimum(queued + k, QUEUE - 1) * ENTRY
        for j, x in enumerate(entry):
            old = queue_ref[lanes, slot + j]
            queue_ref[lanes, slot + j] = jnp.where(done & on, x, old)
    new_cpu = new_cpu.replace(cycles=new_cpu.cycles
                              + stall.astype(new_cpu.cycles.dtype))
    pick = lambda new, old: jax.tree.map(
        lambda n, o: jnp.where(done, n, o), new, old)
    return (pick(new_cpu, cpu), pick(after["riot"], riot_state),
            pick(after["data_bus"], data_bus),
            pick(after["last_read"], last_read),
            count + done.astype(jnp.int32), ready,
            at_event | (run & ~done),
            queued + jnp.where(done, written, 0))


def _stalled(held: list, fixed: dict) -> tuple[list, jax.Array, jax.Array]:
    """An instruction's TIA writes (the bus state's `tia` slots) as queue
    entries, each at its cycle after the WSYNC stalls before it
    (`tia.wsync_wait`, as `console._write_logged` counts them); the
    instruction's whole stall; and whether a write falls past the frame's
    scanline limit (`tia.frame_limit_clock`: it would end the frame, an
    event)."""
    stall = jnp.zeros_like(fixed["frame_start"])
    late = jnp.zeros(stall.shape, bool)
    entries = []
    for on, address, value, cycle, last in held:
        on, cycle = on != 0, cycle + stall
        stall = stall + tia.wsync_wait(fixed["frame_start"], address & 0x3F,
                                       cycle, last != 0, on)
        late = late | (on & (cycle * 3 >= fixed["late_clock"]))
        entries.append((on, (address, value, cycle, last)))
    return entries, stall, late


def block_for(batch: int, block: int = BLOCK) -> int:
    """The consoles a Pallas program takes for a batch of `batch`: `block`,
    or the smallest power of 2 that holds a smaller batch (Triton's block
    shapes are powers of 2)."""
    return min(block, 1 << max(0, (batch - 1).bit_length()))


def run(board: Any, inputs: Any, state: Any, ready: jax.Array,
        count: jax.Array, queue: jax.Array, queued: jax.Array, cap: int,
        steps: int = STEPS, block: int = BLOCK, interpret: bool = False
        ) -> tuple[Any, jax.Array, jax.Array, jax.Array, jax.Array]:
    """Up to `steps` instructions of each console `ready` of a batch
    sharing `board`, in one kernel, their TIA writes queued.

    Args:
        board: the batch's shared `console.Board` (`supports` it).
        inputs: the batch's `console.Inputs` (ports), a row a console.
        state: the batch's `console.Console`, a row a console.
        ready: bool[B], the consoles that may run.
        count: int32[B], instructions each console has run this frame.
        queue: int32[B, QUEUE * ENTRY], each console's TIA writes not yet
            applied (`queued` of them, in order, as `Console.log` holds
            an instruction's), their WSYNC stalls already on the CPU's
            cycles.
        queued: int32[B], the writes in `queue`.
        cap: the instructions a console may run in a frame.
        steps: the most instructions a console runs in this call.
        block: consoles per Pallas program (a batch that it does not
            divide is padded with consoles that do not run).
        interpret: run in Pallas's interpreter (any backend) instead of
            compiling with Triton (a GPU).

    Returns:
        The new state, the new count, bool[B]: the consoles stopped
        before an event (their state as before that instruction), and
        the new queue and its count.
    """
    from jax.experimental import pallas as pl
    batch = ready.shape[0]
    padding = -batch % block
    lanes = jnp.pad(_pack(state, inputs, board, ready, count, queued),
                    ((0, 0), (0, padding)))
    ram = jnp.pad(state.riot.ram, ((0, padding), (0, 0)))
    queue = jnp.pad(queue, ((0, padding), (0, 0)))
    table = jnp.asarray(cpu6502.CONTROL_TABLE, jnp.int32)
    hot = _events(board)
    dtypes = {f"cpu.{n}": getattr(state.cpu, n).dtype for n in CPU_FIELDS}
    dtypes.update({f"riot.{n}": getattr(state.riot, n).dtype
                   for n in RIOT_FIELDS})
    whole = lambda x: pl.BlockSpec(x.shape, lambda i: (0,) * x.ndim)
    lane_block = pl.BlockSpec((ROWS, block), lambda i: (0, i))
    row_block = lambda x: pl.BlockSpec((block, x.shape[1]),
                                       lambda i: (i, 0))
    kernel = functools.partial(_kernel, steps=steps, block=block, cap=cap,
                               dtypes=dtypes)
    lanes, ram, queue = pl.pallas_call(
        kernel, grid=(lanes.shape[1] // block,),
        out_shape=[jax.ShapeDtypeStruct(x.shape, x.dtype)
                   for x in (lanes, ram, queue)],
        in_specs=[whole(table), whole(board.cart.image), whole(hot),
                  lane_block, row_block(ram), row_block(queue)],
        out_specs=[lane_block, row_block(ram), row_block(queue)],
        input_output_aliases={4: 1, 5: 2}, interpret=interpret,
        compiler_params=_compiler_params(interpret, block))(
            table, board.cart.image, hot, lanes, ram, queue)
    state, count, at_event, queued = _unpack(lanes[:, :batch], ram[:batch],
                                             state)
    return state, count, at_event, queue[:batch], queued


def _compiler_params(interpret: bool, block: int):
    """Triton's parameters for a kernel of `block` consoles (a thread
    each), or None in Pallas's interpreter."""
    if interpret:
        return None
    from jax.experimental.pallas import triton as pallas_triton
    return pallas_triton.CompilerParams(num_warps=max(1, block // 32))
