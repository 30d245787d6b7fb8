"""The undocumented NMOS opcodes, against their published definitions.

The definitions (results, flags, cycles) are written out independently in
stella_py65.py from the "NMOS 6510 Unintended Opcodes" document and 64doc,
with Stella's choices where the silicon is unstable. Below them, a few known
answers taken straight from those documents. test_ale_oracle.py runs the
same opcodes inside ALE itself.
"""

import numpy as np
import pytest
from hypothesis import given, settings

from jaxatari import cpu6502
from tests.cpu6502 import helpers
from tests.cpu6502.stella_py65 import UNDOCUMENTED_OPCODES
from tests.cpu6502.strategies import cpu_state

_NON_JAM = [op for op in UNDOCUMENTED_OPCODES
            if op not in cpu6502.JAM_OPCODES]


@pytest.mark.parametrize("opcode", _NON_JAM,
                         ids=helpers.opcode_id)
@settings(max_examples=25)
@given(state=cpu_state)
def test_undocumented_opcode_matches_definition(opcode, state):
    helpers.assert_matches_oracle(opcode, state)


def test_opcode_table_is_complete():
    assert len(_NON_JAM) + len(cpu6502.JAM_OPCODES) + 151 == 256
    assert len(cpu6502.JAM_OPCODES) == 12


def _run(program: list[int], a=0, x=0, y=0, sp=0xFF, p=0, steps=1,
         memory_init=None):
    memory = np.zeros(0x10000, np.uint8)
    memory[0x200:0x200 + len(program)] = program
    for address, value in (memory_init or {}).items():
        memory[address] = value
    cpus, memories = helpers.batched_run(steps)(
        helpers.cpu_states([a], [x], [y], [sp], [0x200], [p]), memory[None])
    return helpers.registers_of(cpus, 0), np.asarray(memories[0])


# (program, registers in, expected registers out), from the documents.
KNOWN_ANSWERS = [
    ([0x0B, 0x80], dict(a=0xFF), dict(a=0x80, p=0xB1, cycles=2)),     # ANC
    ([0x4B, 0xFF], dict(a=0x03), dict(a=0x01, p=0x31, cycles=2)),     # ALR
    ([0x6B, 0xFF], dict(a=0xFF, p=0x01), dict(a=0xFF, p=0xB1)),       # ARR
    ([0x6B, 0x60], dict(a=0xFF), dict(a=0x30, p=0x70)),               # ARR V
    ([0xCB, 0x10], dict(a=0xF0, x=0x3C), dict(x=0x20, p=0x31)),       # SBX
    ([0xCB, 0x40], dict(a=0xF0, x=0x3C), dict(x=0xF0, p=0xB0)),       # SBX <
    ([0xA7, 0x80], dict(), dict(a=0x5A, x=0x5A, cycles=4)),           # LAX
    ([0xBB, 0x00, 0x13], dict(sp=0xF3, y=0x01), dict(a=0x52, x=0x52, sp=0x52,
                                                    cycles=4)),       # LAS
    ([0x8B, 0xFF], dict(a=0x01, x=0x7F), dict(a=0x6F)),               # ANE
    ([0xAB, 0x3C], dict(a=0x00), dict(a=0x2C, x=0x2C)),               # LXA
]


@pytest.mark.parametrize("program,registers,expected", KNOWN_ANSWERS,
                         ids=lambda v: "")
def test_known_answers(program, registers, expected):
    ours, _ = _run(program, memory_init={0x80: 0x5A, 0x1301: 0x5E},
                   **registers)
    assert {k: ours[k] for k in expected} == expected


def test_sax_and_dcp_write_memory():
    _, memory = _run([0x87, 0x80], a=0xF0, x=0x3C)
    assert memory[0x80] == 0x30
    ours, memory = _run([0xC7, 0x80], a=0x10, memory_init={0x80: 0x11})
    assert memory[0x80] == 0x10 and ours["p"] & 0x03 == 0x03  # Z and C


def test_sha_shx_shy_and_high_byte():
    # SHX abs,Y: X & (high byte of the target + 1)
    _, memory = _run([0x9E, 0x00, 0x12], x=0xFF, y=0x10)
    assert memory[0x1210] == 0x13
    # SHY abs,X at $FFxx: the mask is $100, nothing of Y survives
    _, memory = _run([0x9C, 0x00, 0xFF], y=0xFF, x=0x05)
    assert memory[0xFF05] == 0x00
    # SHS: SP = A & X, memory = SP & (H + 1)
    ours, memory = _run([0x9B, 0x00, 0x30], a=0xF7, x=0x7F)
    assert ours["sp"] == 0x77 and memory[0x3000] == 0x31


@pytest.mark.parametrize("opcode", cpu6502.JAM_OPCODES,
                         ids=lambda op: f"{op:02X}")
def test_jam_stops_the_cpu(opcode):
    ours, _ = _run([0xA9, 0x42, opcode, 0xA9, 0x00], steps=5)
    assert ours == dict(a=0x42, x=0, y=0, sp=0xFF, pc=0x203, p=0x30,
                        cycles=4, jammed=1)
