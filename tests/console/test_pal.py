"""PAL consoles: detection, the TIA's PAL limits, colour loss, palette.

Oracles: ale-py (its screens of Klax, and of a hand-assembled ROM whose
frames alternate 313 and 314 scanlines, so that ALE detects it as PAL and
its colour loss sets bit 0 of every colour after the odd frames), and the
facts of Stella's `TIA.cxx` / `Console.cxx` for the unit tests.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import cart as cartlib
from jaxatari import (console, environment, games, palette, parity,
                      system_rng, tia)

ale_py = pytest.importorskip("ale_py")


def _ale(path: str) -> "ale_py.ALEInterface":
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setInt("random_seed", 0)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(path)
    return ale


# --------------------------------------------------------------- palette

def test_palettes_match_ale_on_klax():
    ale = parity.make_ale("klax", 0)
    for _ in range(30):
        ale.act(0)
    screen = ale.getScreen()
    assert screen.shape == (250, 160)
    np.testing.assert_array_equal(
        np.asarray(palette.to_rgb(jnp.asarray(screen), "PAL")),
        ale.getScreenRGB())
    np.testing.assert_array_equal(
        np.asarray(palette.to_grayscale(jnp.asarray(screen), "PAL")),
        ale.getScreenGrayscale())


def test_odd_palette_entries():
    """Odd index i: RGB is the gray of colour i - 1; grayscale is the low
    byte of entry i + 1 (ALE's tables)."""
    for name in palette.FORMATS:
        rgb, gray = palette.RGB_TABLES[name], palette.GRAY_TABLES[name]
        for i in range(1, 255, 2):
            assert len(set(rgb[i].tolist())) == 1
            assert rgb[i][0] == gray[i - 1]
            assert gray[i] == rgb[i + 1][2]
    with pytest.raises(ValueError, match="SECAM"):
        palette.to_rgb(jnp.zeros((2, 2), jnp.uint8), "SECAM")


# ------------------------------------------------------------------ TIA

def _tia_write_ends(pal: bool, line: int) -> bool:
    state = tia.power_on(tia.PAL_HEIGHT, pal)
    cycle = (line * tia.LINE) // 3 + 1
    _, _, ends = tia.write(state, jnp.int32(tia.COLUBK), jnp.int32(0),
                           jnp.int32(cycle), jnp.asarray(False),
                           jnp.int32(34), jnp.asarray(True), False)
    return bool(ends)


def test_frame_limit_is_342_scanlines_on_pal():
    assert not _tia_write_ends(False, 290) and _tia_write_ends(False, 291)
    assert not _tia_write_ends(True, 342) and _tia_write_ends(True, 343)


def test_colour_loss_after_odd_frames():
    """A PAL TIA sets bit 0 of all colours at a frame start after an odd
    frame (and of colours written during it), clears it after an even one;
    NTSC never does."""
    for pal in (False, True):
        state = tia.power_on(tia.PAL_HEIGHT, pal).set(
            colubk=jnp.int32(0x1E), colup0=jnp.int32(0x44))
        for lines, odd in ((313, 1), (312, 0), (263, 1)):
            state = state.set(last_lines=jnp.int32(lines))
            started = tia.start_frame(state, jnp.int32(0), jnp.int32(34),
                                      False)
            bit = odd if pal else 0
            assert int(started.colubk) == 0x1E | bit
            assert int(started.colup0) == 0x44 | bit
            written, _, _ = tia.write(
                started, jnp.int32(tia.COLUPF), jnp.int32(0x57),
                jnp.int32(10), jnp.asarray(False), jnp.int32(34),
                jnp.asarray(True), False)
            assert int(written.colupf) == 0x56 | bit
            state = started


def test_pal_draws_250_rows_and_reset_keeps_rows():
    board = console.make_board(cartlib.load_cartridge("klax"), 34, True)
    assert board.features.rows == 250
    state = console.power_on(board)
    assert console.screen(state).shape == (250, 160)
    assert int(tia.display_height(state.tia)) == 210   # NTSC until told
    reset = console.system_reset(board, state, system_rng.reset_inputs(
        2, cart_ram=True, pal=True))
    assert bool(console.is_pal(reset))
    assert int(tia.display_height(reset.tia)) == 250
    with pytest.raises(TypeError, match="reset_inputs"):
        console.system_reset(board, reset, system_rng.reset_timer(5))
    pacman = console.make_board(cartlib.load_cartridge("pacman"), 34, True)
    state = console.system_reset(pacman, console.power_on(pacman),
                                 system_rng.reset_inputs(2, pal=True))
    again = console.system_reset(pacman, state, system_rng.reset_timer(5))
    assert bool(console.is_pal(again))   # a bare timer keeps the format


# --------------------------------------------------- detection, vs ALE

def _alternating_rom() -> bytes:
    """4K: frames of 3 VSYNC lines + 310 lines, one more on every other
    frame (313 / 314 scanlines), COLUBK = the line counter."""
    code = bytes.fromhex(
        "d8"            # F000 CLD
        "a200"          # F001 LDX #0
        "a902"          # F003 frame: LDA #2
        "8500"          # STA VSYNC
        "850285028502"  # STA WSYNC x3
        "a900"          # LDA #0
        "8500"          # STA VSYNC (the frame ends)
        "e680"          # INC $80
        "a580"          # LDA $80
        "2901"          # AND #1
        "f002"          # BEQ +2
        "8502"          # STA WSYNC (odd frames: one more line)
        "a2ff"          # F01B LDX #255
        "8609"          # F01D STX COLUBK
        "8502"          # STA WSYNC
        "ca"            # DEX
        "d0f9"          # BNE $F01D
        "a237"          # LDX #55
        "8609"          # F026 STX COLUBK
        "8502"          # STA WSYNC
        "ca"            # DEX
        "d0f9"          # BNE $F026
        "4c03f0")       # JMP frame
    image = bytearray(4096)
    image[:len(code)] = code
    image[0xFFC:] = bytes([0x00, 0xF0, 0x00, 0xF0])
    return bytes(image)


def test_unknown_pal_rom_is_detected_and_matches_ale(tmp_path):
    """A ROM not in `cart.PAL_MD5S`: the env's board starts at 210 rows,
    `load_rom` detects PAL as ALE does and refits it to 250; then screens
    (with colour loss: odd indices), RGB and RAM equal ale-py's."""
    path = tmp_path / "montezuma_revenge.bin"   # ALE wants known settings
    path.write_bytes(_alternating_rom())
    ale = _ale(str(path))
    assert ale.getScreen().shape == (250, 160)
    env = environment.AtariEnv(games.lookup("montezuma_revenge"),
                               rom=str(path), num_reset_states=1)
    assert env.cart.display_format == "NTSC"
    assert env.board.features.rows == 210
    (state,) = env.boot()
    assert env.board.features.rows == 250 and env.display_format == "PAL"
    odd_seen = False
    for frame in range(6):
        if frame:
            ale.act(0)
            state = env._frame(state, jnp.int32(0), jnp.int32(0),
                               jnp.int32(env.difficulty), True)
        ours = np.asarray(env.screen(state))
        np.testing.assert_array_equal(ours, ale.getScreen())
        np.testing.assert_array_equal(np.asarray(env.ram(state)),
                                      ale.getRAM())
        np.testing.assert_array_equal(np.asarray(env.screen_rgb(state)),
                                      ale.getScreenRGB())
        odd_seen |= bool((ours & 1).any())
    assert odd_seen
