"""jaxatari.games.s_to_t against ale-py (see tests/games/harness.py).

Three kinds of game need more than `game_tests(PLANS)`:

* Space War and Superman keep ALE's default lives (1, then 0 once over)
  and random play never ends them (`lives="steady"`); Space War's mode
  byte cannot be checked on post-reset RAM (below), so the two have no
  mode_shown test (`STEADY_LIVES_PLANS`).
* Space War and Turmoil poll a mode byte that the closing console reset
  changes again, so the post-reset RAM cannot show the mode: their
  `set_mode` is checked against ale-py's count of SELECT presses.
* Sir Lancelot's starting actions begin with ALE's RESET action (40),
  which ale-py does not report; a test of its own states it.
"""

from __future__ import annotations

import numpy as np

from jaxatari import games
from tests.games import harness
from tests.games.harness import Plan, game_tests

RESET = 40  # ALE's `RESET` action (common/Constants.h); ale-py hides it.
LEFT = harness.ale_py.Action.LEFT.value

harness.CUSTOM_SET_MODE.update({"space_war", "turmoil"})

_TIC_TAC_TOE_CELLS = tuple(range(0x9A, 0xDA))

PLANS = {
    "seaquest": Plan(1, 2000, 5000, pokes=(0xB8, 0xB9, 0xBA)),
    "sir_lancelot": Plan(1, 2000, 5000,
                         pokes=(0x9E, 0x9F, 0xA0, 0xA7, 0xA9),
                         special=(0, 0xA0)),
    "skiing": Plan(1, 2000, 5000, bias={0: 4.0},
                   pokes=(0xE8, 0xE9, 0xEA, 0x91), special=(0xFF,),
                   lives="none"),
    # Pushing the stick down loses a life early.
    "solaris": Plan(2, 3000, 3000, bias={5: 50.0},
                    pokes=(0xD9, 0xDC, 0xDD, 0xDE), special=(0, 0x13),
                    scores=False, ends=False),
    "space_invaders": Plan(1, 2000, 5000, pokes=(0xE6, 0xE8, 0xC9, 0x98),
                           special=(0, 0x80, 0x99)),
    "star_gunner": Plan(1, 2000, 5000,
                        pokes=(0x83, 0x84, 0x85, 0x86, 0x87),
                        special=(0, 5, 0x0A, 0x1A)),
    "surround": Plan(1, 2000, 5000, pokes=(0xF6, 0xF7),
                     special=(0x09, 0x10)),
    "tennis": Plan(1, 2000, 4000, pokes=(0xC5, 0xC6, 0xC7, 0xC8),
                   special=(0, 5, 6, 7), lives="none", ends=False),
    "tetris": Plan(1, 2000, 5000, pokes=(0xF1, 0xF2, 0xF3),
                   special=(0x80, 0x99), lives="none", scores=False),
    # The script fills the 64 cells (full board); random pokes of the
    # player's mark (8) into cells later give the player a win.
    "tic_tac_toe_3d": Plan(2, 2000, 5000,
                           pokes=_TIC_TAC_TOE_CELLS + (0xE1,) * 4,
                           special=(8,),
                           script=tuple((c, 1) for c in _TIC_TAC_TOE_CELLS)),
    "time_pilot": Plan(1, 2000, 5000, bias={1: 10.0},
                       pokes=(0x80, 0x8B, 0x8D, 0x8F, 0xA0),
                       special=(0, 2, 0x12)),
    "trondead": Plan(1, 2000, 5000, pokes=(0xBD, 0xBE, 0xBF, 0xC8),
                     special=(4, 5, 6)),
    "turmoil": Plan(1, 2000, 5000, pokes=(0x89, 0x8A, 0xD3, 0xB9, 0xC5),
                    special=(0, 1)),
    # No lives left ($9E 0) is not the end while $81 reads 0x84.
    "tutankham": Plan(1, 2000, 5000, pokes=(0x9A, 0x9C, 0x9E, 0x81),
                      special=(0, 0x84),
                      script=((0x81, 0x84), (0x9E, 0x00), (0x81, 0x00))),
}

STEADY_LIVES_PLANS = {
    "space_war": Plan(1, 2000, 2000, pokes=(0x80, 0xA7),
                      special=(0, 0x09, 0x10), lives="steady",
                      scores=False, ends=False),
    # Clark Kent ($9F bit 6) in the room at 0xF2AC ends the game.
    "superman": Plan(1, 1000, 1000, pokes=(0x80, 0x81, 0x9F, 0xE2, 0xE3),
                     special=(0xAC, 0xF2, 0xC0),
                     script=((0x9F, 0xC0), (0x81, 0xF2), (0x80, 0xAC)),
                     lives="steady", scores=False, ends=False),
}

(test_rules_match_ale, test_static_facts_match_ale,
 test_mode_shown_matches_ale, test_set_mode_protocol) = game_tests(PLANS)


(test_steady_lives_rules_match_ale, test_steady_lives_static_facts_match_ale,
 _, test_steady_lives_set_mode_protocol) = game_tests(STEADY_LIVES_PLANS)


def test_sir_lancelot_starts_with_reset_then_left() -> None:
    """`getStartingActions` is {RESET, PLAYER_A_LEFT}."""
    assert games.GAMES["sir_lancelot"].starting_actions == (RESET, LEFT)


def _check_select_counts(game: str, rams: list[np.ndarray]) -> None:
    """set_mode presses SELECT (2 frames) as often as ALE, then resets."""
    rules = games.GAMES[game]
    for mode, count in harness.reset_frame_numbers(game).items():
        ops = harness.FakeOps(rams)
        rules.set_mode(ops, mode)
        assert ops.calls == [("select", 2)] * count + [("reset",)], mode


def test_space_war_set_mode() -> None:
    """Space War: ALE stops when $A7, read as BCD, equals the mode.

    ALE's reset needs m - 1 presses for mode m; this fake SELECT shows
    games 1, 2, ... in BCD, one per press.
    """
    games_shown = [16 * (k // 10) + k % 10 for k in range(1, 33)]
    _check_select_counts("space_war", harness.rams_showing(0xA7, games_shown))


def test_turmoil_set_mode() -> None:
    """Turmoil: ALE stops when $EA equals the mode.

    ALE's reset needs no press for mode 0 and 85 + m presses for mode
    m >= 1; this fake SELECT shows 0 until the 86th press, then 1, 2, ...
    """
    shown = [0] * 86 + list(range(1, 9))
    _check_select_counts("turmoil", harness.rams_showing(0xEA, shown))
