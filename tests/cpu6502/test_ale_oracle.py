"""ALE itself as the oracle: test programs run inside ale-py's emulator.

Each test builds a 4 KiB ROM here (our own code, nothing copied) that runs
instruction vectors and stores what they leave in the 2600's 128 bytes of
RAM, then loads it into ale-py. ALE picks per-game settings by file name for
a ROM it does not know; the ROM is named seaquest.bin because Seaquest's
reset only runs frames (no mode selection), so the program runs from the
reset vector, finishes, and parks in a loop. ALE's RAM is then compared with
what jaxatari's CPU computes for the same vectors.

- Semantics: decimal-mode ADC/SBC on any digits, and the undocumented
  opcodes, as ALE's Stella computes them: A, X, P and the memory operand.
- Cycles: the RIOT's TIM1T timer counts single cycles; each vector writes it,
  runs one instruction and reads INTIM. The difference to a 2-cycle NOP is
  the instruction's cycle count in ALE, including Stella's 4-cycle LAX zp.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from jaxatari import cpu6502
from tests.cpu6502 import helpers

ale_py = pytest.importorskip("ale_py")

RESULTS = 0x80           # results are stored from here
TARGET, POINTER = 0xF0, 0xF2  # memory operand and (zp) pointer, in RAM
TIM1T, INTIM = 0x0294, 0x0284


class Program:
    """A tiny emitter for a 4 KiB ROM at $F000."""

    def __init__(self):
        self.code = bytearray()

    def emit(self, *data: int) -> None:
        self.code += bytes(data)

    def lda(self, value):
        self.emit(0xA9, value)

    def sta(self, address):
        self.emit(0x85, address) if address < 0x100 else self.emit(
            0x8D, address & 0xFF, address >> 8)

    def rom(self) -> bytes:
        loop = 0xF000 + len(self.code)
        self.emit(0x4C, loop & 0xFF, loop >> 8)  # JMP * (park)
        assert len(self.code) <= 0xFFA, len(self.code)
        image = bytearray(self.code.ljust(0x1000, b"\xEA"))
        image[0xFFC:0xFFE] = (0x00, 0xF0)
        return bytes(image)


def _ale_ram(rom: bytes, tmp_path: pathlib.Path) -> np.ndarray:
    path = tmp_path / "seaquest.bin"
    path.write_bytes(rom)
    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
    ale = ale_py.ALEInterface()
    ale.setInt("random_seed", 0)
    ale.loadROM(str(path))
    return ale.getRAM()


# --------------------------------------------------------------------------
# Semantics.
# --------------------------------------------------------------------------

_IMMEDIATE = [0x69, 0xE9, 0xEB, 0x0B, 0x4B, 0x6B, 0xCB, 0x8B, 0xAB]
_ZERO_PAGE = [0x07, 0x27, 0x47, 0x67, 0xC7, 0xE7, 0xA7, 0x87]


def _vectors(seed: int, count: int):
    rng = np.random.default_rng(seed)
    opcodes = rng.choice(_IMMEDIATE + _ZERO_PAGE, count)
    values = rng.integers(0, 256, (count, 5))  # a, x, p, operand, memory
    values[:, 2] = (values[:, 2] & 0xC9) | 0x30  # keep I clear, B set
    return [(int(op), *map(int, v)) for op, v in zip(opcodes, values)]


def _semantics_rom(vectors) -> bytes:
    program = Program()
    for k, (opcode, a, x, p, operand, memory) in enumerate(vectors):
        zero_page = opcode in _ZERO_PAGE
        program.lda(memory), program.sta(TARGET)
        program.emit(0xA2, 0xFF, 0x9A)                 # LDX #$FF; TXS
        program.lda(p), program.emit(0x48)             # PHA
        program.lda(a), program.emit(0xA2, x, 0x28)    # LDA; LDX; PLP
        program.emit(opcode, TARGET if zero_page else operand)
        program.emit(0x08)                             # PHP
        program.sta(RESULTS + 4 * k), program.emit(0x86, RESULTS + 4 * k + 1)
        program.emit(0x68), program.sta(RESULTS + 4 * k + 2)  # PLA
        program.emit(0xA5, TARGET), program.sta(RESULTS + 4 * k + 3)
    program.emit(0xD8)                                 # CLD
    return program.rom()


def _ours_semantics(vectors) -> np.ndarray:
    n = len(vectors)
    memory = np.zeros((n, 0x10000), np.uint8)
    for i, (opcode, a, x, p, operand, value) in enumerate(vectors):
        zero_page = opcode in _ZERO_PAGE
        memory[i, 0x1000:0x1002] = (opcode, TARGET if zero_page else operand)
        memory[i, TARGET] = value
    v = np.array(vectors)
    cpus, memories = helpers.batched_run(1)(helpers.cpu_states(
        v[:, 1], v[:, 2], np.zeros(n), np.full(n, 0xFF), np.full(n, 0x1000),
        v[:, 3]), memory)
    return np.stack([np.asarray(cpus.a), np.asarray(cpus.x),
                     np.asarray(cpus.p), np.asarray(memories)[:, TARGET]], 1)


@pytest.mark.parametrize("seed", range(4))
def test_semantics_match_ale(seed, tmp_path):
    vectors = _vectors(seed, 28)  # 4 result bytes each: 112 of 128 RAM bytes
    ram = _ale_ram(_semantics_rom(vectors), tmp_path)
    theirs = ram[:4 * len(vectors)].reshape(-1, 4)
    ours = _ours_semantics(vectors)
    bad = [(hex(v[0]), v[1:], list(o), list(t))
           for v, o, t in zip(vectors, ours, theirs) if (o != t).any()]
    assert not bad, bad[:5]


# --------------------------------------------------------------------------
# Cycles.
# --------------------------------------------------------------------------

_CONTROL = {"BPL", "BMI", "BVC", "BVS", "BCC", "BCS", "BNE", "BEQ", "JMP",
            "JSR", "RTS", "RTI", "BRK", "JAM"}
_TIMED = [op for op in range(256) if cpu6502.MNEMONICS[op] not in _CONTROL]


def _timed_rom(opcodes) -> bytes:
    """Per opcode: registers and pointer set, TIM1T, opcode, INTIM -> RAM."""
    program = Program()
    for k, opcode in enumerate([0xEA, *opcodes]):
        program.emit(0xD8, 0xA2, 0xFF, 0x9A)           # CLD; LDX #$FF; TXS
        program.lda(TARGET + 6), program.sta(POINTER)  # ($F2) -> $00F6
        program.lda(0x00), program.sta(POINTER + 1)
        program.emit(0xA2, 0x00, 0xA0, 0x00)           # LDX #0; LDY #0
        program.lda(0xFF), program.sta(TIM1T)
        length = {1: [], 2: [TARGET], 3: [TARGET, 0x00]}[
            {"imp": 1, "acc": 1, "abs": 3, "abx": 3, "aby": 3}.get(
                cpu6502.MODES[opcode], 2)]
        if cpu6502.MODES[opcode] in ("izx", "izy"):
            length = [POINTER]
        program.emit(opcode, *length)
        program.emit(0xAD, INTIM & 0xFF, INTIM >> 8)   # LDA INTIM
        program.sta(RESULTS + k)
    return program.rom()


def _ours_cycles(opcode: int) -> int:
    memory = np.zeros(0x10000, np.uint8)
    memory[0x1000:0x1003] = (opcode, TARGET, 0x00)
    if cpu6502.MODES[opcode] in ("izx", "izy"):
        memory[0x1001] = POINTER
    memory[POINTER:POINTER + 2] = (TARGET + 6, 0x00)
    cpus, _ = helpers.batched_run(1)(helpers.cpu_states(
        [0], [0], [0], [0xFF], [0x1000], [0]), memory[None])
    return int(cpus.cycles[0])


@pytest.mark.parametrize("part", range(3))
def test_cycle_counts_match_ale(part, tmp_path):
    opcodes = _TIMED[part::3]
    ram = _ale_ram(_timed_rom(opcodes), tmp_path)
    nop = int(ram[0])
    theirs = {op: nop - int(ram[1 + k]) + 2 for k, op in enumerate(opcodes)}
    ours = {op: _ours_cycles(op) for op in opcodes}
    bad = {f"{op:02X} {cpu6502.MNEMONICS[op]} {cpu6502.MODES[op]}":
           (ours[op], theirs[op]) for op in opcodes if ours[op] != theirs[op]}
    assert not bad, bad
    assert theirs[0xA7] == 4 if 0xA7 in theirs else True  # Stella's LAX zp
