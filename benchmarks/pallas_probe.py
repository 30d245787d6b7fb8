"""One kernel for a whole loop, against XLA's loop of kernels: a probe.

The emulator's frame loop runs on a GPU as an XLA while loop whose body
is about 32 kernels an emulated instruction (BENCHMARKS.md, "On an H200:
the second loan"), so a frame of about 6,800 instructions is some 200,000
kernel launches. CuLE runs a frame as one thread per console in one
kernel. Whether jaxatari should (a Pallas kernel per chunk of
instructions, or per frame) is issue #18's open design question; this
probe measures its ceiling on a toy: a loop whose every step does what an
emulated instruction must at least do, per console,

* read a table at an index that depends on the last step (the opcode
  fetch: `table[pc]`),
* read the console's RAM at a data-dependent address,
* write the console's RAM at another,
* update its registers,

run `--steps` times (a frame's worth by default) over a batch of
consoles:

* `xla`: `jit(vmap(...))` of a `fori_loop`, as the emulator is lowered
  (a gather, a select over the RAM row, elementwise updates);
* `pallas`: the same loop inside one Pallas (Triton) kernel, a block of
  consoles per program, the table and RAM read and written through refs.

Both give the same bits (`tests/test_pallas_probe.py` checks them
against numpy, the kernel in Pallas's interpreter).

`--workload cpu6502` runs the real CPU core the same two ways:
`benchmarks/cpu.py`'s random programs on a flat 64 KiB memory a console,
`vmap(cpu6502.run)` against `cpu6502.step` unchanged inside one kernel
(its control table and the memory read and written through refs:
`cpu6502.step`'s `control` argument and `_ref_bus`); the test checks
the registers and memory equal bit for bit. `--workload surface` counts
what the rest of a frame would have to rewrite for a kernel: the
primitives that index an array by a traced value, by module. It prints one JSON
line per (system, batch): seconds per call (median of `--repeats`) and
steps per second per console. A toy step is about 10 operations, where
an emulated instruction is thousands of selected ones, so the figure is
a ceiling on launch savings, not a frame rate.

Usage (on a GPU; `benchmarks/gpu_session.py` stage `pallas`):
    python benchmarks/pallas_probe.py [--batches 4096 65536]
        [--steps 6784] [--repeats 3] [--workload toy|cpu6502]
    python benchmarks/pallas_probe.py --workload surface   # any machine
    JAX_SKIP_CUDA_CONSTRAINTS_CHECK=1 python benchmarks/pallas_probe.py \
        --aot-h100 --workload cpu6502 --batches 4096 --steps 1000
        # gpu_aot's CUDA-plugin environment: compiled, not run
"""
from __future__ import annotations

import argparse
import functools
import json
import statistics
import time
from typing import Iterator

import jax
import jax.numpy as jnp
import numpy as np

BLOCK = 128
"""Consoles per Pallas program (a thread each, 4 warps)."""
RAM = 128
TABLE = 256


def _compiler_params(interpret: bool, block: int = BLOCK):
    """Triton's parameters for a kernel of `block` consoles (a thread
    each), or None for Pallas's interpreter."""
    if interpret:
        return None
    from jax.experimental.pallas import triton as pallas_triton
    return pallas_triton.CompilerParams(num_warps=max(1, block // 32))


def _step(table_value: jax.Array, ram_value: jax.Array, pc: jax.Array,
          a: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array,
                                 jax.Array]:
    """One toy step from the two values read: (new pc, new a, the RAM
    address written, the byte written)."""
    a = (a + table_value + ram_value) & 255
    return (pc + 1 + (a & 3)) & 4095, a, (a + 1) & (RAM - 1), a


def xla_loop(table: jax.Array, pc: jax.Array, a: jax.Array,
             ram: jax.Array, steps: int):
    """The toy loop as the emulator is lowered: `vmap` over consoles of a
    `fori_loop` (the table read a gather, the RAM write a select)."""
    def one(pc, a, ram):
        def body(_, carry):
            pc, a, ram = carry
            pc, a, address, byte = _step(
                table[pc & (TABLE - 1)], ram[a & (RAM - 1)].astype(jnp.int32),
                pc, a)
            ram = jnp.where(jnp.arange(RAM) == address,
                            byte.astype(ram.dtype), ram)
            return pc, a, ram
        return jax.lax.fori_loop(0, steps, body, (pc, a, ram))
    return jax.vmap(one)(pc, a, ram)


def pallas_loop(table: jax.Array, pc: jax.Array, a: jax.Array,
                ram: jax.Array, steps: int, interpret: bool = False):
    """The toy loop in one Pallas kernel: `BLOCK` consoles a program, the
    table and RAM read and written through refs (the only way a
    per-console index lowers to Triton: a gather on loaded values does
    not)."""
    from jax.experimental import pallas as pl

    def kernel(table_ref, pc_ref, a_ref, ram_ref, pc_out, a_out, ram_out):
        ram_out[...] = ram_ref[...]
        lanes = jnp.arange(BLOCK, dtype=jnp.int32)

        def body(_, carry):
            pc, a = carry
            pc, a, address, byte = _step(
                table_ref[pc & (TABLE - 1)],
                ram_out[lanes, a & (RAM - 1)].astype(jnp.int32), pc, a)
            ram_out[lanes, address] = byte.astype(ram_out.dtype)
            return pc, a
        pc, a = jax.lax.fori_loop(0, steps, body, (pc_ref[...], a_ref[...]))
        pc_out[...] = pc
        a_out[...] = a

    lane_block = pl.BlockSpec((BLOCK,), lambda i: (i,))
    ram_block = pl.BlockSpec((BLOCK, RAM), lambda i: (i, 0))
    return pl.pallas_call(
        kernel, grid=(pc.shape[0] // BLOCK,),
        out_shape=(jax.ShapeDtypeStruct(pc.shape, pc.dtype),
                   jax.ShapeDtypeStruct(a.shape, a.dtype),
                   jax.ShapeDtypeStruct(ram.shape, ram.dtype)),
        in_specs=[pl.BlockSpec((TABLE,), lambda i: (0,)), lane_block,
                  lane_block, ram_block],
        out_specs=(lane_block, lane_block, ram_block),
        interpret=interpret,
        compiler_params=_compiler_params(interpret))(table, pc, a, ram)


def reference(table: np.ndarray, pc: np.ndarray, a: np.ndarray,
              ram: np.ndarray, steps: int):
    """The toy loop in numpy, the oracle of both."""
    pc, a, ram = pc.copy(), a.copy(), ram.copy()
    lanes = np.arange(pc.size)
    for _ in range(steps):
        pc, a, address, byte = _step(table[pc & (TABLE - 1)],
                                     ram[lanes, a & (RAM - 1)].astype(
                                         np.int32), pc, a)
        ram[lanes, address] = byte.astype(ram.dtype)
    return pc, a, ram


class _RefRow:
    """An opcode's row of `cpu6502.CONTROL_TABLE`, each column read
    through the table's ref when indexed (what `cpu6502.step`'s `control`
    returns inside a kernel)."""

    def __init__(self, table_ref, opcode: jax.Array):
        self.table_ref, self.opcode = table_ref, opcode

    def __getitem__(self, column: int) -> jax.Array:
        return self.table_ref[self.opcode, jnp.full_like(self.opcode,
                                                         column)]


def _ref_bus(memory_ref, lanes: jax.Array):
    """`cpu6502.Bus` over each console's 64 KiB row of `memory_ref`, read
    and written through the ref (writes land at once: a read sees the
    instruction's earlier writes, as `flatbus` makes them appear)."""
    from jaxatari import cpu6502

    def read(state, address, cycle, enabled):
        return state, memory_ref[lanes, address & 0xFFFF].astype(jnp.int32)

    def write(state, address, value, cycle, enabled):
        address = address & 0xFFFF
        old = memory_ref[lanes, address]
        memory_ref[lanes, address] = jnp.where(
            enabled, value.astype(old.dtype), old)
        return state
    return cpu6502.Bus(read=read, write=write)


def cpu_xla(cpu, memory: jax.Array, steps: int):
    """`benchmarks/cpu.py`'s workload: `vmap(cpu6502.run)` on the flat
    64 KiB bus (XLA's loop of kernels): the CPU state and the memory."""
    from jaxatari import cpu6502, flatbus
    cpu, bus_state = jax.vmap(lambda c, m: cpu6502.run(
        c, flatbus.flat_memory(m), flatbus.FLAT_BUS, steps))(cpu, memory)
    return cpu, bus_state.memory


def cpu_pallas(cpu, memory: jax.Array, steps: int,
               interpret: bool = False):
    """The same run of `cpu6502.step`, unchanged, in one Pallas kernel:
    `BLOCK` CPUs a program, their registers as vectors, the control
    table and the memory read and written through refs (the memory in
    place)."""
    from jax.experimental import pallas as pl
    from jaxatari import cpu6502
    fields = list(cpu.__dataclass_fields__)

    def kernel(table_ref, memory_ref, *refs):
        ins, outs = refs[:len(fields)], refs[len(fields):-1]
        lanes = jnp.arange(BLOCK, dtype=jnp.int32)
        bus = _ref_bus(refs[-1], lanes)
        state = cpu6502.CPUState(**{name: ref[...] for name, ref
                                    in zip(fields, ins)})
        state = jax.lax.fori_loop(0, steps, lambda _, c: cpu6502.step(
            c, (), bus, control=lambda op: _RefRow(table_ref, op))[0],
            state)
        for name, ref in zip(fields, outs):
            ref[...] = getattr(state, name)

    table = jnp.asarray(cpu6502.CONTROL_TABLE, jnp.int32)
    lane_block = pl.BlockSpec((BLOCK,), lambda i: (i,))
    memory_block = pl.BlockSpec((BLOCK, memory.shape[1]), lambda i: (i, 0))
    values = [getattr(cpu, name) for name in fields]
    *registers, memory = pl.pallas_call(
        kernel, grid=(memory.shape[0] // BLOCK,),
        out_shape=[jax.ShapeDtypeStruct(v.shape, v.dtype) for v in values]
        + [jax.ShapeDtypeStruct(memory.shape, memory.dtype)],
        in_specs=[pl.BlockSpec(table.shape, lambda i: (0, 0)), memory_block]
        + [lane_block] * len(fields),
        out_specs=[lane_block] * len(fields) + [memory_block],
        input_output_aliases={1: len(fields)},
        interpret=interpret,
        compiler_params=_compiler_params(interpret))(table, memory, *values)
    return cpu6502.CPUState(**dict(zip(fields, registers))), memory


def inputs(batch: int, seed: int = 0):
    """A table, and each console's pc, a and RAM, drawn from `seed`."""
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 256, TABLE).astype(np.int32),
            rng.integers(0, 4096, batch).astype(np.int32),
            rng.integers(0, 256, batch).astype(np.int32),
            rng.integers(0, 256, (batch, RAM)).astype(np.uint8))


def _cpu_inputs(batch: int, seed: int = 0):
    """`benchmarks/cpu.py`'s random programs: the CPUs and their memory."""
    from jaxatari.flatbus import random_programs
    cpu, flat = random_programs(batch, seed)
    return cpu, flat.memory


WORKLOADS = {
    "toy": (inputs, {"xla": xla_loop, "pallas": pallas_loop},
            "steps_per_s"),
    "cpu6502": (_cpu_inputs, {"xla": cpu_xla, "pallas": cpu_pallas},
                "instructions_per_s")}
"""Each workload's inputs for a batch, its two systems (each called as
`system(*inputs, steps)`; the Pallas one takes `interpret` too), and the
name of its rate per console-step."""


def _timed(run, args, repeats: int) -> tuple[float, float]:
    """The first call's seconds (it compiles) and the median of `repeats`
    calls after it."""
    times = []
    for _ in range(repeats + 1):
        begin = time.perf_counter()
        jax.block_until_ready(run(*args))
        times.append(time.perf_counter() - begin)
    return times[0], statistics.median(times[1:])


def measure(workload: str, system: str, batch: int, steps: int,
            repeats: int) -> dict:
    """One system of `workload` (`WORKLOADS`), `steps` steps a call:
    seconds per call (median of `repeats` after a call that compiles) and
    the rate of steps per second over all consoles. On the CPU the Pallas
    kernel runs in Pallas's interpreter (Triton needs a GPU)."""
    make_inputs, systems, rate = WORKLOADS[workload]
    interpret = system == "pallas" and jax.default_backend() == "cpu"
    loop = systems[system]
    if system == "pallas":
        loop = functools.partial(loop, interpret=interpret)
    run = jax.jit(lambda *x: loop(*x, steps))
    args = jax.tree.map(jnp.asarray, make_inputs(batch))
    first, seconds = _timed(run, args, repeats)
    return {"workload": workload, "system": system, "batch": batch,
            "steps": steps, "first_call_s": round(first, 2),
            "seconds_per_call": seconds, rate: steps * batch / seconds,
            "backend": jax.default_backend(), "interpreted": interpret}


def measured(workload: str, batch: int, steps: int, repeats: int,
             systems: tuple[str, ...] = ("pallas", "xla")
             ) -> Iterator[dict]:
    """`measure` for each of `systems`, each row as soon as it is
    measured; a system that fails (a lowering the GPU refuses, memory)
    gives a row with its error instead."""
    for system in systems:
        try:
            yield measure(workload, system, batch, steps, repeats)
        except Exception as error:   # report it, go on to the next
            yield {"workload": workload, "system": system, "batch": batch,
                   "error": f"{type(error).__name__}: {str(error)[:400]}"}


INDEXED = ("gather", "dynamic_slice", "dynamic_update_slice", "scatter")
"""The primitives that index an array by a traced value: in a Pallas
(Triton) kernel each must become a load or store through a ref."""


def _equations(jaxpr):
    """Every equation of `jaxpr` and of the jaxprs inside it."""
    for equation in jaxpr.eqns:
        yield equation
        for param in equation.params.values():
            for inner in (param if isinstance(param, (list, tuple))
                          else [param]):
                inner = getattr(inner, "jaxpr", inner)
                if hasattr(inner, "eqns"):
                    yield from _equations(inner)


def _origin(equation) -> str:
    """The jaxatari module and function an equation was traced from."""
    traceback = equation.source_info.traceback
    for frame in (traceback.frames if traceback is not None else []):
        if "/jaxatari/" in frame.file_name and not frame.file_name.endswith(
                "lowering.py"):
            module = frame.file_name.split("/jaxatari/")[-1]
            return f"{module}:{frame.function_name}"
    return "?"


def porting_surface(game: str = "pong") -> dict:
    """What a one-kernel frame would have to rewrite: the indexed
    primitives (`INDEXED`) in one console's undrawn frame as the
    accelerator's lowering traces it, by primitive and by origin; and the
    frame's size, all its equations and the commonest primitives."""
    import collections
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from lowering import _consoles   # benchmarks/lowering.py
    from jaxatari import console, lowering
    board, state, inputs = _consoles(game, 1, True)
    one = jax.tree.map(lambda x: x[0], (state, inputs))
    with lowering.forced(lowering.ACCELERATOR):
        jaxpr = jax.make_jaxpr(lambda s, i: console.frame(
            board, s, i, False))(*one).jaxpr
    equations = list(_equations(jaxpr))
    found = [(e.primitive.name, _origin(e)) for e in equations
             if e.primitive.name.startswith(INDEXED)]
    every = collections.Counter(e.primitive.name for e in equations)
    return {"workload": "surface", "game": game,
            "equations": len(equations),
            "most_common": dict(every.most_common(12)),
            "by_primitive": dict(collections.Counter(p for p, _ in found)),
            "by_origin": dict(collections.Counter(
                o for _, o in found).most_common())}


def compiled_for_h100(workload: str, batch: int, steps: int) -> list[dict]:
    """Both systems of `workload` compiled for an H100 without one
    (`gpu_aot`'s deviceless target; needs its CUDA-plugin environment):
    kernel launches a loop trip and Triton kernels, per system."""
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gpu_aot
    import hlo_launches
    make_inputs, systems, _ = WORKLOADS[workload]
    sharding = gpu_aot.gpu_sharding()
    specs = jax.tree.map(lambda x: gpu_aot._spec(x, sharding),
                         make_inputs(batch))
    rows = []
    for system, loop in systems.items():
        text = jax.jit(lambda *x, f=loop: f(*x, steps)).lower(
            *specs).compile().as_text()
        rows.append({"workload": workload, "system": system,
                     "batch": batch, "target": "H100 (deviceless)",
                     "triton_kernels": text.count("xla.gpu.triton"),
                     "launches_per_trip": [r["per_trip"] for r in
                                           hlo_launches.rows(text)]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, nargs="+",
                        default=[4096, 65536])
    parser.add_argument("--steps", type=int, default=6784,
                        help="steps a call (a Pong frame's instructions)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--systems", nargs="+", default=["pallas", "xla"],
                        choices=["pallas", "xla"])
    parser.add_argument("--workload", choices=["toy", "cpu6502", "surface"],
                        default="toy")
    parser.add_argument("--aot-h100", action="store_true",
                        help="compile for an H100 without one and count "
                             "launches (gpu_aot's environment)")
    args = parser.parse_args()
    if args.aot_h100:
        for batch in args.batches:
            for row in compiled_for_h100(args.workload, batch, args.steps):
                print(json.dumps(row), flush=True)
        return
    if args.workload == "surface":
        print(json.dumps(porting_surface()), flush=True)
        return
    for batch in args.batches:
        for row in measured(args.workload, batch, args.steps, args.repeats,
                            tuple(args.systems)):
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
