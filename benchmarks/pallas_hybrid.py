"""A frame loop whose plain instructions run in one Pallas kernel: a probe.

XLA's loop of kernels runs every emulated instruction of a batch as about
55 kernel launches (an H100's program at 64K consoles, `gpu_aot`), and it
tops out near 28K undrawn Pong frames/s on an H200 (BENCHMARKS.md, "the
fifth loan"). One Pallas kernel ran the bare 6502 core at 1.30 G
instructions/s (`pallas_probe`). This probe is the first step from that
core to the console: a hybrid of the two.

* **The kernel** (`plain_run`) runs, for each console of a block, up to
  `steps` *plain* instructions (fewer when every console of the block
  has stopped): those whose accesses reach only the
  cartridge's ROM away from its hotspots and the RIOT (RAM, timer,
  ports). That is `cpu6502.step` unchanged, on a bus whose ROM, hotspot
  table and RAM are refs, and the RIOT's own `read_io` / `write_io` for
  its timer and ports. A console stops at its first *event*, an
  instruction that touches the TIA or a cart hotspot: the kernel undoes
  it (its RAM writes wait in 4 slots and land only if the instruction
  made no event; its registers are selected back).
* **XLA** then runs the event instructions with the accelerator's own
  step (`console._accelerator_step`: TIA writes drawn for gathered
  consoles, latches, frame ends), for the consoles at an event or with
  TIA writes still to apply, and the loop goes on while any console runs.

So the frame costs about one trip of XLA's step per event (Pong: about 1
instruction in 5 touches the TIA, `benchmarks/bus_events.py`) instead of
one per instruction, plus one kernel a trip. It is exact by construction
where the kernel's plain instructions are `bus.step`'s: the test runs
Pong frames through it, the kernel in Pallas's interpreter, against the
CPU's lowering, bit for bit.

Limits (`check_board`): a shared board (one game's batch) without
Superchip RAM, the DPC chip or the Cosmic Ark line ends; the batch a
multiple of the block.

Usage:
    python benchmarks/pallas_hybrid.py --batches 4096 65536  # on a GPU
    JAX_SKIP_CUDA_CONSTRAINTS_CHECK=1 python benchmarks/pallas_hybrid.py \\
        --aot-h100 --batches 4096     # gpu_aot's environment: compiled only
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import sys
from typing import Any, Iterator

import jax
import jax.numpy as jnp

from jaxatari import cart, console, cpu6502, lowering, riot

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pallas_probe import BLOCK, _compiler_params, _RefRow  # noqa: E402

STEPS = 16
"""Plain instructions a console may run per kernel call (Pong makes an
event about every 5)."""
WRITE_SLOTS = 4
"""RAM writes an instruction may make (the CPU's write calls)."""
CPU_FIELDS = ("a", "x", "y", "sp", "pc", "p", "cycles", "jammed")
RIOT_FIELDS = ("timer", "shift", "set_cycle", "interrupt_cycle",
               "read_after_interrupt", "ddra", "ddrb")
FIELDS = (tuple(f"cpu.{n}" for n in CPU_FIELDS)
          + tuple(f"riot.{n}" for n in RIOT_FIELDS)
          + ("data_bus", "last_read", "seg0", "seg1", "seg2", "seg3",
             "bit13", "swcha", "swchb", "count", "ready", "at_event"))
ROWS = 32
"""The lane block's rows: `FIELDS`, padded to a power of 2 (Triton)."""


def check_board(board: console.Board) -> None:
    """Raises ValueError for a board the kernel does not run."""
    features = board.features
    if features.cart_ram or features.dpc or features.cosmic_lines:
        raise ValueError(
            "pallas_hybrid runs plain carts only (no Superchip RAM, DPC or "
            f"Cosmic Ark line ends); this board has {features}")


def _pack(state: console.Console, inputs: console.Inputs, board, ready,
          count) -> jax.Array:
    """The lane rows (`FIELDS`) of a batch, int32[ROWS, B]."""
    lead = ready.shape
    rows = [getattr(state.cpu, n) for n in CPU_FIELDS]
    rows += [getattr(state.riot, n) for n in RIOT_FIELDS]
    rows += [state.data_bus, state.last_read]
    rows += [state.segments[:, k] for k in range(4)]
    rows += [board.cart.bit13_offset, inputs.swcha, inputs.swchb, count,
             ready, jnp.zeros(lead, bool)]
    rows = [jnp.broadcast_to(jnp.asarray(r).astype(jnp.int32), lead)
            for r in rows]
    pad = [jnp.zeros(lead, jnp.int32)] * (ROWS - len(rows))
    return jnp.stack(rows + pad)


def _unpack(lanes: jax.Array, ram: jax.Array, state: console.Console):
    """The batch's state, count and at-event flags from the lane rows."""
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
    return state, row["count"], row["at_event"] != 0


def _kernel_bus(image_ref, hot_ref, ram_ref, lanes, fixed):
    """`cpu6502.Bus` for the kernel: ROM and RIOT through refs, and an
    event noted (not made) at any TIA or hotspot access."""
    def decode(address):
        in_cart = (address & 0x1000) != 0
        in_riot = ~in_cart & ((address & 0x80) != 0)
        offset = address & 0xFFF
        event = (~in_cart & ~in_riot) | (in_cart & (hot_ref[offset] != 0))
        return in_cart, in_riot, (address & 0x0200) == 0, event

    def read(bus_state, address, cycle, enabled):
        address = address.astype(jnp.int32)
        in_cart, in_riot, is_ram, event = decode(address)
        offset = address & 0xFFF
        segment = offset >> 10
        base = jnp.where(segment == 0, fixed["seg0"], jnp.where(
            segment == 1, fixed["seg1"], jnp.where(
                segment == 2, fixed["seg2"], fixed["seg3"])))
        extra = jnp.where((address & 0x2000) == 0, fixed["bit13"], 0)
        index = jnp.clip(base + (offset & 0x3FF) + extra, 0,
                         cart.IMAGE_SIZE - 1)   # XLA's gather clamps too
        rom = image_ref[index].astype(jnp.int32)
        ram = ram_ref[lanes, address & 0x7F].astype(jnp.int32)
        new_riot, io = riot.read_io(bus_state["riot"], address, cycle,
                                    fixed["swcha"], fixed["swchb"],
                                    enabled & in_riot & ~is_ram)
        value = jnp.where(in_cart, rom, jnp.where(is_ram, ram, io))
        return {**bus_state, "riot": new_riot,
                "data_bus": jnp.where(enabled, value, bus_state["data_bus"]),
                "last_read": bus_state["last_read"] | enabled,
                "event": bus_state["event"] | (enabled & event)}, value

    def write(bus_state, address, value, cycle, enabled):
        address, value = address.astype(jnp.int32), value.astype(jnp.int32)
        _, in_riot, is_ram, event = decode(address)
        to_ram = enabled & in_riot & is_ram
        slot = bus_state["writes"]
        new = (jnp.ones_like(address), address & 0x7F, value)
        pending = [tuple(jnp.where(to_ram & (slot == k), n, o)
                         for n, o in zip(new, old))
                   for k, old in enumerate(bus_state["pending"])]
        return {**bus_state, "pending": pending,
                "writes": slot + to_ram.astype(jnp.int32),
                "riot": riot.write_io(bus_state["riot"], address, value,
                                      cycle, enabled & in_riot & ~is_ram),
                "data_bus": jnp.where(enabled, value, bus_state["data_bus"]),
                "last_read": bus_state["last_read"] & ~enabled,
                "event": bus_state["event"] | (enabled & event)}

    return cpu6502.Bus(read=read, write=write)


def _kernel(table_ref, image_ref, hot_ref, lanes_ref, ram_in_ref,
            lanes_out, ram_ref, *, steps: int, block: int, dtypes: dict):
    """`steps` plain instructions of each console of the block (see the
    module docstring); the RAM is read and written in place (`ram_ref`
    is the input's buffer, aliased)."""
    del ram_in_ref
    lanes = jnp.arange(block, dtype=jnp.int32)
    row = {name: lanes_ref[k, :] for k, name in enumerate(FIELDS)}
    fixed = {n: row[n] for n in ("seg0", "seg1", "seg2", "seg3", "bit13",
                                 "swcha", "swchb")}
    bus = _kernel_bus(image_ref, hot_ref, ram_ref, lanes, fixed)
    cast = lambda name: row[name].astype(dtypes[name])
    cpu = cpu6502.CPUState(**{n: cast(f"cpu.{n}") for n in CPU_FIELDS})
    riot_state = riot.RIOTState(ram=None, **{
        n: cast(f"riot.{n}") for n in RIOT_FIELDS})
    carry = (cpu, riot_state, row["data_bus"], row["last_read"] != 0,
             row["count"], row["ready"] != 0, jnp.zeros(block, bool))

    def runs(carry):
        cpu, _, _, _, count, ready, at_event = carry
        return ready & ~at_event & ~cpu.jammed & (
            count < console.INSTRUCTIONS_PER_UPDATE)

    def body(carry):
        cpu, riot_state, data_bus, last_read, count, ready, at_event = carry
        run = runs(carry)
        zero = jnp.zeros(block, jnp.int32)
        start = {"riot": riot_state, "data_bus": data_bus,
                 "last_read": last_read, "event": jnp.zeros(block, bool),
                 "writes": zero,
                 "pending": [(zero, zero, zero)] * WRITE_SLOTS}
        new_cpu, after = cpu6502.step(cpu, start, bus, run,
                                      control=lambda op: _RefRow(table_ref,
                                                                 op))
        done = run & ~after["event"]
        for on, address, value in after["pending"]:   # in the bus's order
            old = ram_ref[lanes, address]
            ram_ref[lanes, address] = jnp.where(
                done & (on != 0), value.astype(old.dtype), old)
        pick = lambda new, old: jax.tree.map(
            lambda n, o: jnp.where(done, n, o), new, old)
        return (pick(new_cpu, cpu), pick(after["riot"], riot_state),
                pick(after["data_bus"], data_bus),
                pick(after["last_read"], last_read),
                count + done.astype(jnp.int32), ready,
                at_event | (run & after["event"]))

    def more(looped):   # a max of ints: Triton lowers no `any`
        k, carry = looped
        return (k < steps) & (jnp.max(runs(carry).astype(jnp.int32)) > 0)

    _, (cpu, riot_state, data_bus, last_read, count, _, at_event) = \
        jax.lax.while_loop(more, lambda looped: (looped[0] + 1,
                                                 body(looped[1])),
                           (jnp.int32(0), carry))
    out = {**row, "data_bus": data_bus, "last_read": last_read,
           "count": count, "at_event": at_event}
    out.update({f"cpu.{n}": getattr(cpu, n) for n in CPU_FIELDS})
    out.update({f"riot.{n}": getattr(riot_state, n) for n in RIOT_FIELDS})
    for k, name in enumerate(FIELDS):
        lanes_out[k, :] = out[name].astype(jnp.int32)


def plain_run(board: console.Board, inputs: console.Inputs,
              state: console.Console, ready: jax.Array, count: jax.Array,
              steps: int = STEPS, block: int = BLOCK,
              interpret: bool = False):
    """Up to `steps` plain instructions of each console `ready` of a batch
    (one kernel): the state, the instructions counted, and which consoles
    stopped at an event (their state as before it)."""
    from jax.experimental import pallas as pl
    batch = ready.shape[0]
    if batch % block:
        raise ValueError(f"the batch ({batch}) must be a multiple of the "
                         f"block ({block})")
    lanes = _pack(state, inputs, board, ready, count)
    ram = state.riot.ram
    table = jnp.asarray(cpu6502.CONTROL_TABLE, jnp.int32)
    image = board.cart.image
    hot = jnp.asarray(board.cart.hotspot_mask, jnp.int32)
    dtypes = {f"cpu.{n}": getattr(state.cpu, n).dtype for n in CPU_FIELDS}
    dtypes.update({f"riot.{n}": getattr(state.riot, n).dtype
                   for n in RIOT_FIELDS})
    whole = lambda x: pl.BlockSpec(x.shape, lambda i: (0,) * x.ndim)
    lane_block = pl.BlockSpec((ROWS, block), lambda i: (0, i))
    ram_block = pl.BlockSpec((block, ram.shape[1]), lambda i: (i, 0))
    lanes, ram = pl.pallas_call(
        functools.partial(_kernel, steps=steps, block=block, dtypes=dtypes),
        grid=(batch // block,),
        out_shape=[jax.ShapeDtypeStruct(lanes.shape, lanes.dtype),
                   jax.ShapeDtypeStruct(ram.shape, ram.dtype)],
        in_specs=[whole(table), whole(image), whole(hot), lane_block,
                  ram_block],
        out_specs=[lane_block, ram_block],
        input_output_aliases={4: 1}, interpret=interpret,
        compiler_params=_compiler_params(interpret, block))(
            table, image, hot, lanes, ram)
    return _unpack(lanes, ram, state)


def hybrid_loop(loop, state: console.Console, running: jax.Array, *,
                steps: int = STEPS, block: int = BLOCK,
                interpret: bool = False, alone=None):
    """The instruction loop: the kernel's plain instructions, then XLA's
    accelerator step for the consoles at an event (or with TIA writes
    still to apply), while any console runs. `console._accelerator_loop`'s
    signature and results; a single console (the frame's unbatched trace)
    runs `alone`, the accelerator's own loop."""
    if loop.board_axes is None:
        return alone(loop, state, running)
    if any(axis is not None for axis in jax.tree.leaves(
            loop.board_axes, is_leaf=lambda x: x is None)):
        raise ValueError("pallas_hybrid runs a batch with one shared board")
    check_board(loop.board)

    def trip(carry):
        count, state, running, stop = carry
        ready = running & (state.log_count == 0)
        state, count, at_event = plain_run(loop.board, loop.inputs, state,
                                           ready, count, steps, block,
                                           interpret)
        running = console._still_running(state, running,
                                         jnp.zeros_like(running), count)
        stepping = running & (at_event | (state.log_count > 0))
        count, state, stepped, stop = console._accelerator_step(
            loop, (count, state, stepping, stop))
        return count, state, jnp.where(stepping, stepped, running), stop

    with jax.named_scope(lowering.INSTRUCTION_CHUNKS):
        _, state, _, stop = lowering.chunked_while(
            lambda c: jnp.any(c[2]), trip,
            (jnp.zeros_like(running, jnp.int32), state, running,
             jnp.zeros_like(running)), running.shape,
            lowering.INSTRUCTION_LOOP)
    return state, stop


@contextlib.contextmanager
def hybrid(steps: int = STEPS, block: int = BLOCK, interpret: bool = False,
           gathers: bool = False) -> Iterator[None]:
    """While tracing inside it, `console.frame` runs its instructions by
    `hybrid_loop` in the accelerator's lowering (forced). Without
    `gathers` (the default) XLA's step draws for every console at an
    event: with the TIA's draws gathered (`lowering.GATHER_SHARES`) a
    console that waits cannot run its plain instructions meanwhile, and a
    Pong frame of 8 consoles took 4,384 trips against 1,344 without."""
    original = console._accelerator_loop
    console._accelerator_loop = functools.partial(
        hybrid_loop, steps=steps, block=block, interpret=interpret,
        alone=original)
    shares = {} if gathers else {kind: 1 for kind in lowering.GATHER_SHARES}
    try:
        with lowering.forced(lowering.ACCELERATOR), \
                lowering.gather_shares(**shares):
            yield
    finally:
        console._accelerator_loop = original


def frames(game: str, batch: int, repeats: int, mode: str,
           steps: int = STEPS, gathers: bool = False) -> dict[str, Any]:
    """`benchmarks/lowering.py frames` of undrawn frames of a batch on a
    shared board, with its final state's digest: `mode` "hybrid" (this
    probe; `gathers` as `hybrid` takes it) or "xla" (the accelerator's
    lowering, its draws gathered by default)."""
    import lowering as lowering_bench
    interpret = jax.default_backend() != "gpu"   # Pallas's interpreter
    hybrid_only = lambda value: value if mode == "hybrid" else None
    context = hybrid(steps, interpret=interpret, gathers=gathers) \
        if mode == "hybrid" else contextlib.nullcontext()
    with context:
        row = lowering_bench.frames(
            game, lowering.ACCELERATOR, batch, False, repeats, True,
            gathers=gathers if mode == "hybrid" else True, digest=True)
    return {**row, "benchmark": "pallas_hybrid", "mode": mode,
            "steps": hybrid_only(steps),
            "gathers": gathers if mode == "hybrid" else row["gathers"],
            "interpret": hybrid_only(interpret)}


def compiled_for_h100(game: str, batch: int) -> dict[str, Any]:
    """The hybrid frame compiled for an H100 without one
    (`gpu_aot.compile_frame`): whether Triton lowers the kernel, the
    launches of a trip of its loop, and the compile's seconds."""
    import gpu_aot
    import hlo_launches
    with hybrid():
        compiled, seconds = gpu_aot.compile_frame(
            game, batch, False, lowering.DEFAULT_LOOP_SHAPE,
            gpu_aot.gpu_sharding(), gathers=False)
    text = compiled.as_text()
    loops = hlo_launches.rows(text, lowering.INSTRUCTION_LOOP + "/while")
    return {"benchmark": "pallas_hybrid", "aot": "h100", "game": game,
            "batch": batch, "compile_s": round(seconds, 1),
            "launches_per_trip": [row["per_trip"] for row in loops],
            "triton_kernels": text.count("__gpu$xla.gpu.triton")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="pong")
    parser.add_argument("--batches", type=int, nargs="+", default=[4096])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--modes", nargs="+", default=["hybrid", "xla"])
    parser.add_argument("--gathers", action="store_true",
                        help="the hybrid's XLA step gathers the TIA's draws")
    parser.add_argument("--aot-h100", action="store_true")
    args = parser.parse_args()
    for batch in args.batches:
        if args.aot_h100:
            print(json.dumps(compiled_for_h100(args.game, batch)), flush=True)
            continue
        for mode in args.modes:
            print(json.dumps(frames(args.game, batch, args.repeats, mode,
                                    args.steps, args.gathers)), flush=True)


if __name__ == "__main__":
    main()
