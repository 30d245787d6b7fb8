"""`console.refit`: a console's state moved between programs of different
features (a parity snapshot taken in a batch of many games, resumed in a
batch of its own game) loses nothing its game uses."""
from __future__ import annotations

import jax
import numpy as np
import pytest

from jaxatari import console, environment

WIDE = console.Features(cart_ram=True, dpc=True, rows=250)


def _pong_state() -> tuple[console.Board, console.Console]:
    """Pong's board and a power-on state with a screen drawn on."""
    board = environment.AtariEnv("pong").board
    state = console.power_on(board)
    rng = np.random.default_rng(0)
    screen = rng.integers(0, 256, state.tia.screen.shape, np.uint8)
    written = rng.integers(0, 2, state.tia.written.shape).astype(bool)
    return board, state.replace(tia=state.tia.replace(
        screen=screen, written=written))


def test_widened_state_has_the_wide_programs_shapes():
    board, state = _pong_state()
    wide = console.refit(state, WIDE)
    expected = console.power_on(console.widen_board(board, WIDE))
    shape = lambda tree: jax.tree.map(np.shape, tree)
    assert shape(wide) == shape(expected)
    np.testing.assert_array_equal(wide.tia.screen[:, :210],
                                  state.tia.screen)
    assert not np.any(wide.tia.screen[:, 210:])
    assert not np.any(wide.tia.written[210:])


def test_widen_then_narrow_gives_the_state_back():
    board, state = _pong_state()
    back = console.refit(console.refit(state, WIDE), board.features)
    jax.tree.map(np.testing.assert_array_equal, back, state)


def test_superchip_ram_is_kept_between_programs_that_have_it():
    board, state = _pong_state()
    wide = console.refit(state, WIDE)
    ram = np.arange(128, dtype=np.uint8)
    wide = wide.replace(chips=wide.chips.replace(ram=ram))
    kept = console.refit(wide, WIDE._replace(dpc=False))
    np.testing.assert_array_equal(kept.chips.ram, ram)
    assert kept.chips.dpc is None


def test_rows_the_tia_draws_cannot_be_cut():
    _, state = _pong_state()
    with pytest.raises(ValueError, match="cannot hold the 210 rows"):
        console.refit(state, console.Features(rows=200))
