"""The order, addresses and cycles of each instruction's bus accesses.

The Atari bus sees every access (hotspots, data-bus noise, "was the last
access a read"), so the CPU must make them as ALE's M6502Low does: opcode
fetch at the start cycle, every other access at start + base cycles (+1
after a page-crossing index for reads), dummy stack reads included. The
expected lists are read off Stella's M6502Low.m4 / M6502.m4.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import cpu6502

_LOG = 16


def _recording_bus() -> cpu6502.Bus:
    def log(state, kind, address, value, cycle, enabled):
        memory, entries, count = state
        entry = jnp.stack([kind, address, value, cycle]).astype(jnp.int32)
        row = jnp.where(enabled, count, _LOG)
        return memory, entries.at[row].set(entry, mode="drop"), count + enabled

    def read(state, address, cycle, enabled):
        value = state[0][address].astype(jnp.int32)
        return log(state, 1, address, value, cycle, enabled), value

    def write(state, address, value, cycle, enabled):
        memory, entries, count = log(state, 2, address, value, cycle, enabled)
        memory = memory.at[jnp.where(enabled, address, 0x10000)].set(
            value.astype(jnp.uint8), mode="drop")
        return memory, entries, count

    return cpu6502.Bus(read=read, write=write)


@jax.jit
def _accesses(cpu, memory):
    state = (memory, jnp.zeros((_LOG, 4), jnp.int32), jnp.int32(0))
    cpu, (memory, entries, count) = cpu6502.step(cpu, state,
                                                 _recording_bus())
    return cpu, entries, count


def _trace(program, memory_init=None, **registers):
    memory = np.zeros(0x10000, np.uint8)
    memory[0x1000:0x1000 + len(program)] = program
    for address, value in (memory_init or {}).items():
        memory[address] = value
    cpu = cpu6502.make_state(pc=0x1000, cycles=100, **registers)
    cpu, entries, count = _accesses(cpu, jnp.asarray(memory))
    rows = np.asarray(entries)[:int(count)]
    kinds = {1: "R", 2: "W"}
    return int(cpu.cycles), [(kinds[k], a, v, c) for k, a, v, c in rows]


R, W = "R", "W"
CASES = {
    "LDA abs,X page cross": (
        dict(program=[0xBD, 0xF0, 0x20], x=0x20),
        105, [(R, 0x1000, 0xBD, 100), (R, 0x1001, 0xF0, 104),
              (R, 0x1002, 0x20, 104), (R, 0x2110, 0, 105)]),
    "STA abs,X page cross (no penalty)": (
        dict(program=[0x9D, 0xF0, 0x20], x=0x20, a=7),
        105, [(R, 0x1000, 0x9D, 100), (R, 0x1001, 0xF0, 105),
              (R, 0x1002, 0x20, 105), (W, 0x2110, 7, 105)]),
    "INC zp": (
        dict(program=[0xE6, 0x80], memory_init={0x80: 9}),
        105, [(R, 0x1000, 0xE6, 100), (R, 0x1001, 0x80, 105),
              (R, 0x0080, 9, 105), (W, 0x0080, 10, 105)]),
    "LDA (zp),Y": (
        dict(program=[0xB1, 0x80], y=0x10,
             memory_init={0x80: 0xF8, 0x81: 0x30}),
        106, [(R, 0x1000, 0xB1, 100), (R, 0x1001, 0x80, 105),
              (R, 0x0080, 0xF8, 105), (R, 0x0081, 0x30, 105),
              (R, 0x3108, 0, 106)]),
    "JSR": (
        dict(program=[0x20, 0x34, 0x12], sp=0xFD),
        106, [(R, 0x1000, 0x20, 100), (R, 0x1001, 0x34, 106),
              (R, 0x01FD, 0, 106), (W, 0x01FD, 0x10, 106),
              (W, 0x01FC, 0x02, 106), (R, 0x1002, 0x12, 106)]),
    "RTS": (
        dict(program=[0x60], sp=0xFB,
             memory_init={0x1FC: 0x02, 0x1FD: 0x10}),
        106, [(R, 0x1000, 0x60, 100), (R, 0x01FB, 0, 106),
              (R, 0x01FC, 0x02, 106), (R, 0x01FD, 0x10, 106),
              (R, 0x1002, 0, 106)]),
    "RTI": (
        dict(program=[0x40], sp=0xFA,
             memory_init={0x1FB: 0xC3, 0x1FC: 0x00, 0x1FD: 0x20}),
        106, [(R, 0x1000, 0x40, 100), (R, 0x01FA, 0, 106),
              (R, 0x01FB, 0xC3, 106), (R, 0x01FC, 0x00, 106),
              (R, 0x01FD, 0x20, 106)]),
    "BRK": (
        dict(program=[0x00, 0xAA], p=0x01,
             memory_init={0xFFFE: 0x00, 0xFFFF: 0xF0}),
        107, [(R, 0x1000, 0x00, 100), (R, 0x1001, 0xAA, 107),
              (W, 0x01FF, 0x10, 107), (W, 0x01FE, 0x02, 107),
              (W, 0x01FD, 0x31, 107), (R, 0xFFFE, 0x00, 107),
              (R, 0xFFFF, 0xF0, 107)]),
    "PHA": (dict(program=[0x48], a=0x99),
            103, [(R, 0x1000, 0x48, 100), (W, 0x01FF, 0x99, 103)]),
    "PLA": (dict(program=[0x68], sp=0xFE, memory_init={0x1FF: 0x44}),
            104, [(R, 0x1000, 0x68, 100), (R, 0x01FE, 0, 104),
                  (R, 0x01FF, 0x44, 104)]),
    "JMP (ind) page bug": (
        dict(program=[0x6C, 0xFF, 0x30],
             memory_init={0x30FF: 0x80, 0x3000: 0x50, 0x3100: 0x60}),
        105, [(R, 0x1000, 0x6C, 100), (R, 0x1001, 0xFF, 105),
              (R, 0x1002, 0x30, 105), (R, 0x30FF, 0x80, 105),
              (R, 0x3000, 0x50, 105)]),
    "BNE taken across a page": (
        dict(program=[0xD0, 0x80]),
        104, [(R, 0x1000, 0xD0, 100), (R, 0x1001, 0x80, 102)]),
    "NOP abs,X reads its operand": (
        dict(program=[0x1C, 0xFF, 0x20], x=1),
        105, [(R, 0x1000, 0x1C, 100), (R, 0x1001, 0xFF, 104),
              (R, 0x1002, 0x20, 104), (R, 0x2100, 0, 105)]),
    "TAX makes no access": (dict(program=[0xAA]),
                            102, [(R, 0x1000, 0xAA, 100)]),
}


@pytest.mark.parametrize("name", CASES)
def test_bus_accesses(name):
    kwargs, cycles, expected = CASES[name]
    assert _trace(**kwargs) == (cycles, expected)


def test_jammed_cpu_makes_no_access():
    cpu = cpu6502.make_state(pc=0x1000).replace(jammed=jnp.asarray(True))
    _, _, count = _accesses(cpu, jnp.zeros(0x10000, jnp.uint8))
    assert int(count) == 0
