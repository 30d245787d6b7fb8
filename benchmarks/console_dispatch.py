"""One console's frame with its instruction step dispatched per opcode
(issue #18's CPU target): does `benchmarks/dispatch.py`'s specialized
switch pay inside the console?

The console's step (`bus.step`: the collision plan, the latches and
`cpu6502.step` on the Atari bus) is wrapped in a `lax.switch` on the
opcode at the PC, each branch the same step with `cpu6502.step`'s control
row as constants (`control=`), for the opcodes the game ran in its first
frames (found with a host callback); any other opcode takes the generic
step. One console, unbatched, the CPU's lowering: XLA:CPU compiles its
frame loop into one kernel, where the switch is a jump. Both programs must
end every frame in the same state (checked). Prints one JSON line per
design: compile seconds and the median milliseconds of an undrawn frame.

The switch is patched in for tracing (`bus.step` and `cpu6502.step` are
swapped while the program traces): a measurement, not a design.

Usage: XLA_FLAGS=--xla_force_host_platform_device_count=1 \\
       python benchmarks/console_dispatch.py [--game pong] [--frames 3]
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import json
import statistics
import time
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

import jaxatari
from jaxatari import bus as atari_bus, console, cpu6502, lowering

KEPT_STEP = atari_bus.step
KEPT_CPU_STEP = cpu6502.step


@contextlib.contextmanager
def patched(module: Any, name: str, value: Any):
    """`module.name` is `value` inside the block."""
    kept = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, kept)


def opcodes_run(board, machine, inputs, frames: int) -> list[int]:
    """The opcodes the console executes in its next `frames` frames."""
    seen = collections.Counter()

    def counting(board, inputs, state, running, axis_name, latched=False):
        opcode = atari_bus.peek(board, state, state.cpu.pc)[0]
        jax.debug.callback(lambda op: seen.update([int(op)]), opcode)
        return KEPT_STEP(board, inputs, state, running, axis_name, latched)
    with patched(atari_bus, "step", counting):
        program = jax.jit(lambda s: console.frame(board, s, inputs, False))
        state = machine
        for _ in range(frames):
            state = program(state)
        jax.block_until_ready(state)
    return sorted(seen)


def switched_step(opcodes: list[int]) -> Callable:
    """`bus.step` as a switch to copies specialized for `opcodes`."""
    index = np.full(256, len(opcodes), np.int32)
    index[opcodes] = np.arange(len(opcodes))

    def step(board, inputs, state, running, axis_name, latched=False):
        def copy(row):          # the step, its control row constants
            def run(state):
                control = (cpu6502.step if row is None else
                           functools.partial(KEPT_CPU_STEP, control=lambda
                                             _: [int(v) for v in row]))
                with patched(cpu6502, "step", control):
                    return KEPT_STEP(board, inputs, state, running,
                                     axis_name, latched)
            return run
        opcode = atari_bus.peek(board, state, state.cpu.pc)[0]
        branches = [copy(cpu6502.CONTROL_TABLE[op]) for op in opcodes]
        return jax.lax.switch(jnp.asarray(index)[opcode],
                              branches + [copy(None)], state)
    return step


def measure(step: Callable, board, machine, inputs, frames: int,
            repeats: int) -> tuple[dict[str, Any], list[Any]]:
    """Compile time, median undrawn frame, and the states of `frames`
    frames, with `step` as the console's instruction step."""
    with patched(atari_bus, "step", step), lowering.forced(lowering.CPU):
        begin = time.perf_counter()
        program = jax.jit(lambda s: console.frame(board, s, inputs, False)
                          ).lower(machine).compile()
        compile_s = time.perf_counter() - begin
    states, state = [], machine
    for _ in range(frames):
        state = program(state)
        states.append(jax.device_get(state))
    times = []
    for _ in range(repeats):
        begin = time.perf_counter()
        jax.block_until_ready(program(machine))
        times.append(time.perf_counter() - begin)
    return {"compile_s": round(compile_s, 1),
            "ms_per_frame": round(statistics.median(times) * 1e3, 3)}, states


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="pong")
    parser.add_argument("--frames", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    env, params = jaxatari.make(args.game)
    machine = jax.tree.map(lambda x: x[0], params.reset_states.machine)
    inputs = console.Inputs(swcha=jnp.int32(0xFF), swchb=jnp.int32(0x0B),
                            fire=jnp.zeros(2, jnp.int32),
                            paddle_needed=jnp.full(4, -2, jnp.int32))
    opcodes = opcodes_run(env.board, machine, inputs, args.frames)
    rows, finals = {}, {}
    for name, step in (("kept step", KEPT_STEP),
                       ("switch to specialized copies",
                        switched_step(opcodes))):
        rows[name], finals[name] = measure(step, env.board, machine, inputs,
                                           args.frames, args.repeats)
    for kept, switched in zip(*finals.values()):
        for x, y in zip(jax.tree.leaves(kept), jax.tree.leaves(switched),
                        strict=True):
            assert np.array_equal(np.asarray(x), np.asarray(y))
    for name, row in rows.items():
        print(json.dumps({"design": name, "game": args.game, "batch": 1,
                          "specialized_opcodes": len(opcodes),
                          "same_states": True, **row,
                          "backend": jax.default_backend()}), flush=True)


if __name__ == "__main__":
    main()
