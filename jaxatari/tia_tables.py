"""The TIA's facts as tables: geometry, register numbers, write delays,
motion, object shapes, collisions and colour priority (Stella's TIA).

Plain numpy, built once at import; `jaxatari.tia` (the chip's state
machine) indexes them. Object shapes are "masks": 160-pixel lines packed
as five 32-bit words, one bit per pixel (`_pack`), for a player at
position 0 by NUSIZ mode, skip flag and graphics byte, a missile or the
ball by mode and size, and the playfield by reflection, register and
value; `PRIORITY_TABLE` maps an `enabled` code (the object bits `P0`..`PF`
plus `SCORE` and `PRIORITY` from CTRLPF) to the colour register shown.
"""
from __future__ import annotations

import numpy as np

HBLANK = 68
LINE = 228
WIDTH = 160
HEIGHT = 210          # NTSC's Display.Height
MAX_SCANLINES = 290   # NTSC's frame limit
PAL_HEIGHT = 250      # Display.Height of a console detected as PAL
PAL_MAX_SCANLINES = 342
WORDS = 5  # 160 pixels as 5 x 32 bits
# The Cosmic Ark motion: M0's move at a line end, and its mask on the next
# line, by the new count (`m0_mask`: plain, 2 pixels wide, or hidden).
COSMIC_MOTION = np.array([18, 33, 0, 17], np.int32)
M0_PLAIN, M0_STRETCHED, M0_HIDDEN = 0, 1, 2
COSMIC_MASKS = np.array([M0_PLAIN, M0_STRETCHED, M0_HIDDEN, M0_PLAIN],
                        np.int32)

P0, M0, P1, M1, BL, PF = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
SCORE, PRIORITY = 0x40, 0x80

# Register numbers (write addresses & 0x3F).
VSYNC, VBLANK, WSYNC, RSYNC, NUSIZ0, NUSIZ1 = 0x00, 0x01, 0x02, 0x03, 0x04, 0x05
COLUP0, COLUP1, COLUPF, COLUBK, CTRLPF = 0x06, 0x07, 0x08, 0x09, 0x0A
REFP0, REFP1, PF0, PF1, PF2 = 0x0B, 0x0C, 0x0D, 0x0E, 0x0F
RESP0, RESP1, RESM0, RESM1, RESBL = 0x10, 0x11, 0x12, 0x13, 0x14
GRP0, GRP1, ENAM0, ENAM1, ENABL = 0x1B, 0x1C, 0x1D, 0x1E, 0x1F
HMP0, HMP1, HMM0, HMM1, HMBL = 0x20, 0x21, 0x22, 0x23, 0x24
VDELP0, VDELP1, VDELBL, RESMP0, RESMP1 = 0x25, 0x26, 0x27, 0x28, 0x29
HMOVE, HMCLR, CXCLR = 0x2A, 0x2B, 0x2C

# --------------------------------------------------------------------------
# Tables (facts of Stella's TIA), built once at import.
# --------------------------------------------------------------------------

POKE_DELAY = np.zeros(64, np.int32)
POKE_DELAY[[VBLANK, REFP0, REFP1, GRP0, GRP1]] = 1
POKE_DELAY[[NUSIZ0, NUSIZ1, RESM0, RESM1]] = 8
POKE_DELAY[[PF0, PF1, PF2]] = -1  # position dependent
PF_DELAY = np.array([4, 5, 2, 3], np.int32)

HMOVE_BLANK_CYCLES = np.zeros(76, bool)
HMOVE_BLANK_CYCLES[:21] = True
HMOVE_BLANK_CYCLES[75] = True


def _motion_table() -> np.ndarray:
    """Stella's complete motion table [76 cycles][16 HM values].

    In HBLANK (cycles 0-20 and 75) an object moves by its nominal HM amount
    (8 left .. 7 right, as -signed(HM)), clipped from below by how many motion
    clocks were already missed; late HMOVEs (cycles 55-74) move objects
    further left, clipped at 0; in between nothing moves.
    """
    nominal = np.where(np.arange(16) < 8, -np.arange(16), 16 - np.arange(16))
    floor = [-8, -8, -8, -8, -6, -5, -5, -4, -3, -2, -2, -1, 0, 1, 1, 2, 3,
             4, 4, 5, 6]
    late = [6, 5, 4, 4, 3, 2, 1, 1, 0, -1, -2, -2, -3, -4, -5, -5, -6, -7,
            -8, -8]
    table = np.zeros((76, 16), np.int32)
    for cycle, low in enumerate(floor):
        table[cycle] = np.maximum(nominal, low)
    for i, shift in enumerate(late):
        table[55 + i] = np.minimum(0, nominal + shift)
    table[75] = nominal
    return table


MOTION = _motion_table()


def _copies(mode: int) -> tuple[list[int], int]:
    """NUSIZ mode -> (copy offsets, size multiplier) of players/missiles."""
    offsets = {0: [0], 1: [0, 16], 2: [0, 32], 3: [0, 16, 32], 4: [0, 64],
               5: [0], 6: [0, 32, 64], 7: [0]}[mode]
    return offsets, {5: 2, 7: 4}.get(mode, 1)


def _player_bits(mode: int, skip_first: bool) -> np.ndarray:
    """For each pixel offset from the position, which GRP bit it shows."""
    bits = np.zeros(WIDTH, np.int32)
    offsets, scale = _copies(mode)
    delay = 1 if scale > 1 else 0  # double/quad players start a pixel late
    for k, offset in enumerate(offsets):
        if skip_first and k == 0:
            continue
        for x in range(8 * scale):
            bits[(offset + delay + x) % WIDTH] = 0x80 >> (x // scale)
    return bits


def _pack(pixels: np.ndarray) -> np.ndarray:
    """bool[..., 160] -> uint32[..., 5] (pixel x = word x//32, bit x%32)."""
    shaped = pixels.reshape(pixels.shape[:-1] + (WORDS, 32)).astype(np.uint64)
    return (shaped << np.arange(32, dtype=np.uint64)).sum(-1).astype(np.uint32)


def _player_table() -> np.ndarray:
    """uint32[2 skip, 8 mode, 256 graphics, 5] masks at position 0."""
    table = np.zeros((2, 8, 256, WIDTH), bool)
    grp = np.arange(256)[:, None]
    for skip in range(2):
        for mode in range(8):
            table[skip, mode] = (grp & _player_bits(mode, bool(skip))) != 0
    return _pack(table)


def _missile_table() -> np.ndarray:
    """uint32[8 mode, 4 size, 5]; the ball is mode 0."""
    table = np.zeros((8, 4, WIDTH), bool)
    for mode in range(8):
        offsets = _copies(mode)[0] if mode not in (5, 7) else [0]
        for size in range(4):
            for offset in offsets:
                table[mode, size, (offset + np.arange(1 << size)) % WIDTH] = 1
    return _pack(table)


def _playfield_bit_index() -> np.ndarray:
    """[2 reflect, 160] -> which of the 20 PF bits each pixel shows."""
    left = [0, 1, 2, 3] + [11 - k for k in range(8)] + [12 + k for k in
                                                        range(8)]
    right_reflected = left[::-1]
    index = np.zeros((2, WIDTH), np.int32)
    for reflect, right in ((0, left), (1, right_reflected)):
        groups = left + right
        index[reflect] = np.repeat(groups, 4)
    return index


def _playfield_table() -> np.ndarray:
    """uint32[2 reflect, 3 byte, 256 value, 5]: PF0 (bits 0-3), PF1, PF2."""
    index = _playfield_bit_index()
    table = np.zeros((2, 3, 256, WIDTH), bool)
    value = np.arange(256)[:, None]
    for reflect in range(2):
        for byte, base in enumerate((0, 4, 12)):
            local = index[reflect] - base
            valid = (local >= 0) & (local < 8)
            table[reflect, byte] = valid & (
                (value >> np.clip(local, 0, 7)) & 1).astype(bool)
    return _pack(table)


def _collision_pairs() -> tuple[np.ndarray, np.ndarray]:
    """Object bit pairs of the 15 collision latches, in latch-bit order."""
    pairs = [(M0, P1), (M0, P0), (M1, P0), (M1, P1), (P0, PF), (P0, BL),
             (P1, PF), (P1, BL), (M0, PF), (M0, BL), (M1, PF), (M1, BL),
             (BL, PF), (P0, P1), (M0, M1)]
    order = [P0, M0, P1, M1, BL, PF]
    slot = lambda bit: order.index(bit)
    return (np.array([slot(a) for a, _ in pairs]),
            np.array([slot(b) for _, b in pairs]))


def _priority_table() -> np.ndarray:
    """int32[2 half, 256 code] -> colour slot (0 BK, 1 PF, 2 P0, 3 P1)."""
    table = np.zeros((2, 256), np.int32)
    for half in range(2):
        for code in range(256):
            if code & PRIORITY:
                colour = 0
                if code & (P1 | M1):
                    colour = 3
                if code & (P0 | M0):
                    colour = 2
                if code & (BL | PF):
                    colour = 1
            else:
                colour = 1 if code & BL else 0
                if code & PF:
                    colour = (2 + half) if code & SCORE else 1
                if code & (P1 | M1):
                    colour = 3 if colour != 2 else 2
                if code & (P0 | M0):
                    colour = 2
            table[half, code] = colour
    return table


PLAYER_MASKS = _player_table()
MISSILE_MASKS = _missile_table()
PLAYFIELD_MASKS = _playfield_table()
PAIR_A, PAIR_B = _collision_pairs()
PRIORITY_TABLE = _priority_table()
REFLECT = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], np.int32)
ONES = np.array([(1 << k) - 1 for k in range(33)], np.uint64).astype(np.uint32)
