"""The MOS 6507 CPU (an NMOS 6502 core) as pure, vmappable JAX functions.

This module knows nothing of the Atari. It executes one instruction per call
of `step` against a *bus*: a pair of pure functions `read` and `write` over a
bus state that the caller owns (a flat 64 KiB memory in the tests, the Atari
bus of `console.py` for games).

What is emulated, and why
-------------------------
The reference is the CPU that ALE runs by default: Stella's `M6502Low`
(Stella 2.x/3.x, 2007). Its behaviour, which this module reproduces exactly:

* **Timing.** The instruction's whole base cycle count is added right after
  the opcode fetch, so every operand, pointer, data and stack access of the
  instruction happens at the same cycle, the instruction's end. A page-crossing
  penalty (read-class instructions in the abs,X / abs,Y / (zp),Y modes) is
  added before the data read. A taken branch adds 1 cycle, 2 if it crosses a
  page, after all accesses. There are no dummy reads on page crossings.
* **Accesses.** Each instruction performs a fixed, ordered list of bus
  accesses (up to eight). Besides the obvious ones, `M6502Low` does a dummy
  stack read in JSR, PLA, PLP, RTS and RTI, a dummy read of the byte after BRK,
  and RTS re-reads the byte at the pulled address. The Atari bus cares about
  every one of them (bank-switch hotspots, the data-bus value that TIA reads
  return, whether the last access was a read), so all of them are made.
* **Quirks kept from Stella:** a (zp,X) or (zp),Y pointer at $FF takes its
  high byte from $0100, not $0000; JMP ($xxFF) takes its high byte from $xx00;
  the PC is 16 bits and unmasked; the B flag always reads as 1.
* **Decimal mode** follows Stella's table-driven BCD (N, Z and V from the
  decimal result), including what it does with non-BCD digits, not the NMOS
  chip's undocumented N/V/Z behaviour.
* **Undocumented opcodes:** every one Stella implements (LAX, SAX, DCP, ISB,
  SLO, RLA, SRE, RRA, ANC, ALR, ARR, SBX, ANE, LXA, LAS, SHA, SHX, SHY, SHS and
  the 1-, 2- and 3-byte NOPs) with Stella's semantics. The twelve JAM opcodes
  stop the CPU, as Stella's fatal "illegal instruction" does: the JAM costs
  its 2 cycles, then the CPU is `jammed` and later steps do nothing.

How it is built for vmap
------------------------
There is no switch over opcodes. The opcode indexes one row of a control
table generated once, at import, from a readable spec (the three 16x16 grids
below: mnemonic, addressing mode, cycles), gathered as 4 packed words
(`control_row`). The row says, for each access slot, whether it reads or
writes and which address it uses, and it drives a handful of shared ALU
paths through small integer codes:

    operand --> unary stage (pass, ASL, LSR, ROL, ROR, INC, DEC)
            --> binary stage with a register (pass, AND, ORA, EOR, ADC, SBC,
                CMP, ARR)
            --> write-back to A, X, Y, SP and memory, and to the flags.

Every CPU in a batch computes the same straight-line program, each at its own
PC, and selects its results with `jnp.where`.

XLA fuses an elementwise value into every consumer and computes it again in
each. On the CPU that is where such a program's time goes: the ALU's result
feeds A, X, Y, SP, P and the memory write, and the effective address every
later access. So the CPU's lowering computes those two once
(`lowering.computed_once`), and decimal mode divides by multiplying
(`_to_bcd`). (`jaxatari.lowering` holds that choice per backend; it knows
nothing of the Atari either.)

State
-----
`CPUState` holds A, X, Y, SP, PC, P (the packed status byte, bits 4 and 5
always set), the cycle counter and the `jammed` flag, all as int32 / bool
scalars (a leading batch axis under vmap). The cycle counter is int32: a
caller that runs longer than 2**31 cycles (about 30 minutes of 2600 time)
rebases it, as the console does once per frame.
"""

from __future__ import annotations

import enum
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxatari import lowering, packed_table

# --------------------------------------------------------------------------
# The spec: three 16x16 grids, row = high nibble, column = low nibble.
# --------------------------------------------------------------------------

_MNEMONIC_GRID = """
BRK ORA JAM SLO NOP ORA ASL SLO PHP ORA ASL ANC NOP ORA ASL SLO
BPL ORA JAM SLO NOP ORA ASL SLO CLC ORA NOP SLO NOP ORA ASL SLO
JSR AND JAM RLA BIT AND ROL RLA PLP AND ROL ANC BIT AND ROL RLA
BMI AND JAM RLA NOP AND ROL RLA SEC AND NOP RLA NOP AND ROL RLA
RTI EOR JAM SRE NOP EOR LSR SRE PHA EOR LSR ALR JMP EOR LSR SRE
BVC EOR JAM SRE NOP EOR LSR SRE CLI EOR NOP SRE NOP EOR LSR SRE
RTS ADC JAM RRA NOP ADC ROR RRA PLA ADC ROR ARR JMP ADC ROR RRA
BVS ADC JAM RRA NOP ADC ROR RRA SEI ADC NOP RRA NOP ADC ROR RRA
NOP STA NOP SAX STY STA STX SAX DEY NOP TXA ANE STY STA STX SAX
BCC STA JAM SHA STY STA STX SAX TYA STA TXS SHS SHY STA SHX SHA
LDY LDA LDX LAX LDY LDA LDX LAX TAY LDA TAX LXA LDY LDA LDX LAX
BCS LDA JAM LAX LDY LDA LDX LAX CLV LDA TSX LAS LDY LDA LDX LAX
CPY CMP NOP DCP CPY CMP DEC DCP INY CMP DEX SBX CPY CMP DEC DCP
BNE CMP JAM DCP NOP CMP DEC DCP CLD CMP NOP DCP NOP CMP DEC DCP
CPX SBC NOP ISB CPX SBC INC ISB INX SBC NOP SBC CPX SBC INC ISB
BEQ SBC JAM ISB NOP SBC INC ISB SED SBC NOP ISB NOP SBC INC ISB
"""

# imp implied, acc accumulator, imm #, zp, zpx zp+X, zpy zp+Y, abs, abx abs+X,
# aby abs+Y, ind (JMP indirect), izx (zp,X), izy (zp),Y, rel branch offset.
_MODE_GRID = """
imp izx imp izx zp  zp  zp  zp  imp imm acc imm abs abs abs abs
rel izy imp izy zpx zpx zpx zpx imp aby imp aby abx abx abx abx
abs izx imp izx zp  zp  zp  zp  imp imm acc imm abs abs abs abs
rel izy imp izy zpx zpx zpx zpx imp aby imp aby abx abx abx abx
imp izx imp izx zp  zp  zp  zp  imp imm acc imm abs abs abs abs
rel izy imp izy zpx zpx zpx zpx imp aby imp aby abx abx abx abx
imp izx imp izx zp  zp  zp  zp  imp imm acc imm ind abs abs abs
rel izy imp izy zpx zpx zpx zpx imp aby imp aby abx abx abx abx
imm izx imm izx zp  zp  zp  zp  imp imm imp imm abs abs abs abs
rel izy imp izy zpx zpx zpy zpy imp aby imp aby abx abx aby aby
imm izx imm izx zp  zp  zp  zp  imp imm imp imm abs abs abs abs
rel izy imp izy zpx zpx zpy zpy imp aby imp aby abx abx aby aby
imm izx imm izx zp  zp  zp  zp  imp imm imp imm abs abs abs abs
rel izy imp izy zpx zpx zpx zpx imp aby imp aby abx abx abx abx
imm izx imm izx zp  zp  zp  zp  imp imm imp imm abs abs abs abs
rel izy imp izy zpx zpx zpx zpx imp aby imp aby abx abx abx abx
"""

# Base cycles, added right after the opcode fetch (ALE's M6502Low table).
_CYCLE_GRID = """
7 6 2 8 3 3 5 5 3 2 2 2 4 4 6 6
2 5 2 8 4 4 6 6 2 4 2 7 4 4 7 7
6 6 2 8 3 3 5 5 4 2 2 2 4 4 6 6
2 5 2 8 4 4 6 6 2 4 2 7 4 4 7 7
6 6 2 8 3 3 5 5 3 2 2 2 3 4 6 6
2 5 2 8 4 4 6 6 2 4 2 7 4 4 7 7
6 6 2 8 3 3 5 5 4 2 2 2 5 4 6 6
2 5 2 8 4 4 6 6 2 4 2 7 4 4 7 7
2 6 2 6 3 3 3 3 2 2 2 2 4 4 4 4
2 6 2 6 4 4 4 4 2 5 2 5 5 5 5 5
2 6 2 6 3 3 3 4 2 2 2 2 4 4 4 4
2 5 2 5 4 4 4 4 2 4 2 4 4 4 4 4
2 6 2 8 3 3 5 5 2 2 2 2 4 4 6 6
2 5 2 8 4 4 6 6 2 4 2 7 4 4 7 7
2 6 2 8 3 3 5 5 2 2 2 2 4 4 6 6
2 5 2 8 4 4 6 6 2 4 2 7 4 4 7 7
"""


def _grid(text: str) -> list[str]:
    cells = text.split()
    assert len(cells) == 256, len(cells)
    return cells


MNEMONICS: tuple[str, ...] = tuple(_grid(_MNEMONIC_GRID))
MODES: tuple[str, ...] = tuple(_grid(_MODE_GRID))
BASE_CYCLES: tuple[int, ...] = tuple(int(c) for c in _grid(_CYCLE_GRID))

#: The 151 opcodes of the documented NMOS 6502 instruction set.
DOCUMENTED_OPCODES: tuple[int, ...] = tuple(
    op for op in range(256)
    if MNEMONICS[op] in {
        "ADC", "AND", "ASL", "BCC", "BCS", "BEQ", "BIT", "BMI", "BNE", "BPL",
        "BRK", "BVC", "BVS", "CLC", "CLD", "CLI", "CLV", "CMP", "CPX", "CPY",
        "DEC", "DEX", "DEY", "EOR", "INC", "INX", "INY", "JMP", "JSR", "LDA",
        "LDX", "LDY", "LSR", "NOP", "ORA", "PHA", "PHP", "PLA", "PLP", "ROL",
        "ROR", "RTI", "RTS", "SBC", "SEC", "SED", "SEI", "STA", "STX", "STY",
        "TAX", "TAY", "TSX", "TXA", "TXS", "TYA"}
    and not (MNEMONICS[op] == "NOP" and op != 0xEA)
    and not (MNEMONICS[op] == "SBC" and op == 0xEB))

#: The opcodes that stop the CPU (Stella's fatal illegal instruction).
JAM_OPCODES: tuple[int, ...] = tuple(
    op for op in range(256) if MNEMONICS[op] == "JAM")

_LENGTH = {"imp": 1, "acc": 1, "imm": 2, "zp": 2, "zpx": 2, "zpy": 2,
           "izx": 2, "izy": 2, "rel": 2, "abs": 3, "abx": 3, "aby": 3,
           "ind": 3}

# Status register bits.
FLAG_C, FLAG_Z, FLAG_I, FLAG_D = 0x01, 0x02, 0x04, 0x08
FLAG_B, FLAG_UNUSED, FLAG_V, FLAG_N = 0x10, 0x20, 0x40, 0x80

# --------------------------------------------------------------------------
# Control codes. Each is a small integer stored in the control table.
# --------------------------------------------------------------------------


class Mode(enum.IntEnum):
    IMP = 0
    ACC = 1
    IMM = 2
    ZP = 3
    ZPX = 4
    ZPY = 5
    ABS = 6
    ABX = 7
    ABY = 8
    IND = 9
    IZX = 10
    IZY = 11
    REL = 12
    PUSH = 13
    PULL = 14


class Slot(enum.IntEnum):
    """What one bus-access slot does."""
    NONE = 0
    READ = 1
    WRITE = 2


class Addr(enum.IntEnum):
    """Where a slot's address comes from."""
    NONE = 0
    PC1 = 1      # PC + 1
    PC2 = 2      # PC + 2
    ZPTR = 3     # zero-page pointer: operand (+ X for (zp,X)), 8-bit
    ZPTR1 = 4    # pointer + 1, NOT wrapped into page zero (Stella)
    IND_LO = 5   # JMP (a): a
    IND_HI = 6   # JMP (a): a + 1 within a's page
    S0 = 7       # $0100 + SP
    S1 = 8       # $0100 + SP + 1
    S2 = 9
    S3 = 10
    SM1 = 11     # $0100 + SP - 1
    SM2 = 12
    RTS_PC = 13  # the address RTS pulled
    EA = 14      # the effective address of the data access
    VEC_LO = 15  # $FFFE
    VEC_HI = 16  # $FFFF


class Src(enum.IntEnum):
    """Input of the unary stage."""
    M = 0    # the operand (immediate byte, data read, or pulled byte)
    A = 1
    X = 2
    Y = 3
    S = 4
    AM = 5   # A & operand (ALR)
    AX = 6   # A & X (SAX, SHA, SHS)
    P = 7    # status byte (PHP)


class Unary(enum.IntEnum):
    PASS = 0
    ASL = 1
    LSR = 2
    ROL = 3
    ROR = 4
    INC = 5
    DEC = 6


class Lhs(enum.IntEnum):
    """Register operand of the binary stage."""
    A = 0
    X = 1
    Y = 2
    S = 3
    AX = 4    # A & X (SBX)
    ANE = 5   # (A | $EE) & X
    LXA = 6   # A | $EE


class Binary(enum.IntEnum):
    PASS = 0
    AND = 1
    OR = 2
    EOR = 3
    ADC = 4
    SBC = 5
    CMP = 6
    ARR = 7


class CarryFrom(enum.IntEnum):
    ALU = 0
    SHIFT = 1
    NEGATIVE = 2  # ANC: C = N


class FromU(enum.IntEnum):
    """N and V from the binary result, or from the operand (BIT)."""
    ALU = 0
    OPERAND = 1


class NextPC(enum.IntEnum):
    NEXT = 0
    BRANCH = 1
    JMP_ABS = 2
    JMP_IND = 3
    JSR = 4
    RTS = 5
    RTI = 6
    BRK = 7


class PFrom(enum.IntEnum):
    """Where the status byte comes from."""
    FLAGS = 0     # updated flag by flag
    PULL = 1      # PLP: the pulled byte
    RTI = 2       # RTI: the first pulled byte


_DEST_A, _DEST_X, _DEST_Y, _DEST_S = 1, 2, 4, 8
_BRANCH_FLAG = {"BPL": (FLAG_N, 0), "BMI": (FLAG_N, 1), "BVC": (FLAG_V, 0),
                "BVS": (FLAG_V, 1), "BCC": (FLAG_C, 0), "BCS": (FLAG_C, 1),
                "BNE": (FLAG_Z, 0), "BEQ": (FLAG_Z, 1)}
_FLAG_SET_CLEAR = {"CLC": (0, FLAG_C), "SEC": (FLAG_C, 0),
                   "CLI": (0, FLAG_I), "SEI": (FLAG_I, 0),
                   "CLD": (0, FLAG_D), "SED": (FLAG_D, 0),
                   "CLV": (0, FLAG_V), "BRK": (FLAG_I, 0)}


def _op(access: str = "none", src: Src = Src.M, unary: Unary = Unary.PASS,
        lhs: Lhs = Lhs.A, binary: Binary = Binary.PASS, dest: str = "",
        flags: str = "", carry: CarryFrom = CarryFrom.ALU,
        from_operand: FromU = FromU.ALU, sh: bool = False) -> dict:
    """One operation's controls; `dest` and `flags` are letter sets."""
    dest_bits = sum(bit for letter, bit in
                    (("A", _DEST_A), ("X", _DEST_X), ("Y", _DEST_Y),
                     ("S", _DEST_S)) if letter in dest)
    flag_bits = sum(bit for letter, bit in
                    (("N", FLAG_N), ("V", FLAG_V), ("Z", FLAG_Z),
                     ("C", FLAG_C)) if letter in flags)
    return dict(access=access, src=src, unary=unary, lhs=lhs, binary=binary,
                dest=dest_bits, flags=flag_bits, carry=carry,
                from_operand=from_operand, sh=sh)


_READ_LOGIC = {"AND": Binary.AND, "ORA": Binary.OR, "EOR": Binary.EOR}
_RMW_COMBO = {"SLO": (Unary.ASL, Binary.OR), "RLA": (Unary.ROL, Binary.AND),
              "SRE": (Unary.LSR, Binary.EOR)}
_SHIFTS = {"ASL": Unary.ASL, "LSR": Unary.LSR, "ROL": Unary.ROL,
           "ROR": Unary.ROR}
_STEPS = {"INC": Unary.INC, "DEC": Unary.DEC}
_REG_STEPS = {"INX": (Src.X, Unary.INC, "X"), "DEX": (Src.X, Unary.DEC, "X"),
              "INY": (Src.Y, Unary.INC, "Y"), "DEY": (Src.Y, Unary.DEC, "Y")}
_TRANSFERS = {"TAX": (Src.A, "X"), "TAY": (Src.A, "Y"), "TXA": (Src.X, "A"),
              "TYA": (Src.Y, "A"), "TSX": (Src.S, "X")}
_LOADS = {"LDA": "A", "LDX": "X", "LDY": "Y", "LAX": "AX"}
_STORES = {"STA": Src.A, "STX": Src.X, "STY": Src.Y, "SAX": Src.AX}
_COMPARES = {"CMP": Lhs.A, "CPX": Lhs.X, "CPY": Lhs.Y}


def _operation(name: str) -> dict:
    """The controls of one mnemonic (addressing mode applied later)."""
    if name in _READ_LOGIC:
        return _op("read", binary=_READ_LOGIC[name], dest="A", flags="NZ")
    if name in ("ADC", "SBC"):
        return _op("read", binary=Binary[name], dest="A", flags="NZCV")
    if name in _RMW_COMBO:
        unary, binary = _RMW_COMBO[name]
        return _op("rmw", unary=unary, binary=binary, dest="A", flags="NZC",
                   carry=CarryFrom.SHIFT)
    if name in _SHIFTS:
        return _op("rmw", unary=_SHIFTS[name], flags="NZC",
                   carry=CarryFrom.SHIFT)
    if name in _STEPS:
        return _op("rmw", unary=_STEPS[name], flags="NZ")
    if name in _REG_STEPS:
        src, unary, dest = _REG_STEPS[name]
        return _op(src=src, unary=unary, dest=dest, flags="NZ")
    if name in _TRANSFERS:
        src, dest = _TRANSFERS[name]
        return _op(src=src, dest=dest, flags="NZ")
    if name in _LOADS:
        return _op("read", dest=_LOADS[name], flags="NZ")
    if name in _STORES:
        return _op("write", src=_STORES[name])
    if name in _COMPARES:
        return _op("read", lhs=_COMPARES[name], binary=Binary.CMP,
                   flags="NZC")
    return _SPECIAL_OPERATIONS.get(name, _op())


_SPECIAL_OPERATIONS = {
    "RRA": _op("rmw", unary=Unary.ROR, binary=Binary.ADC, dest="A",
               flags="NZCV"),
    "DCP": _op("rmw", unary=Unary.DEC, binary=Binary.CMP, flags="NZC"),
    "ISB": _op("rmw", unary=Unary.INC, binary=Binary.SBC, dest="A",
               flags="NZCV"),
    "ANC": _op("read", binary=Binary.AND, dest="A", flags="NZC",
               carry=CarryFrom.NEGATIVE),
    "ALR": _op("read", src=Src.AM, unary=Unary.LSR, dest="A", flags="NZC",
               carry=CarryFrom.SHIFT),
    "ARR": _op("read", binary=Binary.ARR, dest="A", flags="NZCV"),
    "ANE": _op("read", lhs=Lhs.ANE, binary=Binary.AND, dest="A", flags="NZ"),
    "LXA": _op("read", lhs=Lhs.LXA, binary=Binary.AND, dest="AX",
               flags="NZ"),
    "SBX": _op("read", lhs=Lhs.AX, binary=Binary.CMP, dest="X", flags="NZC"),
    "LAS": _op("read", lhs=Lhs.S, binary=Binary.AND, dest="AXS", flags="NZ"),
    "BIT": _op("read", binary=Binary.AND, flags="NZV",
               from_operand=FromU.OPERAND),
    "TXS": _op(src=Src.X, dest="S"),
    "SHA": _op("write", src=Src.AX, sh=True),
    "SHX": _op("write", src=Src.X, sh=True),
    "SHY": _op("write", src=Src.Y, sh=True),
    "SHS": _op("write", src=Src.AX, dest="S", sh=True),
    "NOP": _op("read"),
    "PHA": _op("write", src=Src.A),
    "PHP": _op("write", src=Src.P),
    "PLA": _op("read", dest="A", flags="NZ"),
    "PLP": _op("read"),
}

# --------------------------------------------------------------------------
# The control table, one row per opcode.
# --------------------------------------------------------------------------

NUM_SLOTS = 8  # slot 0 is the opcode fetch
_COLUMNS = ("mode", "length", "cycles", "penalty",
            *(f"kind{i}" for i in range(1, NUM_SLOTS)),
            *(f"addr{i}" for i in range(1, NUM_SLOTS)),
            "src", "unary", "lhs", "binary", "dest", "flags", "carry",
            "from_operand", "sh", "set", "clear", "branch_mask",
            "branch_want", "next_pc", "sp_delta", "p_from", "jam")
_COL = {name: i for i, name in enumerate(_COLUMNS)}

# Slots per access pattern: {slot: (kind, address)}; data slots 5 and 6.
_R, _W = Slot.READ, Slot.WRITE
_SEQUENCES = {
    "JSR": {1: (_R, Addr.PC1), 2: (_R, Addr.S0), 3: (_W, Addr.S0),
            4: (_W, Addr.SM1), 5: (_R, Addr.PC2)},
    "RTS": {1: (_R, Addr.S0), 2: (_R, Addr.S1), 3: (_R, Addr.S2),
            4: (_R, Addr.RTS_PC)},
    "RTI": {1: (_R, Addr.S0), 2: (_R, Addr.S1), 3: (_R, Addr.S2),
            4: (_R, Addr.S3)},
    "BRK": {1: (_R, Addr.PC1), 3: (_W, Addr.S0), 4: (_W, Addr.SM1),
            5: (_W, Addr.SM2), 6: (_R, Addr.VEC_LO), 7: (_R, Addr.VEC_HI)},
    "JMP_IND": {1: (_R, Addr.PC1), 2: (_R, Addr.PC2), 3: (_R, Addr.IND_LO),
                4: (_R, Addr.IND_HI)},
}
_OPERAND_FETCH = {
    Mode.IMM: {1: (_R, Addr.PC1)}, Mode.REL: {1: (_R, Addr.PC1)},
    Mode.ZP: {1: (_R, Addr.PC1)}, Mode.ZPX: {1: (_R, Addr.PC1)},
    Mode.ZPY: {1: (_R, Addr.PC1)},
    Mode.ABS: {1: (_R, Addr.PC1), 2: (_R, Addr.PC2)},
    Mode.ABX: {1: (_R, Addr.PC1), 2: (_R, Addr.PC2)},
    Mode.ABY: {1: (_R, Addr.PC1), 2: (_R, Addr.PC2)},
    Mode.IZX: {1: (_R, Addr.PC1), 2: (_R, Addr.ZPTR), 3: (_R, Addr.ZPTR1)},
    Mode.IZY: {1: (_R, Addr.PC1), 2: (_R, Addr.ZPTR), 3: (_R, Addr.ZPTR1)},
    Mode.PUSH: {}, Mode.PULL: {1: (_R, Addr.S0)},
}
_NEXT_PC = {"JSR": NextPC.JSR, "RTS": NextPC.RTS, "RTI": NextPC.RTI,
            "BRK": NextPC.BRK}
_SP_DELTA = {"PHA": -1, "PHP": -1, "PLA": 1, "PLP": 1, "JSR": -2, "RTS": 2,
             "RTI": 3, "BRK": -3}


def _mode_of(name: str, grid_mode: str) -> Mode:
    if name in ("PHA", "PHP"):
        return Mode.PUSH
    if name in ("PLA", "PLP"):
        return Mode.PULL
    return Mode[grid_mode.upper()]


def _slots(name: str, mode: Mode, access: str) -> dict:
    """The ordered bus accesses after the opcode fetch, as {slot: ...}."""
    if name in _SEQUENCES:
        return _SEQUENCES[name]
    if name == "JMP":
        return _SEQUENCES["JMP_IND"] if mode == Mode.IND else _OPERAND_FETCH[mode]
    if mode in (Mode.IMP, Mode.ACC):
        return {}
    slots = dict(_OPERAND_FETCH[mode])
    if mode in (Mode.IMM, Mode.REL):
        return slots
    if access in ("read", "rmw"):
        slots[5] = (_R, Addr.EA)
    if access in ("write", "rmw"):
        slots[6] = (_W, Addr.EA)
    return slots


def _control_row(opcode: int) -> np.ndarray:
    name, mode = MNEMONICS[opcode], _mode_of(MNEMONICS[opcode], MODES[opcode])
    ctl = _operation(name)
    if mode == Mode.ACC:  # ASL A etc.: the accumulator is the operand
        ctl.update(access="none", src=Src.A, dest=_DEST_A)
    if mode == Mode.IMP and ctl["access"] != "none" and name != "NOP":
        raise AssertionError(name)
    row = np.zeros(len(_COLUMNS), np.int32)
    penalty = ctl["access"] == "read" and mode in (Mode.ABX, Mode.ABY, Mode.IZY)
    values = dict(mode=mode, length=_LENGTH[MODES[opcode]],
                  cycles=BASE_CYCLES[opcode], penalty=penalty,
                  src=ctl["src"], unary=ctl["unary"], lhs=ctl["lhs"],
                  binary=ctl["binary"], dest=ctl["dest"], flags=ctl["flags"],
                  carry=ctl["carry"], from_operand=ctl["from_operand"],
                  sh=ctl["sh"], jam=name == "JAM",
                  sp_delta=_SP_DELTA.get(name, 0))
    values["set"], values["clear"] = _FLAG_SET_CLEAR.get(name, (0, 0))
    values["branch_mask"], values["branch_want"] = _BRANCH_FLAG.get(name, (0, 0))
    values["next_pc"] = _next_pc_code(name, mode)
    values["p_from"] = {"PLP": PFrom.PULL, "RTI": PFrom.RTI}.get(name, PFrom.FLAGS)
    for slot, (kind, addr) in _slots(name, mode, ctl["access"]).items():
        values[f"kind{slot}"], values[f"addr{slot}"] = kind, addr
    for key, value in values.items():
        row[_COL[key]] = int(value)
    return row


def _next_pc_code(name: str, mode: Mode) -> NextPC:
    if name in _NEXT_PC:
        return _NEXT_PC[name]
    if name == "JMP":
        return NextPC.JMP_IND if mode == Mode.IND else NextPC.JMP_ABS
    return NextPC.BRANCH if name in _BRANCH_FLAG else NextPC.NEXT


CONTROL_TABLE: np.ndarray = np.stack([_control_row(op) for op in range(256)])

# --------------------------------------------------------------------------
# State and bus.
# --------------------------------------------------------------------------


@struct.dataclass
class CPUState:
    """Registers of one 6507 (or a batch of them, with a leading axis).

    Attributes:
        a, x, y: accumulator and index registers, 0..255.
        sp: stack pointer, 0..255 (the stack lives at $0100 + sp).
        pc: program counter, 0..65535 (16 bits, unmasked).
        p: status byte NV-BDIZC; bits 4 (B) and 5 always set.
        cycles: CPU cycles executed, int32.
        jammed: True once a JAM opcode has stopped the CPU.
    """
    a: jax.Array
    x: jax.Array
    y: jax.Array
    sp: jax.Array
    pc: jax.Array
    p: jax.Array
    cycles: jax.Array
    jammed: jax.Array


BusState = Any


def _already_settled(bus_state: BusState) -> BusState:
    return bus_state


class Bus(NamedTuple):
    """Pure bus functions. All arguments are int32 scalars (bool `enabled`).

    read(state, address, cycle, enabled) -> (state, value 0..255)
    write(state, address, value, cycle, enabled) -> state
    settle(state) -> state, called at the start of every `step` (and at the
        end of `run`): a bus that buffers writes applies them here.

    `address` is the full 16-bit address. `cycle` is the CPU cycle at which
    the access happens. A disabled access must leave the state unchanged; its
    read value is ignored. Accesses come in the instruction's bus order.
    """
    read: Callable[[BusState, jax.Array, jax.Array, jax.Array],
                   tuple[BusState, jax.Array]]
    write: Callable[[BusState, jax.Array, jax.Array, jax.Array, jax.Array],
                    BusState]
    settle: Callable[[BusState], BusState] = _already_settled


def make_state(a: int = 0, x: int = 0, y: int = 0, sp: int = 0xFF,
               pc: int = 0, p: int = FLAG_UNUSED | FLAG_B,
               cycles: int = 0) -> CPUState:
    """A CPU state with the given registers (B and bit 5 forced on)."""
    i32 = lambda v: jnp.asarray(v, jnp.int32)
    return CPUState(a=i32(a), x=i32(x), y=i32(y), sp=i32(sp), pc=i32(pc),
                    p=i32(p | FLAG_UNUSED | FLAG_B), cycles=i32(cycles),
                    jammed=jnp.asarray(False))


def reset(bus_state: BusState, bus: Bus,
          cycles: jax.Array | int = 0) -> tuple[CPUState, BusState]:
    """Stella's CPU reset: A=X=Y=0, SP=$FF, P=$30 (I clear), PC=[$FFFC].

    Args:
        bus_state: the bus state; the reset vector is read through it.
        bus: the bus functions.
        cycles: the cycle counter to start from.

    Returns:
        The CPU state and the bus state after the two vector reads.
    """
    cycles = jnp.asarray(cycles, jnp.int32)
    on = jnp.asarray(True)
    bus_state, lo = bus.read(bus_state, jnp.int32(0xFFFC), cycles, on)
    bus_state, hi = bus.read(bus_state, jnp.int32(0xFFFD), cycles, on)
    cpu = make_state(cycles=0).replace(pc=lo | (hi << 8), cycles=cycles)
    return cpu, bus_state


# --------------------------------------------------------------------------
# The ALU: shared arithmetic paths, selected by control codes.
# --------------------------------------------------------------------------


def _pick(code: jax.Array, options: dict[int, jax.Array],
          default: jax.Array | int = 0) -> jax.Array:
    """options[code] as a chain of selects (codes not listed -> default)."""
    out = jnp.asarray(default, jnp.int32)
    for key, value in options.items():
        out = jnp.where(code == key, value, out)
    return out


def _unary(x: jax.Array, op: jax.Array, carry: jax.Array):
    """Shift, rotate, increment or pass; returns (result, carry out)."""
    left = ((x << 1) | jnp.where(op == Unary.ROL, carry, 0)) & 0xFF
    right = (x >> 1) | jnp.where(op == Unary.ROR, carry << 7, 0)
    result = _pick(op, {Unary.ASL: left, Unary.ROL: left, Unary.LSR: right,
                        Unary.ROR: right, Unary.INC: (x + 1) & 0xFF,
                        Unary.DEC: (x - 1) & 0xFF}, x)
    is_left = (op == Unary.ASL) | (op == Unary.ROL)
    carry_out = jnp.where(is_left, x >> 7, x & 1)
    return result, carry_out


def _from_bcd(x: jax.Array) -> jax.Array:
    """Stella's BCD-to-binary table: 10 * high nibble + low nibble."""
    return (x >> 4) * 10 + (x & 0x0F)


def _to_bcd(n: jax.Array) -> jax.Array:
    """Stella's binary-to-BCD table, n in 0..255: tens and units of
    n % 100. Divisions by multiplication (exact below 1,000), since a vector
    CPU has no integer divide."""
    hundreds = (n * 41) >> 12
    rest = n - hundreds * 100
    tens = (rest * 205) >> 11
    return (tens << 4) | (rest - tens * 10)


def _decimal_difference(n: jax.Array) -> jax.Array:
    """The BCD result of a decimal subtraction, n in -66..165.

    Stella indexes its binary-to-BCD table with n even when a subtraction of
    non-BCD digits leaves n negative after adding 100. That read lands n
    entries before the table, in the BCD-to-binary table stored just before
    it: entry n + 256 of that table.
    """
    return jnp.where(n < 0, _from_bcd(n + 256), _to_bcd(jnp.maximum(n, 0)))


def _adder(lhs, rhs, op, carry, decimal):
    """ADC / SBC (binary or Stella decimal) and CMP: (result, C, V)."""
    is_sub = op == Binary.SBC
    addend = jnp.where(is_sub, rhs ^ 0xFF, rhs)
    total = lhs + addend + carry
    bin_v = ((lhs ^ total) & (addend ^ total) & 0x80) != 0
    dec_add = _from_bcd(lhs) + _from_bcd(rhs) + carry
    dec_sub = _from_bcd(lhs) - _from_bcd(rhs) - (1 - carry)
    dec_sub = jnp.where(dec_sub < 0, dec_sub + 100, dec_sub)
    dec_result = jnp.where(is_sub, _decimal_difference(dec_sub),
                           _to_bcd(dec_add & 0xFF))
    dec_carry = jnp.where(is_sub, lhs >= rhs + (1 - carry), dec_add > 99)
    dec_v = (((lhs ^ dec_result) & (dec_result ^ rhs)) & 0x80) != 0
    use_dec = decimal & (op != Binary.CMP)
    diff = lhs - rhs
    result = jnp.where(op == Binary.CMP, diff & 0xFF,
                       jnp.where(use_dec, dec_result, total & 0xFF))
    carry_out = jnp.where(op == Binary.CMP, diff >= 0,
                          jnp.where(use_dec, dec_carry, total > 0xFF))
    overflow = jnp.where(use_dec, dec_v, bin_v)
    return result, carry_out.astype(jnp.int32), overflow.astype(jnp.int32)


def _arr(a, operand, carry, decimal):
    """ARR as Stella does it: (result, N, Z, C, V)."""
    t = a & operand
    rotated = (t >> 1) | (carry << 7)
    bin_c = (rotated >> 6) & 1
    bin_v = ((rotated >> 6) ^ (rotated >> 5)) & 1
    low_fix = ((t & 0x0F) + (t & 0x01)) > 0x05
    adjusted = jnp.where(low_fix, (rotated & 0xF0) | ((rotated + 6) & 0x0F),
                         rotated)
    high_fix = ((t & 0xF0) + (t & 0x10)) > 0x50
    adjusted = jnp.where(high_fix, (adjusted + 0x60) & 0xFF, adjusted)
    result = jnp.where(decimal, adjusted, rotated)
    negative = jnp.where(decimal, carry, rotated >> 7)
    zero = (rotated == 0).astype(jnp.int32)
    c = jnp.where(decimal, high_fix.astype(jnp.int32), bin_c)
    v = jnp.where(decimal, ((t ^ rotated) >> 6) & 1, bin_v)
    return result, negative, zero, c, v


def _binary(lhs, rhs, op, carry, decimal):
    """The binary stage: (result, N, Z, C, V)."""
    sum_result, sum_c, sum_v = _adder(lhs, rhs, op, carry, decimal)
    is_sum = (op == Binary.ADC) | (op == Binary.SBC) | (op == Binary.CMP)
    result = _pick(op, {Binary.AND: lhs & rhs, Binary.OR: lhs | rhs,
                        Binary.EOR: lhs ^ rhs}, rhs)
    result = jnp.where(is_sum, sum_result, result)
    arr_result, arr_n, arr_z, arr_c, arr_v = _arr(lhs, rhs, carry, decimal)
    is_arr = op == Binary.ARR
    negative = jnp.where(is_arr, arr_n, result >> 7)
    zero = jnp.where(is_arr, arr_z, (result == 0).astype(jnp.int32))
    result = jnp.where(is_arr, arr_result, result)
    return (result, negative, zero, jnp.where(is_arr, arr_c, sum_c),
            jnp.where(is_arr, arr_v, sum_v))


# --------------------------------------------------------------------------
# One instruction.
# --------------------------------------------------------------------------


def _stack(sp: jax.Array, offset: int) -> jax.Array:
    return 0x100 | ((sp + offset) & 0xFF)


def _access(bus: Bus, bus_state, kind, address, value, cycle, live):
    """One slot: a read, a write or nothing, as the control code says."""
    bus_state, read_value = bus.read(bus_state, address, cycle,
                                     live & (kind == Slot.READ))
    bus_state = bus.write(bus_state, address, value, cycle,
                          live & (kind == Slot.WRITE))
    return bus_state, read_value


def _effective_address(mode, b1, b2, b3, x, y, sp):
    """Data address by mode, and whether indexing crossed a page."""
    absolute = b1 | (b2 << 8)
    pointer = b2 | (b3 << 8)
    base = jnp.where(mode == Mode.IZY, pointer, absolute)
    index = jnp.where(mode == Mode.ABX, x, y)
    indexed = (base + index) & 0xFFFF
    crossed = ((base & 0xFF) + index) > 0xFF
    ea = _pick(mode, {Mode.ZP: b1, Mode.ZPX: (b1 + x) & 0xFF,
                      Mode.ZPY: (b1 + y) & 0xFF, Mode.ABS: absolute,
                      Mode.ABX: indexed, Mode.ABY: indexed,
                      Mode.IZX: pointer, Mode.IZY: indexed,
                      Mode.PUSH: _stack(sp, 0), Mode.PULL: _stack(sp, 1)})
    return ea, crossed


def _fetch(cpu: CPUState, ctl, bus_state, bus: Bus, live, cycle):
    """Slots 1-4: operand bytes, pointers, stack bytes; returns b1..b4."""
    col = lambda name: ctl[_COL[name]]
    pc, sp = cpu.pc, cpu.sp
    pc1, pc2 = (pc + 1) & 0xFFFF, (pc + 2) & 0xFFFF
    on = lambda slot: live & (col(f"kind{slot}") == Slot.READ)
    bus_state, b1 = bus.read(bus_state, _pick(col("addr1"), {
        Addr.PC1: pc1, Addr.S0: _stack(sp, 0)}), cycle, on(1))
    zptr = jnp.where(col("mode") == Mode.IZX, (b1 + cpu.x) & 0xFF, b1)
    bus_state, b2 = bus.read(bus_state, _pick(col("addr2"), {
        Addr.PC2: pc2, Addr.ZPTR: zptr, Addr.S0: _stack(sp, 0),
        Addr.S1: _stack(sp, 1)}), cycle, on(2))
    indirect = b1 | (b2 << 8)
    return_address = pc2 >> 8
    bus_state, b3 = _access(bus, bus_state, col("kind3"), _pick(col("addr3"), {
        Addr.ZPTR1: zptr + 1, Addr.IND_LO: indirect, Addr.S2: _stack(sp, 2),
        Addr.S0: _stack(sp, 0)}), return_address, cycle, live)
    indirect_hi = (indirect & 0xFF00) | ((indirect + 1) & 0xFF)
    bus_state, b4 = _access(bus, bus_state, col("kind4"), _pick(col("addr4"), {
        Addr.IND_HI: indirect_hi, Addr.S3: _stack(sp, 3),
        Addr.RTS_PC: b2 | (b3 << 8), Addr.SM1: _stack(sp, -1)}),
        pc2 & 0xFF, cycle, live)
    return bus_state, (b1, b2, b3, b4)


def _execute(cpu: CPUState, ctl, operand, ea):
    """The ALU: new A, X, Y, SP, P and the byte to write to memory."""
    col = lambda name: ctl[_COL[name]]
    a, x, y, sp, p = cpu.a, cpu.x, cpu.y, cpu.sp, cpu.p
    carry, decimal = p & FLAG_C, (p & FLAG_D) != 0
    u_in = _pick(col("src"), {Src.A: a, Src.X: x, Src.Y: y, Src.S: sp,
                              Src.AM: a & operand, Src.AX: a & x,
                              Src.P: p | FLAG_B | FLAG_UNUSED}, operand)
    u, shift_carry = _unary(u_in, col("unary"), carry)
    is_shift = (col("unary") >= Unary.ASL) & (col("unary") <= Unary.ROR)
    carry_in = jnp.where(is_shift, shift_carry, carry)
    lhs = _pick(col("lhs"), {Lhs.X: x, Lhs.Y: y, Lhs.S: sp, Lhs.AX: a & x,
                             Lhs.ANE: (a | 0xEE) & x, Lhs.LXA: a | 0xEE}, a)
    b, n, z, c, v = _binary(lhs, u, col("binary"), carry_in, decimal)
    b, n, z, c, v, u, shift_carry = _alu_once(b, n, z, c, v, u, shift_carry)
    n = jnp.where(col("from_operand") == FromU.OPERAND, u >> 7, n)
    v = jnp.where(col("from_operand") == FromU.OPERAND, (u >> 6) & 1, v)
    c = _pick(col("carry"), {CarryFrom.SHIFT: shift_carry,
                             CarryFrom.NEGATIVE: n}, c)
    computed = (n << 7) | (v << 6) | (z << 1) | c
    flags = col("flags")
    new_p = (p & ~flags) | (computed & flags)
    new_p = (new_p | col("set")) & ~col("clear")
    dest = col("dest")
    write = lambda bit, old: jnp.where((dest & bit) != 0, b, old)
    sh_mask = ((ea >> 8) & 0xFF) + 1
    mem_value = jnp.where(col("sh") != 0, u & sh_mask, u) & 0xFF
    return (write(_DEST_A, a), write(_DEST_X, x), write(_DEST_Y, y),
            write(_DEST_S, sp), new_p, mem_value)


def _alu_once(b, n, z, c, v, u, shift_carry):
    """The ALU's outputs (bytes and bits), packed in one word that is
    `lowering.computed_once`, and unpacked."""
    word = lowering.computed_once(
        b | (n << 8) | (z << 9) | (c << 10) | (v << 11) | (u << 12)
        | (shift_carry << 20))
    return (word & 0xFF, (word >> 8) & 1, (word >> 9) & 1, (word >> 10) & 1,
            (word >> 11) & 1, (word >> 12) & 0xFF, (word >> 20) & 1)


def _branch(cpu: CPUState, ctl, offset):
    """Whether a branch is taken, its target and its extra cycles."""
    mask = ctl[_COL["branch_mask"]]
    flag_set = ((cpu.p & mask) != 0).astype(jnp.int32)
    taken = (mask != 0) & (flag_set == ctl[_COL["branch_want"]])
    after = (cpu.pc + 2) & 0xFFFF
    target = (after + offset - ((offset & 0x80) << 1)) & 0xFFFF
    extra = jnp.where(taken, 1 + ((after ^ target) > 0xFF), 0)
    return taken, target, extra


PACKED_CONTROL_TABLE, _PACKED_LAYOUT = packed_table.pack(CONTROL_TABLE)
"""`CONTROL_TABLE` packed: each opcode's 35 columns in 4 int32 words."""


def control_row(opcode: jax.Array) -> packed_table.PackedRow:
    """The opcode's row of `CONTROL_TABLE`, what `step` looks up by
    default: a gather of its 4 packed words, each column then a shift
    and a mask.

    Gathering the 35 columns themselves cost XLA:CPU a gather of 35
    elements a console at every instruction; the packed row made the
    preset's step 1.04x to 1.08x faster on the CPU (BENCHMARKS.md, "The
    6502's control row packed")."""
    return packed_table.PackedRow(jnp.asarray(PACKED_CONTROL_TABLE)[opcode],
                                  _PACKED_LAYOUT)


def step(cpu: CPUState, bus_state: BusState, bus: Bus,
         enabled: bool | jax.Array = True,
         control: Callable[[jax.Array], Any] = control_row
         ) -> tuple[CPUState, BusState]:
    """Execute one instruction.

    Args:
        cpu: the CPU state (unbatched; use `jax.vmap` for a batch).
        bus_state: the state the bus functions read and write.
        bus: the bus functions.
        enabled: whether the CPU runs (a batch masks the CPUs that
            wait); a CPU not enabled is left unchanged and its accesses
            are disabled, so a bus that keeps its contract leaves the bus
            state unchanged too.
        control: the opcode's row of `CONTROL_TABLE`, anything indexed
            by a column number (`control_row`, packed words, by default; a
            Pallas kernel, which cannot gather from values, reads the
            table through a ref instead: `benchmarks/pallas_probe.py`).

    Returns:
        The new CPU state and bus state. A jammed CPU is left unchanged and
        makes no bus access. A bus that buffers writes may still hold this
        instruction's writes; `bus.settle` applies them.
    """
    live = ~cpu.jammed & enabled
    bus_state = bus.settle(bus_state)
    bus_state, opcode = bus.read(bus_state, cpu.pc, cpu.cycles, live)
    ctl = control(opcode)
    col = lambda name: ctl[_COL[name]]
    cycle = cpu.cycles + col("cycles")
    bus_state, (b1, b2, b3, b4) = _fetch(cpu, ctl, bus_state, bus, live, cycle)
    ea, crossed = _effective_address(col("mode"), b1, b2, b3, cpu.x, cpu.y,
                                     cpu.sp)
    packed = lowering.computed_once(ea | (crossed.astype(jnp.int32) << 16))
    ea, crossed = packed & 0xFFFF, (packed >> 16) != 0
    cycle = cycle + (col("penalty") & crossed)
    p_pushed = cpu.p | FLAG_B | FLAG_UNUSED
    bus_state, b5 = _access(bus, bus_state, col("kind5"), _pick(col("addr5"), {
        Addr.EA: ea, Addr.PC2: (cpu.pc + 2) & 0xFFFF,
        Addr.SM2: _stack(cpu.sp, -2)}), p_pushed, cycle, live)
    operand = jnp.where(col("mode") == Mode.IMM, b1, b5)
    a, x, y, sp, p, mem_value = _execute(cpu, ctl, operand, ea)
    bus_state, b6 = _access(bus, bus_state, col("kind6"), _pick(col("addr6"), {
        Addr.EA: ea, Addr.VEC_LO: 0xFFFE}), mem_value, cycle, live)
    bus_state, b7 = bus.read(bus_state, jnp.int32(0xFFFF), cycle,
                             live & (col("kind7") == Slot.READ))
    taken, target, extra = _branch(cpu, ctl, b1)
    pc = _pick(col("next_pc"), {
        NextPC.BRANCH: jnp.where(taken, target, cpu.pc + 2),
        NextPC.JMP_ABS: b1 | (b2 << 8), NextPC.JMP_IND: b3 | (b4 << 8),
        NextPC.JSR: b1 | (b5 << 8), NextPC.RTS: (b2 | (b3 << 8)) + 1,
        NextPC.RTI: b3 | (b4 << 8), NextPC.BRK: b6 | (b7 << 8)},
        cpu.pc + col("length")) & 0xFFFF
    p = _pick(col("p_from"), {PFrom.PULL: b5, PFrom.RTI: b2}, p)
    new = CPUState(a=a, x=x, y=y, sp=(sp + col("sp_delta")) & 0xFF, pc=pc,
                   p=p | FLAG_B | FLAG_UNUSED, cycles=cycle + extra,
                   jammed=col("jam") != 0)
    return jax.tree.map(lambda n, o: jnp.where(live, n, o), new, cpu), bus_state


def run(cpu: CPUState, bus_state: BusState, bus: Bus,
        num_instructions: int) -> tuple[CPUState, BusState]:
    """Execute `num_instructions` instructions (a `lax.fori_loop`).

    Returns the CPU state and the settled bus state.
    """
    def body(_, carry):
        return step(carry[0], carry[1], bus)
    cpu, bus_state = jax.lax.fori_loop(0, num_instructions, body,
                                       (cpu, bus_state))
    return cpu, bus.settle(bus_state)
