"""The public API: reset, make_state, run, wrap-around, tables."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari import cpu6502, flatbus
from tests.cpu6502 import helpers


def _memory(program, at=0x1000):
    memory = np.zeros(0x10000, np.uint8)
    memory[at:at + len(program)] = program
    return memory


def test_reset_loads_the_vector_and_stella_registers():
    memory = _memory([])
    memory[0xFFFC:0xFFFE] = (0x4D, 0xF3)
    cpu, _ = jax.jit(lambda m: cpu6502.reset(flatbus.flat_memory(m),
                                             flatbus.FLAT_BUS))(memory)
    assert helpers.registers_of(jax.tree.map(lambda v: v[None], cpu), 0) == (
        dict(a=0, x=0, y=0, sp=0xFF, pc=0xF34D, p=0x30, cycles=0, jammed=0))


def test_run_equals_repeated_steps():
    memory = helpers.random_memory(3, avoid_jams=True)
    start = cpu6502.make_state(pc=0x4000, a=5, p=0x09)
    cpu, state = jax.jit(lambda c, m: cpu6502.run(
        c, flatbus.flat_memory(m), flatbus.FLAT_BUS, 25))(start, memory)
    step = jax.jit(lambda c, s: cpu6502.step(c, s, flatbus.FLAT_BUS))
    other, other_state = start, flatbus.flat_memory(memory)
    for _ in range(25):
        other, other_state = step(other, other_state)
    other_state = flatbus.FLAT_BUS.settle(other_state)
    assert jax.tree.all(jax.tree.map(jnp.array_equal, cpu, other))
    assert jnp.array_equal(state.memory, other_state.memory)


def test_pc_wraps_at_64k():
    # LDA #$42 at $FFFF: the operand comes from $0000, the PC wraps to $0001
    memory = _memory([0x42], at=0x0000)
    memory[0xFFFF] = 0xA9
    cpus, _ = helpers.batched_run(1)(
        helpers.cpu_states([0], [0], [0], [0xFF], [0xFFFF], [0]),
        memory[None])
    assert int(cpus.a[0]) == 0x42 and int(cpus.pc[0]) == 0x0001


def test_writes_are_visible_to_later_reads_of_the_same_instruction():
    # JSR pushes the return address onto the page it then fetches from.
    memory = _memory([0x20, 0x00], at=0x01FC)  # JSR $xx00 at $01FC
    memory[0x01FE] = 0x77                       # overwritten by the push
    cpus, memories = helpers.batched_run(1)(
        helpers.cpu_states([0], [0], [0], [0xFE], [0x01FC], [0]),
        memory[None])
    # The high byte of the target is read after the push wrote $01 there.
    assert int(cpus.pc[0]) == 0x0100
    assert np.asarray(memories[0])[0x01FE] == 0x01


def test_control_table_covers_every_opcode():
    assert cpu6502.CONTROL_TABLE.shape[0] == 256
    assert len(cpu6502.MNEMONICS) == len(cpu6502.MODES) == 256
