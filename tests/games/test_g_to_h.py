"""jaxatari.games.g_to_h against ale-py (see tests/games/harness.py)."""

from __future__ import annotations

import numpy as np
import pytest

from jaxatari import games
from tests.games import harness
from tests.games.harness import FakeOps, Plan, game_tests

harness.CUSTOM_SET_MODE.update(("gopher", "human_cannonball"))

PLANS = {
    "galaxian": Plan(1, 2000, 5000,
                     pokes=(0xAC, 0xAD, 0xAE, 0xB9, 0xBF),
                     special=(0, 0x80, 0x99)),
    # One carrot left, then none.
    "gopher": Plan(3, 2000, 5200, pokes=(0xB0, 0xB1, 0xB2, 0xB4),
                   special=tuple(range(8)),
                   script=((0xB4, 0x01), (0xB4, 0x00))),
    "gravitar": Plan(1, 2000, 6000, pokes=(0x87, 0x88, 0x89, 0x81, 0x84),
                     special=(0, 1, 2)),
    # Hangman's second game-over rule: the timer $F1 wraps from 255 to 0.
    # ALE's cloneState leaves out the timer history, so a game-ending frame
    # redone from a restored state sees the later history: only the score
    # bytes are poked, which end the redone frame by reward instead.
    "hangman": Plan(1, 2000, 4000, pokes=(0xEB, 0xEC), special=(1, 0x99),
                    script=((0xF1, 0xFF), (0xF1, 0x00))),
    "haunted_house": Plan(1, 2000, 6000, pokes=(0x82, 0x96, 0x99),
                          special=(0, 1, 0x44), ends=False),
    "hero": Plan(4, 2000, 4000, pokes=(0xB7, 0xB8, 0xB9, 0xB3),
                 special=(0, 1)),
    "human_cannonball": Plan(1, 2000, 4000, pokes=(0xB6, 0xB7),
                             special=(0, 6, 7), scores=False),
}

(test_rules_match_ale, test_static_facts_match_ale,
 test_mode_shown_matches_ale, test_set_mode_protocol) = game_tests(PLANS)


def _with_bytes(ram: np.ndarray, values: dict[int, int]) -> np.ndarray:
    """A copy of `ram` with bytes at CPU addresses set."""
    ram = ram.copy()
    for addr, value in values.items():
        ram[addr - 0x80] = value
    return ram


def test_gopher_set_mode_calls() -> None:
    """Gopher resets, presses SELECT (5 frames) until $D3 shows the mode,
    and resets again, pressing as often as ALE does."""
    rules = games.GAMES["gopher"]
    rams = harness.post_reset_rams("gopher")
    for mode, ram in rams.items():
        assert [m for m in rules.modes if ram[0xD3 - 0x80] == m] == [mode]
    presses = harness.reset_frame_numbers("gopher")
    cycle = [_with_bytes(rams[0], {0xD3: k}) for k in range(4)]
    for mode in rules.modes:
        ops = FakeOps(cycle)
        rules.set_mode(ops, mode)
        assert ops.calls == ([("reset",)] + [("select", 5)] * presses[mode]
                             + [("reset",)])
    with pytest.raises(ValueError, match="modes are"):
        rules.set_mode(FakeOps([np.zeros(128, np.uint8)]), 1)


HUMAN_CANNONBALL_SELECT_SCREENS = (
    (0x01, 2), (0x02, 1), (0x02, 2), (0x03, 1), (0x03, 2), (0x04, 1),
    (0x04, 2), (0x05, 1), (0x05, 2), (0x06, 1), (0x06, 2), (0x07, 1),
    (0x07, 2), (0x08, 1), (0x08, 2), (0x01, 1))
"""($B6, $B7), game number and players, after each SELECT press from a
console reset (which leaves both 0), as jaxatari's console shows them; its
post-reset RAM equals ale-py's in modes 0 and 3."""


def test_human_cannonball_set_mode_calls() -> None:
    """Human Cannonball presses SELECT (2 frames) until the game number
    minus 1 is the mode with one player, then resets, pressing as often as
    ALE does."""
    rules = games.GAMES["human_cannonball"]
    start = harness.post_reset_rams("human_cannonball")[0]
    cycle = [start] + [_with_bytes(start, {0xB6: game, 0xB7: players})
                       for game, players in HUMAN_CANNONBALL_SELECT_SCREENS]
    presses = harness.reset_frame_numbers("human_cannonball")
    for mode in rules.modes:
        ops = FakeOps(cycle)
        rules.set_mode(ops, mode)
        assert ops.calls == [("select", 2)] * presses[mode] + [("reset",)]
