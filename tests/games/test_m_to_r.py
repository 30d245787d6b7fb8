"""jaxatari.games.m_to_r against ale-py (see tests/games/harness.py)."""

from __future__ import annotations

import numpy as np
import pytest

from jaxatari import games
from tests.games import harness
from tests.games.harness import Plan, game_tests

PLANS = {
    "mario_bros": Plan(5, 2000, 6000, pokes=(0x89, 0x8A, 0x87),
                       special=(0, 1)),
    # Random play never sinks a ball: the hole byte is scripted to 2 (a
    # hole scored), then to 0 (the game over, with no stroke on hole 2).
    # $AF is not poked at random: ALE's saveState writes the five members
    # as bools, so the replay of a game-ending frame (restoreState) gets
    # other numbers than the game had, and pays no reward where the hole
    # had strokes. The 4000 frames reach a wrap of the stroke counter.
    "miniature_golf": Plan(1, 2000, 4000, pokes=(0x87, 0x88),
                           script=((0xAF, 2), (0xAF, 0)), scores=False,
                           ends=False, lives="steady"),
    "montezuma_revenge": Plan(1, 2000, 6000, pokes=(0x93, 0x94, 0x95),
                              scores=False),
    "mr_do": Plan(1, 2000, 5000, pokes=(0x82, 0x83, 0xDA),
                  special=(0x40,)),
    "ms_pacman": Plan(1, 2000, 5000, pokes=(0xF8, 0xF9, 0xFA)),
    "name_this_game": Plan(1, 2000, 3000, pokes=(0xC4, 0xC5, 0xC6, 0xC7),
                           special=(0, 8, 0xF8), ends=False),
    # Random play takes ~23000 frames to finish; poked disc counts end it.
    "othello": Plan(1, 2000, 3000, pokes=(0xCE, 0xD0, 0xC0),
                    special=(0,), ends=False, lives="steady"),
    "pacman": Plan(1, 2000, 5000, pokes=(0xCC, 0xCE, 0xD0)),
    "phoenix": Plan(1, 2000, 5000, pokes=(0xC7, 0xC8, 0xC9, 0xCC),
                    special=(0x80,)),
    "pitfall": Plan(3, 2000, 5000, pokes=(0xD5, 0xD6, 0xD7)),
    # The only game over: the score reads 199000 ($C9 is already 0).
    "pitfall2": Plan(2, 2000, 3000, pokes=(0xC7, 0xC8, 0xC9),
                     special=(0x19, 0x90, 0),
                     script=((0xC7, 0x19), (0xC8, 0x90)), scores=False,
                     ends=False, lives="steady"),
    "pong": Plan(1, 2000, 6000, pokes=(0x8D, 0x8E), special=(20, 21),
                 lives="none"),
    "pooyan": Plan(1, 2000, 5000, pokes=(0x88, 0x89, 0x8A)),
    "private_eye": Plan(1, 2000, 6000, pokes=(0xC8, 0xC9, 0xCA, 0xC2),
                        special=(0, 1, 2), lives="none", ends=False),
    # Q*bert's second game-over rule: the lives byte reads 2 after 0xFF.
    "qbert": Plan(1, 2000, 4000, pokes=(0xD9, 0xDA, 0xDB),
                  script=((0x88, 0xFF), (0x88, 0x02))),
    "riverraid": Plan(1, 2000, 5000,
                      pokes=(0xCD, 0xCF, 0xD1, 0xD3, 0xD5, 0xD7),
                      special=(72, 80, 0x58, 0x59)),
    "road_runner": Plan(3, 2000, 6000, pokes=(0xC9, 0xCA, 0xCB, 0xCC, 0xC4,
                                             0xB9, 0xBD),
                        special=(0x0A, 0x0F, 0)),
    "robotank": Plan(1, 2000, 12000, pokes=(0xB5, 0xB6)),
}

(test_rules_match_ale, test_static_facts_match_ale,
 test_mode_shown_matches_ale, test_set_mode_protocol) = game_tests(PLANS)


# setMode loops whose RAM test cannot be checked on ale-py's post-reset RAM
# (the mode byte no longer shows the mode after the reset), or that press
# SELECT once before they look (Pooyan).
_RESET_SELECTS = {
    # The RAM bytes before each SELECT press of a reset, as jaxatari's
    # emulator replays ALE's reset (same presses, same post-reset RAM).
    # Name This Game holds $DE for 129 presses, then steps by 8 from 0x10.
    "name_this_game": {0xDE: (0xAD,) * 43 + (0x5D,) * 86
                       + (0x10, 0x18, 0x20, 0x28, 0x30, 0x08)},
    # Othello shows mode m as $DE = m + 1.
    "othello": {0xDE: (2, 2, 3, 4, 1)},
    # Pac-Man: game number $CC (mode + 1), players $E6 (0x40: two). Its
    # PAL reset is not replayed yet; this order gives ALE's counts (2 m
    # presses for mode m, 16 for mode 0): one player, two, next game.
    "pacman": {0xCC: (0,) + tuple(k // 2 % 8 + 1 for k in range(1, 17)),
               0xE6: (0,) + (0x40, 0) * 8},
    # Pooyan: 0x0A for 3 presses, then +10 per press (even tens: 2P).
    "pooyan": {0xBD: (0x0A,) * 3 + tuple(range(0x14, 0x47, 0x0A))},
}
harness.CUSTOM_SET_MODE.update(_RESET_SELECTS)


def _fake_ops(game: str) -> harness.FakeOps:
    """A `FakeOps` whose SELECT presses step through a reset's RAM.

    Its k-th RAM is ale-py's RAM after `loadROM`, with the bytes of
    `_RESET_SELECTS[game]` set to their k-th values.
    """
    base = np.asarray(harness.new_ale(game, 0).getRAM())
    shown = _RESET_SELECTS[game]
    rams = []
    for k in range(len(next(iter(shown.values())))):
        ram = base.copy()
        for addr, values in shown.items():
            ram[addr - 0x80] = values[k]
        rams.append(ram)
    return harness.FakeOps(rams)


@pytest.mark.parametrize("game", sorted(_RESET_SELECTS))
def test_custom_set_mode_presses_as_ale(game: str) -> None:
    """set_mode presses SELECT (2 frames) as often as ALE's reset, then
    resets; ALE's frame counter after `reset_game` counts its presses."""
    rules = games.GAMES[game]
    ale = harness.new_ale(game, 0)
    for mode in rules.modes:
        ale.setMode(mode)
        ale.reset_game()
        ops = _fake_ops(game)
        rules.set_mode(ops, mode)
        presses = ale.getEpisodeFrameNumber()
        assert ops.calls == [("select", 2)] * presses + [("reset",)], mode
