"""The rows a game draws: its `Display.Height`, raised to 250 on PAL.

Oracles: the facts of Stella's `TIA::frameReset` (the display window is
`Display.YStart` + `Display.Height` lines) and `Console.cxx` (a console
detected as PAL raises a height of 210 to 250), and ale-py's screen shapes.
The frame-by-frame parity of the three games with heights of their own is
in `test_carts_parity.py`.
"""
from __future__ import annotations

import jax.numpy as jnp
import pytest

from jaxatari import cart as cartlib
from jaxatari import console, environment, games, tia

ale_py = pytest.importorskip("ale_py")

OWN_HEIGHTS = {"carnival": 214, "pooyan": 220, "journey_escape": 230}


@pytest.mark.parametrize("pal", [False, True])
@pytest.mark.parametrize("height", [210, 214, 230])
def test_display_rows(pal, height):
    expected = 250 if pal and height == 210 else height
    assert tia.display_rows(pal, height) == expected
    traced = tia.display_rows(jnp.asarray(pal), jnp.int32(height))
    assert int(traced) == expected
    assert int(tia.power_on(250, pal, height).height) == expected


@pytest.mark.parametrize("game", sorted(OWN_HEIGHTS))
def test_board_has_the_game_rows(game):
    rules = games.lookup(game)
    assert rules.height == OWN_HEIGHTS[game]
    assert environment._height_property(rules) == rules.height
    cart = cartlib.load_cartridge(game)
    board = console.make_board(cart, rules.ystart, rules.hmove_blanks,
                               height=rules.height)
    assert board.features.rows == rules.height
    assert int(board.height) == rules.height
    assert console.display_format(board) == "NTSC"
    assert console.board_for_format(board, False) is board


def test_pal_games_keep_the_default_height_property():
    """ALE's PAL ROMs set no `Display.Height`: 210 until PAL is detected,
    250 after (the screen ale-py shows)."""
    rules = games.lookup("klax")
    assert rules.height == tia.PAL_HEIGHT
    assert environment._height_property(rules) == tia.HEIGHT
    cart = cartlib.load_cartridge("klax")
    board = console.make_board(cart, rules.ystart, rules.hmove_blanks,
                               height=environment._height_property(rules))
    assert board.features.rows == tia.PAL_HEIGHT
    ntsc = console.make_board(cartlib.load_cartridge("pong"), 34, True)
    assert console.board_for_format(ntsc, True).features.rows == 250


def test_a_short_buffer_is_refused():
    cart = cartlib.load_cartridge("carnival")
    with pytest.raises(ValueError, match="needs"):
        console.make_board(cart, 26, True, console.Features(rows=210),
                           height=214)
