"""Hand-assembled 4K test ROMs, one TIA feature each (for tests/test_tia.py).

Every ROM is the same frame around a per-feature part:

* reset: clear RAM, then the feature's `setup` (register writes, RESPx
  strobes at chosen cycles);
* each frame: VSYNC (the frame ends when it is cleared), read CXM0P-CXPPMM
  into $B0-$B7 (all collisions since the last CXCLR), CXCLR,
  the feature's `vblank` code, ~33 blank lines, then two 96-line kernel
  halves running the feature's `line` code once per scanline with Y counting
  down from 96. After the first half the CX registers go to $A0-$A7, after
  the second all 14 read registers (CX, INPT0-5) go to $90-$9D, each read
  through a different addressing mode so the data-bus noise in the low six
  bits differs. Then the overscan, and the frame counter $80;
* after `FRAMES` full frames the program executes a JAM in the overscan.
  The CPU stops there until the next system reset, so the screen and RAM
  freeze on a fully drawn frame and the remaining frames of ALE's `loadROM`
  cost the emulator almost nothing.

The programs clear RAM and read no timer or switch, so the state after a
system reset depends only on the ROM.
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

FRAMES = 2

# Write registers: the TIA's addresses (hardware facts; a wrong one in
# jaxatari.tia would make ALE and jaxatari disagree on the same ROM).
from jaxatari.tia import (  # noqa: E402,F401
    COLUBK, COLUP0, COLUP1, COLUPF, CTRLPF, CXCLR, ENABL, ENAM0, ENAM1, GRP0,
    GRP1, HMBL, HMCLR, HMM0, HMM1, HMOVE, HMP0, HMP1, NUSIZ0, NUSIZ1, PF0,
    PF1, PF2, REFP0, REFP1, RESBL, RESM0, RESM1, RESMP0, RESMP1, RESP0, RESP1,
    VBLANK, VDELBL, VDELP0, VDELP1, VSYNC, WSYNC)

# RAM the programs fill (CPU addresses).
FRAME_COUNTER = 0x80
END_READS, MID_READS, START_READS = 0x90, 0xA0, 0xB0


class Ins(NamedTuple):
    """One instruction: its bytes and its cycles (no page crossing).

    `jsr_next` marks a JSR to the instruction after it (the assembler fills
    in the address).
    """
    code: bytes
    cycles: int
    jsr_next: bool = False


Code = tuple[Ins, ...]


def _ins(cycles: int, *data: int) -> Code:
    return (Ins(bytes(data), cycles),)


def sta(reg: int) -> Code:
    """STA zero page."""
    return _ins(3, 0x85, reg)


def sty(reg: int) -> Code:
    """STY zero page."""
    return _ins(3, 0x84, reg)


def lda(value: int) -> Code:
    """LDA immediate."""
    return _ins(2, 0xA9, value)


def ldx(value: int) -> Code:
    """LDX immediate."""
    return _ins(2, 0xA2, value)


def write(reg: int, value: int) -> Code:
    """LDA #value; STA reg."""
    return lda(value) + sta(reg)


def writes(*pairs: tuple[int, int]) -> Code:
    """Several (register, value) writes."""
    return sum((write(reg, value) for reg, value in pairs), ())


JSR_NEXT = (Ins(b"\x20", 6, True),)
TYA = _ins(2, 0x98)
TXS = _ins(2, 0x9A)
LSR = _ins(2, 0x4A)
ASL = _ins(2, 0x0A)
WSYNC_ = sta(WSYNC)


def eor(value: int) -> Code:
    """EOR immediate."""
    return _ins(2, 0x49, value)


def delay(cycles: int) -> Code:
    """Exactly `cycles` CPU cycles of NOPs (BIT $80 for an odd count)."""
    if cycles == 1 or cycles < 0:
        raise ValueError(f"cannot delay {cycles} cycles")
    odd = _ins(3, 0x24, 0x80) if cycles % 2 else ()
    return odd + _ins(2, 0xEA) * ((cycles - 3 * (cycles % 2)) // 2)


def at_cycle(start: int, cycle: int, store: Code) -> Code:
    """`store` (a 3-cycle write) landing on `cycle`, starting at `start`."""
    return delay(cycle - start - 3) + store


def strobe_at(reg: int, cycle: int) -> Code:
    """On a new scanline, write `reg` at CPU cycle `cycle` of the line."""
    return WSYNC_ + at_cycle(0, cycle, sta(reg))


def if_line(y: int, code: Code) -> Code:
    """CPY #y; BNE over `code`: run it on the line where Y == y."""
    skip = _size(code)
    return _ins(2, 0xC0, y) + _ins(2, 0xD0, skip) + code


def every(lines: int, code: Code) -> Code:
    """TYA; AND #lines-1; BNE over `code`: run it when Y % lines == 0."""
    return TYA + _ins(2, 0x29, lines - 1) + _ins(2, 0xD0, _size(code)) + code


def cycles(code: Code) -> int:
    """CPU cycles of straight-line code (branches counted as not taken)."""
    return sum(i.cycles for i in code)


BASE_SETUP = (writes((COLUP0, 0x46), (COLUP1, 0x86), (COLUPF, 0xC8),
                     (COLUBK, 0x14))
              + strobe_at(RESP0, 30) + strobe_at(RESP1, 41)
              + strobe_at(RESM0, 36) + strobe_at(RESM1, 47)
              + strobe_at(RESBL, 52))
ALL_ON = writes((GRP0, 0xA5), (GRP1, 0x3C), (ENAM0, 2), (ENAM1, 2),
                (ENABL, 2))


@dataclasses.dataclass(frozen=True)
class Feature:
    """One test program: what it adds to the common frame.

    Attributes:
        name: test id.
        setup: code run once after reset (after colours and positions).
        line: code run on every kernel line; Y holds 96..1.
        pre: code run before each kernel half's first line.
        vblank: code run once per frame, after CXCLR.
        overscan: code run once per frame, after the last reads.
        blank: the VBLANK value outside the kernel.
        wsync: whether each kernel line starts with STA WSYNC; without it
            `line` must take exactly 71 cycles (a 76-cycle loop).
    """
    name: str
    setup: Code = ()
    line: Code = ()
    pre: Code = ()
    vblank: Code = ()
    overscan: Code = ()
    blank: int = 2
    wsync: bool = True


# --------------------------------------------------------------------------
# Assembly.
# --------------------------------------------------------------------------


class _Asm:
    """Appends code at $F000 with backward/forward branches by label."""

    def __init__(self):
        self.code = bytearray()
        self.labels: dict[str, int] = {}
        self.fixups: list[tuple[int, str]] = []

    @property
    def pc(self) -> int:
        return 0xF000 + len(self.code)

    def put(self, code: Code) -> None:
        for ins in code:
            after = (self.pc + 3).to_bytes(2, "little")
            self.code += ins.code + (after if ins.jsr_next else b"")

    def label(self, name: str) -> None:
        self.labels[name] = self.pc

    def branch(self, opcode: int, target: str) -> None:
        self.code += bytes([opcode, 0])
        self.fixups.append((len(self.code) - 1, target))

    def jmp(self, target: str) -> None:
        self.code += bytes([0x4C, 0, 0])
        self.fixups.append((-(len(self.code) - 2), target))

    def align_for(self, length: int) -> None:
        """NOP-pad so `length` bytes from here stay inside one page."""
        if (self.pc & 0xFF) + length > 0x100:
            self.put(_ins(2, 0xEA) * (0x100 - (self.pc & 0xFF)))

    def image(self) -> bytes:
        for at, target in self.fixups:
            address = self.labels[target]
            if at < 0:
                self.code[-at:-at + 2] = address.to_bytes(2, "little")
            else:
                offset = address - (0xF000 + at + 1)
                assert -128 <= offset < 128, target
                self.code[at] = offset & 0xFF
        rom = bytearray(4096)
        rom[:len(self.code)] = self.code
        rom[0xFFC:] = bytes([0x00, 0xF0, 0x00, 0xF0])
        return bytes(rom)


def _reads(asm: _Asm, registers: range, target: int, mode: str) -> None:
    """Read TIA registers and store them to RAM at `target`.

    mode "zp": LDA $30+r (noise $30|r); "abs": LDA $2F00+r (noise $2F);
    "zpx": LDA $C8+r,X with X=$38 wrapping to r (noise $08+r).
    """
    if mode == "zpx":
        asm.put(ldx(0x38))
    for k, reg in enumerate(registers):
        if mode == "zp":
            asm.put(_ins(3, 0xA5, 0x30 + reg))
        elif mode == "abs":
            asm.put(_ins(4, 0xAD, reg, 0x2F))
        else:
            asm.put(_ins(4, 0xB5, 0xC8 + reg))
        asm.put(sta(target + k))


def _size(code: Code) -> int:
    return sum(len(i.code) + 2 * i.jsr_next for i in code)


def _kernel_half(asm: _Asm, feature: Feature, name: str) -> None:
    """WSYNC, LDY #96, `pre`, then the loop: body; DEY; BNE.

    The loop is kept inside one page (no branch penalty). A JSR in the body
    is placed so the return address it pushes has bit 1 set and bits 6-7
    clear (seen as a VBLANK value: blank on, no latches, no dump).
    """
    body = (WSYNC_ if feature.wsync else ()) + feature.line
    # A line is body + DEY + BNE: at most 76 cycles with WSYNC, exactly
    # 76 without.
    assert (cycles(body) <= 71 if feature.wsync
            else cycles(body) == 71), feature.name
    length = _size(body) + 3
    jsr = [k for k, ins in enumerate(body) if ins.jsr_next]
    jsr_at = _size(body[:jsr[0]]) if jsr else 0
    fits = lambda pc: (pc & 0xFF) + length <= 0x100 and (
        not jsr or ((pc + jsr_at + 2) & 0xC2) == 0x02)
    asm.align_for(length + _size(WSYNC_ + feature.pre) + 2)
    asm.put(WSYNC_ + _ins(2, 0xA0, 96) + feature.pre)
    if not fits(asm.pc):
        gap = next(n for n in range(512) if fits(asm.pc + 3 + n))
        asm.code += bytes([0x4C]) + (asm.pc + 3 + gap).to_bytes(2, "little")
        asm.code += bytes(gap)
    asm.label(name)
    asm.put(body + _ins(2, 0x88))     # DEY
    asm.branch(0xD0, name)           # BNE


def _wait_lines(asm: _Asm, count: int, name: str) -> None:
    asm.put(ldx(count))
    asm.label(name)
    asm.put(WSYNC_ + _ins(2, 0xCA))  # DEX
    asm.branch(0xD0, name)


def assemble(feature: Feature) -> bytes:
    """The 4K ROM image of one feature's program."""
    asm = _Asm()
    asm.put(_ins(2, 0x78) + _ins(2, 0xD8) + ldx(0xFF) + TXS + lda(0)
            + ldx(0x7F))             # SEI CLD, SP=$FF, clear $80-$FF
    asm.label("clear")
    asm.put(_ins(4, 0x95, 0x80) + _ins(2, 0xCA))
    asm.branch(0x10, "clear")        # BPL
    asm.put(BASE_SETUP + feature.setup)
    asm.label("frame")
    asm.put(lda(2) + WSYNC_ + sta(VSYNC) + write(VBLANK, feature.blank)
            + WSYNC_ * 3 + write(VSYNC, 0))
    _reads(asm, range(8), START_READS, "zpx")
    asm.put(sta(CXCLR) + feature.vblank)
    _wait_lines(asm, 33, "vblank")
    asm.put(WSYNC_ + write(VBLANK, 0))
    _kernel_half(asm, feature, "top")
    asm.put(WSYNC_)
    _reads(asm, range(8), MID_READS, "abs")
    _kernel_half(asm, feature, "bottom")
    asm.put(WSYNC_)
    _reads(asm, range(14), END_READS, "zp")
    asm.put(feature.overscan + WSYNC_ + write(VBLANK, feature.blank))
    _wait_lines(asm, 20, "overscan")
    asm.put(_ins(5, 0xE6, FRAME_COUNTER) + _ins(3, 0xA5, FRAME_COUNTER)
            + _ins(2, 0xC9, FRAMES))
    asm.branch(0xF0, "jam")          # BEQ
    asm.jmp("frame")
    asm.label("jam")
    asm.put(_ins(2, 0x02))
    return asm.image()


# --------------------------------------------------------------------------
# The features.
# --------------------------------------------------------------------------

PLAYFIELD = writes((PF0, 0x90), (PF2, 0x3C))
HM_VALUES = writes((HMP0, 0x70), (HMP1, 0x90), (HMM0, 0x30), (HMM1, 0xD0),
                   (HMBL, 0x80))
OVERLAP = writes((NUSIZ0, 0x37), (NUSIZ1, 0x35), (GRP0, 0xFF), (GRP1, 0xFF),
                 (PF0, 0xF0), (PF1, 0xFF), (PF2, 0xFF), (CTRLPF, 0x30))
# A new HM value per line from Y's low nibble (24 cycles).
HM_FROM_Y = (TYA + ASL * 4 + sta(HMP0) + sta(HMBL) + eor(0x80) + sta(HMP1)
             + sta(HMM0))


def _playfield() -> list[Feature]:
    out = [Feature(name, setup=ALL_ON + PLAYFIELD + write(CTRLPF, ctrl),
                   line=sty(PF1) + sty(ENABL))
           for name, ctrl in (("pf_normal_ball1", 0x00),
                              ("pf_reflect_ball2", 0x11),
                              ("pf_score_ball4", 0x22),
                              ("pf_priority_ball8", 0x34),
                              ("pf_score_priority", 0x36))]
    out.append(Feature("pf_score_priority_pf_only",
                       setup=PLAYFIELD + write(CTRLPF, 0x06), line=sty(PF1)))
    # PF1, PF2, PF0 rewritten while drawn; the delay depends on cycle % 4.
    for s in range(4):
        line = (lda(0x0F) + sta(PF1) + sta(PF2) + sta(PF0)
                + at_cycle(11, 28 + s, sty(PF1))
                + at_cycle(28 + s, 39 + s, sty(PF2))
                + at_cycle(39 + s, 50 + s, sty(PF0)))
        out.append(Feature(f"pf_midline_{s}", setup=ALL_ON, line=line))
    # CTRLPF reflection changed mid-line: before or after the centre.
    for c in (44, 50):
        line = (sty(PF1) + write(CTRLPF, 0) + lda(1)
                + at_cycle(10, c, sta(CTRLPF)))
        out.append(Feature(f"ctrlpf_midline_{c}", setup=PLAYFIELD, line=line))
    return out


def _players() -> list[Feature]:
    out = []
    for m in range(8):
        nusiz = writes((NUSIZ0, m | (m & 3) << 4),
                       (NUSIZ1, (7 - m) | (3 - (m & 3)) << 4))
        line = (sty(GRP0) + sty(ENAM0) + TYA + eor(0xFF) + sta(GRP1)
                + sta(ENAM1))
        out.append(Feature(f"nusiz_{m}", setup=ALL_ON + nusiz, line=line))
    out += [
        Feature("refp", setup=ALL_ON + writes((NUSIZ0, 5), (NUSIZ1, 3)),
                line=sty(GRP0) + sty(GRP1) + sty(REFP0) + TYA + LSR
                + sta(REFP1)),
        # P0 (pixels 27-34 = cycles 32-34) reflected while it is drawn.
        Feature("refp_midline", setup=ALL_ON,
                line=sty(GRP0) + write(REFP0, 8) + lda(0)
                + at_cycle(10, 33, sta(REFP0))),
        Feature("vdelp", setup=ALL_ON + writes((VDELP0, 1), (VDELP1, 1)),
                line=sty(GRP0) + TYA + eor(0x55) + sta(GRP1)),
        Feature("vdelp_toggled", setup=ALL_ON + write(VDELP0, 1),
                line=sty(GRP0) + TYA + eor(0x55) + sta(GRP1) + sty(VDELP0)
                + LSR + sta(VDELP1)),
        Feature("vdelbl", setup=ALL_ON + writes((VDELBL, 1), (CTRLPF, 0x20)),
                line=sta(GRP1) + sty(ENABL) + TYA + LSR),
        Feature("vdelbl_toggled", setup=ALL_ON + write(CTRLPF, 0x30),
                line=sta(GRP1) + sty(ENABL) + sty(VDELBL) + TYA + LSR),
    ]
    for mode in (0, 5, 7):   # missiles locked to players that move
        setup = ALL_ON + writes((NUSIZ0, mode | 0x10), (NUSIZ1, mode | 0x20),
                                (HMP0, 0x10), (HMP1, 0xF0))
        out.append(Feature(f"resmp_nusiz{mode}", setup=setup,
                           line=sta(HMOVE) + sty(RESMP0) + TYA + LSR
                           + sta(RESMP1)))
    return out


def _midline_writes() -> list[Feature]:
    """Registers written while their object is being drawn.

    P0 is drawn at cycles 32-34, M0 from 37, P1 at 43-45 (base positions).
    """
    wide = writes((NUSIZ0, 0x30), (CTRLPF, 0x31)) + PLAYFIELD
    return [
        Feature("grp_midline", setup=ALL_ON,
                line=write(GRP0, 0xFF) + lda(0x81) + at_cycle(7, 33, sta(GRP0))
                + at_cycle(33, 44, sty(GRP1))),
        Feature("nusiz_midline", setup=ALL_ON + write(GRP0, 0xFF),
                line=write(NUSIZ0, 3) + lda(6) + at_cycle(7, 40, sta(NUSIZ0))),
        Feature("colour_midline", setup=ALL_ON + PLAYFIELD,
                line=write(COLUBK, 0x14) + lda(0x28)
                + at_cycle(7, 35, sta(COLUBK)) + at_cycle(35, 50, sty(COLUPF))
                + at_cycle(50, 56, sty(COLUP1))),
        Feature("enable_midline", setup=ALL_ON + wide,
                line=writes((ENAM0, 2), (ENABL, 2)) + lda(0)
                + at_cycle(12, 38, sta(ENAM0)) + at_cycle(38, 53, sta(ENABL))),
    ]


def _positions() -> list[Feature]:
    out = []
    for c in (3, 18, 33, 52, 68):   # HBLANK ends at cycle 22.67
        cyc = (c, c + 2, c + 4, c + 5, c + 6)
        setup = ALL_ON + sum((strobe_at(reg, k) for reg, k in zip(
            (RESP0, RESP1, RESM0, RESM1, RESBL), cyc)), ())
        out.append(Feature(f"resp_cycle_{c}", setup=setup, line=sty(GRP0)))
    # Two RESPx per line: the second lands `c2 - 30` cycles after the first,
    # inside a copy (drawn 11 clocks ahead) or inside its start delay.
    for name, reg, nusiz, c2 in (("resp_twice_in_copy0", RESP0, 3, 33),
                                 ("resp_twice_in_copy2", RESP0, 3, 37),
                                 ("resp_twice_in_delay", RESP0, 1, 36),
                                 ("resp_twice_quad", RESP1, 7, 36)):
        setup = ALL_ON + writes((NUSIZ0, nusiz), (NUSIZ1, nusiz),
                                (GRP0, 0xFF), (GRP1, 0xE7))
        line = at_cycle(0, 30, sta(reg)) + at_cycle(30, c2, sta(reg))
        out.append(Feature(name, setup=setup, line=line))
    return out


def _exact_hmove(c: int) -> Feature:
    """HMOVE at cycle `c` (73-76) of every line, from a 76-cycle loop.

    A line is HM_FROM_Y, d1 cycles, STA HMOVE, d2 cycles (71 in all), DEY,
    BNE; the loop starts 2 + `pre` cycles into a line (after LDY #96).
    """
    for pre in (0, 2, 3, 4, 5):
        d1 = c - (2 + pre + cycles(HM_FROM_Y) + 3)
        d2 = 71 - cycles(HM_FROM_Y) - 3 - d1
        if d1 >= 2 and (d2 == 0 or d2 >= 2):
            line = HM_FROM_Y + delay(d1) + sta(HMOVE) + delay(d2)
            return Feature(f"hmove_at_{c}", setup=ALL_ON + HM_VALUES,
                           line=line, pre=delay(pre), wsync=False)
    raise ValueError(c)


def _hmove() -> list[Feature]:
    out = [Feature("hmove_every_line", setup=ALL_ON + HM_VALUES,
                   line=sta(HMOVE)),
           Feature("hmove_all_values", setup=ALL_ON,
                   line=sta(HMOVE) + HM_FROM_Y + eor(0x30) + sta(HMM1)),
           Feature("hmclr", setup=ALL_ON + HM_VALUES, vblank=HM_VALUES,
                   line=sta(HMOVE) + if_line(48, sta(HMCLR)))]
    for c in (8, 20, 21, 39, 54, 55, 57, 61, 65, 68):
        if c < 30:
            line = at_cycle(0, c, sta(HMOVE)) + HM_FROM_Y
        else:
            line = HM_FROM_Y + at_cycle(cycles(HM_FROM_Y), c, sta(HMOVE))
        out.append(Feature(f"hmove_at_{c}", setup=ALL_ON + HM_VALUES,
                           line=line))
    return out + [_exact_hmove(c) for c in (73, 74, 75, 76)]


def _resets_after_hmove() -> list[Feature]:
    """RESMx/RESBL a few clocks after an HMOVE (Stella special-cases some).

    Each: (name, HMOVE cycle, register, reset cycle); clocks after HMOVE =
    3 x the cycle difference, position clock = 3 x the reset cycle.
    """
    cases = (("resm1_9clk_after_hmove", 3, RESM1, 6),
             ("resm1_27clk_after_hmove", 3, RESM1, 12),
             ("resm0_60clk_after_hmove", 3, RESM0, 23),
             ("resbl_9clk_after_hmove", 3, RESBL, 6),
             ("resbl_18clk_after_hmove", 3, RESBL, 9),
             ("resbl_21clk_after_hmove", 3, RESBL, 10),
             ("resbl_54clk_after_hmove", 5, RESBL, 23))
    return [Feature(name, setup=ALL_ON + HM_VALUES,
                    line=at_cycle(0, hmove, sta(HMOVE))
                    + at_cycle(hmove, reset, sta(reg)))
            for name, hmove, reg, reset in cases]


def _collisions_and_blanking() -> list[Feature]:
    restore = writes((GRP1, 0xFF), (ENAM1, 2))
    stop = sta(CXCLR) + writes((GRP1, 0), (ENAM1, 0))
    overlap_m = ALL_ON + writes((NUSIZ0, 0x30), (NUSIZ1, 0x30)) + strobe_at(
        RESM0, 40) + strobe_at(RESM1, 40)
    return [
        Feature("objects_apart", setup=ALL_ON),
        Feature("all_overlap", setup=ALL_ON + OVERLAP),
        # P1 and M1 stop at line 20 of each half, just after a CXCLR.
        Feature("cxclr_midframe", setup=ALL_ON + OVERLAP, vblank=restore,
                line=if_line(20, stop)),
        # M0 and M1 overlap only on VBLANK lines: no M0-M1 collision.
        Feature("vblank_lines", setup=overlap_m,
                line=sty(VBLANK) + sty(ENAM0) + sty(ENAM1)),
        Feature("vblank_midline", setup=ALL_ON + OVERLAP,
                line=lda(2) + at_cycle(2, 40, sta(VBLANK)) + lda(0)
                + at_cycle(45, 55, sta(VBLANK))),
        # Objects everywhere, VBLANK never set, CXCLR 16 lines after the
        # last reads (scanline ~246): the lines from there to the next
        # frame's reads are outside the 210-line window and record no
        # collisions in $B0-$B7.
        Feature("outside_window", setup=ALL_ON + OVERLAP, blank=0,
                overscan=WSYNC_ * 16 + sta(CXCLR)),
        # The ball comes on in the last line of each half alone, just
        # before the reads: a read that did not draw that write first (a
        # write still queued: `jaxatari.tia_queue`) misses its collisions.
        Feature("latch_read_after_write",
                setup=ALL_ON + OVERLAP + write(ENABL, 0),
                vblank=write(ENABL, 0),
                line=if_line(1, write(ENABL, 2))
                + if_line(96, write(ENABL, 0))),
    ]


def _oddities() -> list[Feature]:
    return [
        # HMM0 changed from 7 to 6 exactly 21 cycles after HMOVE: Stella's
        # Cosmic Ark starfield hack moves M0 on every later line.
        Feature("cosmic_ark_m0", setup=ALL_ON + write(HMM0, 0x70),
                vblank=write(HMM0, 0x70),
                line=every(32, lda(0x60) + sta(HMOVE)
                           + at_cycle(11, 32, sta(HMM0)))),
        # VSYNC set and cleared within one line does not end the frame.
        Feature("short_vsync", setup=ALL_ON,
                line=if_line(50, write(VSYNC, 2) + write(VSYNC, 0))),
    ]


def _bus_writes() -> list[Feature]:
    """JSR with SP in the TIA: its pushes are TIA writes."""
    def line(sp: int) -> Code:   # every 16th line (a halt adds a line)
        return every(16, delay(14) + ldx(sp) + TXS + JSR_NEXT + sta(RESP0)
                     + write(VBLANK, 0))
    return [
        # PCH -> RSYNC, PCL -> WSYNC after a write: no halt.
        Feature("jsr_pushes_wsync_no_halt", setup=ALL_ON, line=line(0x03)),
        # PCH -> WSYNC after a read: halt; then PCL -> VBLANK (blank on).
        Feature("jsr_pushes_wsync_then_vblank", setup=ALL_ON,
                line=line(0x02)),
    ]


FEATURES: tuple[Feature, ...] = tuple(
    _playfield() + _players() + _midline_writes() + _positions() + _hmove()
    + _resets_after_hmove() + _collisions_and_blanking() + _oddities()
    + _bus_writes())
