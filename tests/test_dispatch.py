"""`benchmarks/dispatch.py`'s specialized design: a `lax.switch` on the
opcode to copies of `cpu6502.step` whose control rows are constants must
be the select-every-path step, bit for bit, on random programs (all of
memory, every register), including decimal mode, the stack, interrupts
and undocumented opcodes. Its speed is the benchmark's (BENCHMARKS.md,
"What a switch-dispatched CPU would buy")."""
from __future__ import annotations

import importlib.util
import pathlib

import jax
import numpy as np

from jaxatari import cpu6502, flatbus
from tests.cpu6502 import helpers

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "dispatch", ROOT / "benchmarks" / "dispatch.py")
dispatch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dispatch)

BATCH, STEPS = 8, 400
SPECIALIZED = sorted({*np.random.default_rng(7).choice(
    256, 40, replace=False).tolist(),
    0x69, 0xE9, 0x61, 0xF1, 0x00, 0x20, 0x40, 0x60, 0xD0, 0x6C})
"""Opcodes given copies of their own (ADC and SBC for decimal mode, BRK,
JSR, RTI, RTS, a branch, JMP indirect, and 40 drawn at random); the rest
run the generic step, as the benchmark's program-only variant does."""


def test_the_specialized_switch_is_the_select_every_path_step():
    rng = np.random.default_rng(2026)
    memories = np.stack([helpers.random_memory(seed, avoid_jams=True)
                         for seed in range(BATCH)])
    regs = rng.integers(0, 256, (6, BATCH))
    regs[4] = rng.integers(0x0000, 0xFF00, BATCH)
    cpus = helpers.cpu_states(*regs)
    expected_cpu, expected_memory = helpers.batched_run(STEPS)(cpus,
                                                              memories)

    def one(cpu, memory):
        cpu, state = dispatch.specialized_run(
            (cpu, flatbus.flat_memory(memory)), STEPS, flatbus.FLAT_BUS,
            SPECIALIZED)
        return cpu, flatbus.FLAT_BUS.settle(state).memory
    got_cpu, got_memory = jax.jit(jax.vmap(one))(cpus, memories)
    for name in helpers.REGISTERS:
        np.testing.assert_array_equal(getattr(got_cpu, name),
                                      getattr(expected_cpu, name), name)
    np.testing.assert_array_equal(got_memory, expected_memory)
    # The specialized copies ran: random bytes hit most of these opcodes.
    ran = np.isin(memories, SPECIALIZED).mean()
    assert ran > 0.15, ran
