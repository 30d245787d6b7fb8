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
against numpy, the kernel in Pallas's interpreter). It prints one JSON
line per (system, batch): seconds per call (median of `--repeats`) and
steps per second per console. A toy step is about 10 operations, where
an emulated instruction is thousands of selected ones, so the figure is
a ceiling on launch savings, not a frame rate.

Usage (on a GPU; `benchmarks/gpu_session.py` stage `pallas`):
    python benchmarks/pallas_probe.py [--batches 4096 65536]
        [--steps 6784] [--repeats 3]
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

BLOCK = 128
"""Consoles per Pallas program (a thread each, 4 warps)."""
RAM = 128
TABLE = 256


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
    params = None
    if not interpret:
        from jax.experimental.pallas import triton as pallas_triton
        params = pallas_triton.CompilerParams(num_warps=BLOCK // 32)
    return pl.pallas_call(
        kernel, grid=(pc.shape[0] // BLOCK,),
        out_shape=(jax.ShapeDtypeStruct(pc.shape, pc.dtype),
                   jax.ShapeDtypeStruct(a.shape, a.dtype),
                   jax.ShapeDtypeStruct(ram.shape, ram.dtype)),
        in_specs=[pl.BlockSpec((TABLE,), lambda i: (0,)), lane_block,
                  lane_block, ram_block],
        out_specs=(lane_block, lane_block, ram_block),
        interpret=interpret, compiler_params=params)(table, pc, a, ram)


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


def inputs(batch: int, seed: int = 0):
    """A table, and each console's pc, a and RAM, drawn from `seed`."""
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 256, TABLE).astype(np.int32),
            rng.integers(0, 4096, batch).astype(np.int32),
            rng.integers(0, 256, batch).astype(np.int32),
            rng.integers(0, 256, (batch, RAM)).astype(np.uint8))


def measure(system: str, batch: int, steps: int, repeats: int) -> dict:
    """Seconds per call of one system's loop (median of `repeats` after a
    call that compiles) and steps per second per console."""
    interpret = jax.default_backend() == "cpu"   # Triton needs a GPU
    loop = {"xla": xla_loop, "pallas": lambda *x: pallas_loop(
        *x, interpret=interpret)}[system]
    run = jax.jit(lambda *x: loop(*x, steps))
    args = [jnp.asarray(x) for x in inputs(batch)]
    begin = time.perf_counter()
    jax.block_until_ready(run(*args))
    first = time.perf_counter() - begin
    times = []
    for _ in range(repeats):
        begin = time.perf_counter()
        jax.block_until_ready(run(*args))
        times.append(time.perf_counter() - begin)
    seconds = statistics.median(times)
    return {"system": system, "batch": batch, "steps": steps,
            "first_call_s": round(first, 2), "seconds_per_call": seconds,
            "steps_per_s": steps * batch / seconds,
            "backend": jax.default_backend(),
            "interpreted": interpret and system == "pallas"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, nargs="+",
                        default=[4096, 65536])
    parser.add_argument("--steps", type=int, default=6784,
                        help="steps a call (a Pong frame's instructions)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--systems", nargs="+", default=["pallas", "xla"],
                        choices=["pallas", "xla"])
    args = parser.parse_args()
    for batch in args.batches:
        for system in args.systems:
            try:
                row = measure(system, batch, args.steps, args.repeats)
            except Exception as error:   # report it, go on to the next
                row = {"system": system, "batch": batch,
                       "error": f"{type(error).__name__}: {str(error)[:300]}"}
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
