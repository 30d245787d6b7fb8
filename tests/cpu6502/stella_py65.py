"""py65's NMOS 6502, made to behave as ALE's CPU (Stella's M6502Low).

py65 is the independent oracle for the documented instruction set. Where
py65 and ALE's Stella disagree, Stella wins, and each such case is one
override below, with the reason:

1. DEC abs ($CE) takes 6 cycles. py65's table says 3, a py65 bug; every
   6502 reference and Stella's table say 6.
2. A (zp,X) or (zp),Y pointer at $FF takes its high byte from $0100. A real
   6502 (and py65) wraps to $0000; Stella computes `pointer + 1` without
   wrapping.
3. Decimal ADC/SBC use Stella's BCD tables: A = bcd(bin(A) +/- bin(M) +/- c),
   N and Z from that result, V = ((A ^ result) & (result ^ M) & $80), carry
   from the decimal sum, or the binary comparison A >= M + borrow. For valid
   BCD digits A and C equal the NMOS chip's (and py65's); N, V and Z do not.
   `test_py65_deviations.py` checks that these are the only differences.
4. LAX zp ($A7), an undocumented opcode, takes 4 cycles in Stella's table;
   the published definition says 3. `test_ale_oracle.py` measures it in ALE.
5. JSR reads its low operand byte, pushes the return address, and only then
   reads the high byte, as the chip and Stella do. py65 pushes first and
   reads both bytes after, which differs when the stack overlaps the
   operand (code running in page 1).

py65 does not implement the undocumented opcodes. They are added here from
their published definitions (the "NMOS 6510 Unintended Opcodes" document and
64doc), with the choices Stella made where the silicon is unstable: ANE and
LXA use the constant $EE; SHA, SHX, SHY and SHS AND with the high byte of the
final address plus one; ARR in decimal mode follows 64doc. The twelve JAM
opcodes stop the CPU after 2 cycles, as Stella's fatal error does.
"""

from py65.devices.mpu6502 import MPU


def _bcd_to_binary(value: int) -> int:
    return (value >> 4) * 10 + (value & 0x0F)


def _binary_to_bcd(value: int) -> int:
    if value < 0:  # Stella reads before its table: see cpu6502
        return _bcd_to_binary(value + 256)
    return (((value % 100) // 10) << 4) | (value % 10)


class StellaMPU(MPU):
    """py65's MPU with the deviations and additions listed above."""

    instruct = list(MPU.instruct)
    cycletime = list(MPU.cycletime)
    extracycles = list(MPU.extracycles)
    disassemble = list(MPU.disassemble)
    cycletime[0xCE] = 6  # deviation 1
    instruct[0x20] = lambda mpu: mpu._jsr()  # deviation 5

    def __init__(self, memory, pc):
        super().__init__(memory=memory, pc=pc)
        self.jammed = False

    def step(self):
        if not self.jammed:
            super().step()
        return self

    # Deviation 2 -----------------------------------------------------------
    def _pointer(self, zero_page: int) -> int:
        return self.ByteAt(zero_page) | (self.ByteAt(zero_page + 1) << 8)

    def IndirectXAddr(self):
        return self._pointer((self.ByteAt(self.pc) + self.x) & 0xFF)

    def IndirectYAddr(self):
        base = self._pointer(self.ByteAt(self.pc))
        target = (base + self.y) & 0xFFFF
        if self.addcycles and (base & 0xFF00) != (target & 0xFF00):
            self.excycles += 1
        return target

    # Deviation 5 -----------------------------------------------------------
    def _jsr(self):
        low = self.ByteAt(self.pc)
        self.stPushWord((self.pc + 1) & self.addrMask)
        self.pc = low | (self.ByteAt((self.pc + 1) & self.addrMask) << 8)

    # Deviation 3 -----------------------------------------------------------
    def _decimal_flags(self, old_a: int, operand: int, carry: bool) -> None:
        self.p &= ~(self.CARRY | self.ZERO | self.NEGATIVE | self.OVERFLOW)
        self.p |= (self.CARRY if carry else 0) | (self.a & self.NEGATIVE)
        self.p |= self.ZERO if self.a == 0 else 0
        if (old_a ^ self.a) & (self.a ^ operand) & 0x80:
            self.p |= self.OVERFLOW

    def opADC(self, x):
        if not self.p & self.DECIMAL:
            return super().opADC(x)
        operand = self.ByteAt(x())
        total = (_bcd_to_binary(self.a) + _bcd_to_binary(operand)
                 + (self.p & self.CARRY))
        old_a, self.a = self.a, _binary_to_bcd(total & 0xFF)
        self._decimal_flags(old_a, operand, total > 99)

    def opSBC(self, x):
        if not self.p & self.DECIMAL:
            return super().opSBC(x)
        operand = self.ByteAt(x())
        borrow = 1 - (self.p & self.CARRY)
        difference = (_bcd_to_binary(self.a) - _bcd_to_binary(operand)
                      - borrow)
        if difference < 0:
            difference += 100
        old_a, self.a = self.a, _binary_to_bcd(difference)
        self._decimal_flags(old_a, operand, old_a >= operand + borrow)


# --------------------------------------------------------------------------
# Undocumented opcodes.
# --------------------------------------------------------------------------

_ADDRESSING = {  # mode: (address function, operand bytes)
    "imm": ("ProgramCounter", 1), "zpg": ("ZeroPageAddr", 1),
    "zpx": ("ZeroPageXAddr", 1), "zpy": ("ZeroPageYAddr", 1),
    "abs": ("AbsoluteAddr", 2), "abx": ("AbsoluteXAddr", 2),
    "aby": ("AbsoluteYAddr", 2), "inx": ("IndirectXAddr", 1),
    "iny": ("IndirectYAddr", 1), "imp": (None, 0),
}


def _define(opcode: int, name: str, mode: str, cycles: int, action,
            page_penalty: bool = False) -> None:
    function, length = _ADDRESSING[mode]

    def execute(mpu):
        address = getattr(mpu, function)() if function else None
        action(mpu, address)
        mpu.pc += length

    StellaMPU.instruct[opcode] = execute
    StellaMPU.cycletime[opcode] = cycles
    StellaMPU.extracycles[opcode] = int(page_penalty)
    StellaMPU.disassemble[opcode] = (name, mode)


def _set_nz(mpu, value: int) -> int:
    mpu.FlagsNZ(value)
    return value


def _shift_left(mpu, value: int, carry_in: int) -> int:
    mpu.p = (mpu.p & ~mpu.CARRY) | (value >> 7)
    return ((value << 1) | carry_in) & 0xFF


def _shift_right(mpu, value: int, carry_in: int) -> int:
    mpu.p = (mpu.p & ~mpu.CARRY) | (value & 1)
    return (value >> 1) | (carry_in << 7)


def _rmw(modify, combine):
    """Read-modify-write: store modify(M) at the address, then combine the
    new M (still at that address) with A, using py65's own ALU."""
    def action(mpu, address):
        mpu.memory[address] = modify(mpu, mpu.ByteAt(address))
        combine(mpu, lambda: address)
    return action


_COMBOS = {
    "SLO": (lambda m, v: _shift_left(m, v, 0), MPU.opORA),
    "RLA": (lambda m, v: _shift_left(m, v, m.p & m.CARRY), MPU.opAND),
    "SRE": (lambda m, v: _shift_right(m, v, 0), MPU.opEOR),
    "RRA": (lambda m, v: _shift_right(m, v, m.p & m.CARRY),
            StellaMPU.opADC),
    "DCP": (lambda m, v: (v - 1) & 0xFF,
            lambda m, address: m.opCMPR(address, m.a)),
    "ISB": (lambda m, v: (v + 1) & 0xFF, StellaMPU.opSBC),
}
_COMBO_OPCODES = {  # mode: (opcode offset from the row base, cycles)
    "inx": (0x03, 8), "zpg": (0x07, 5), "abs": (0x0F, 6), "iny": (0x13, 8),
    "zpx": (0x17, 6), "aby": (0x1B, 7), "abx": (0x1F, 7),
}
for _base, _name in zip((0x00, 0x20, 0x40, 0x60, 0xC0, 0xE0), _COMBOS):
    _modify, _combine = _COMBOS[_name]
    for _mode, (_offset, _cycles) in _COMBO_OPCODES.items():
        _define(_base + _offset, _name, _mode, _cycles,
                _rmw(_modify, _combine))


def _lax(mpu, address):
    mpu.a = mpu.x = _set_nz(mpu, mpu.ByteAt(address))


def _sax(mpu, address):
    mpu.memory[address] = mpu.a & mpu.x


for _op, _mode, _cycles in ((0xA3, "inx", 6), (0xA7, "zpg", 4),
                            (0xAF, "abs", 4), (0xB3, "iny", 5),
                            (0xB7, "zpy", 4), (0xBF, "aby", 4)):
    _define(_op, "LAX", _mode, _cycles, _lax,
            page_penalty=_mode in ("iny", "aby"))
for _op, _mode, _cycles in ((0x83, "inx", 6), (0x87, "zpg", 3),
                            (0x8F, "abs", 4), (0x97, "zpy", 4)):
    _define(_op, "SAX", _mode, _cycles, _sax)


def _anc(mpu, address):
    mpu.a = _set_nz(mpu, mpu.a & mpu.ByteAt(address))
    mpu.p = (mpu.p & ~mpu.CARRY) | (mpu.a >> 7)


def _alr(mpu, address):
    mpu.a = _set_nz(mpu, _shift_right(mpu, mpu.a & mpu.ByteAt(address), 0))


def _arr(mpu, address):
    value = mpu.a & mpu.ByteAt(address)
    carry = mpu.p & mpu.CARRY
    result = (value >> 1) | (carry << 7)
    flags = mpu.p & ~(mpu.NEGATIVE | mpu.OVERFLOW | mpu.ZERO | mpu.CARRY)
    flags |= mpu.ZERO if result == 0 else 0
    if not mpu.p & mpu.DECIMAL:
        flags |= (result & 0x80) | ((result >> 6) & 1)
        flags |= mpu.OVERFLOW if ((result >> 6) ^ (result >> 5)) & 1 else 0
    else:  # 64doc's decimal ARR, as Stella implements it
        flags |= mpu.NEGATIVE if carry else 0
        flags |= mpu.OVERFLOW if (value ^ result) & 0x40 else 0
        if (value & 0x0F) + (value & 0x01) > 0x05:
            result = (result & 0xF0) | ((result + 0x06) & 0x0F)
        if (value & 0xF0) + (value & 0x10) > 0x50:
            result = (result + 0x60) & 0xFF
            flags |= mpu.CARRY
    mpu.a, mpu.p = result, flags


def _sbx(mpu, address):
    operand = mpu.ByteAt(address)
    difference = (mpu.a & mpu.x) - operand
    mpu.p = (mpu.p & ~mpu.CARRY) | (difference >= 0)
    mpu.x = _set_nz(mpu, difference & 0xFF)


def _ane(mpu, address):
    mpu.a = _set_nz(mpu, (mpu.a | 0xEE) & mpu.x & mpu.ByteAt(address))


def _lxa(mpu, address):
    mpu.a = mpu.x = _set_nz(mpu, (mpu.a | 0xEE) & mpu.ByteAt(address))


def _las(mpu, address):
    mpu.a = mpu.x = mpu.sp = _set_nz(mpu, mpu.sp & mpu.ByteAt(address))


def _store_high(register):
    def action(mpu, address):
        mpu.memory[address] = register(mpu) & ((address >> 8) + 1) & 0xFF
    return action


def _shs(mpu, address):
    mpu.sp = mpu.a & mpu.x
    _store_high(lambda m: m.sp)(mpu, address)


for _op, _name, _action in ((0x0B, "ANC", _anc), (0x2B, "ANC", _anc),
                            (0x4B, "ALR", _alr), (0x6B, "ARR", _arr),
                            (0xCB, "SBX", _sbx), (0x8B, "ANE", _ane),
                            (0xAB, "LXA", _lxa)):
    _define(_op, _name, "imm", 2, _action)
_define(0xEB, "SBC", "imm", 2, lambda m, a: m.opSBC(lambda: a))
_define(0xBB, "LAS", "aby", 4, _las, page_penalty=True)
_define(0x93, "SHA", "iny", 6, _store_high(lambda m: m.a & m.x))
_define(0x9F, "SHA", "aby", 5, _store_high(lambda m: m.a & m.x))
_define(0x9E, "SHX", "aby", 5, _store_high(lambda m: m.x))
_define(0x9C, "SHY", "abx", 5, _store_high(lambda m: m.y))
_define(0x9B, "SHS", "aby", 5, _shs)

# NOPs that read an operand (the read is a real bus access in Stella).
_nop = lambda mpu, address: mpu.ByteAt(address) if address is not None else 0
for _op in (0x1A, 0x3A, 0x5A, 0x7A, 0xDA, 0xFA):
    _define(_op, "NOP", "imp", 2, _nop)
for _op in (0x80, 0x82, 0x89, 0xC2, 0xE2):
    _define(_op, "NOP", "imm", 2, _nop)
for _op in (0x04, 0x44, 0x64):
    _define(_op, "NOP", "zpg", 3, _nop)
for _op in (0x14, 0x34, 0x54, 0x74, 0xD4, 0xF4):
    _define(_op, "NOP", "zpx", 4, _nop)
_define(0x0C, "NOP", "abs", 4, _nop)
for _op in (0x1C, 0x3C, 0x5C, 0x7C, 0xDC, 0xFC):
    _define(_op, "NOP", "abx", 4, _nop, page_penalty=True)


def _jam(mpu, address):
    mpu.jammed = True


for _op in (0x02, 0x12, 0x22, 0x32, 0x42, 0x52, 0x62, 0x72, 0x92, 0xB2,
            0xD2, 0xF2):
    _define(_op, "JAM", "imp", 2, _jam)

UNDOCUMENTED_OPCODES = tuple(
    op for op in range(256)
    if StellaMPU.disassemble[op] != MPU.disassemble[op])
