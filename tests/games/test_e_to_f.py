"""jaxatari.games.e_to_f against ale-py (see tests/games/harness.py)."""

from __future__ import annotations

import numpy as np
import pytest

from jaxatari import games
from tests.games.harness import FakeOps, Plan, game_tests

PLANS = {
    "enduro": Plan(1, 2000, 14000, bias={1: 30}, pokes=(0xAB, 0xAC, 0xAD),
                   special=(0, 1, 2, 3, 7), lives="none"),
    "entombed": Plan(1, 2000, 6000, pokes=(0xE3, 0xC7),
                     special=(0, 1, 4, 0xFF)),
    "fishing_derby": Plan(1, 2000, 3000, pokes=(0xBD, 0xBE),
                          special=(0, 0x98, 0x99), lives="none",
                          ends=False),
    "flag_capture": Plan(1, 2000, 6000, pokes=(0xEA, 0xEB),
                         special=(0, 1), scores=False),
    "freeway": Plan(1, 2000, 9000, bias={2: 8}, pokes=(0xE7, 0x96),
                    special=(0, 1), lives="none"),
    "frogger": Plan(1, 2000, 5000, pokes=(0xCC, 0xCE, 0xD0),
                    special=(0, 1, 0xFF)),
    "frostbite": Plan(1, 2000, 5000, pokes=(0xC8, 0xC9, 0xCA, 0xCC, 0xF1),
                      special=(0, 0x10, 0x80)),
}

LIVES_BY_POKES = {
    # The score counts the clues found; random play finds none, so the
    # game never ends and the base class's lives stay 1.
    "earthworld": Plan(1, 2000, 2000, pokes=(0xA7,),
                       special=(0x09, 0x0A, 0x10), script=((0xA7, 0x10),),
                       scores=False, ends=False, lives="poked"),
    # Random play stays on the roof, where nothing can kill the agent.
    "elevator_action": Plan(1, 2000, 3000,
                            pokes=(0x87, 0x88, 0x89, 0x83, 0x81),
                            special=(0, 1, 2), script=((0x83, 0),),
                            ends=False, lives="poked"),
    # E.T. loses a life only when his energy runs out, after ~15,000
    # frames of random play.
    "et": Plan(1, 2000, 2000, pokes=(0xDF, 0xE0, 0xE1, 0xE5, 0x80),
               special=(0x7F, 0x80, 0xFE, 0xFF, 8),
               script=((0xE5, 0xFF), (0x80, 8)), scores=False, ends=False,
               lives="poked"),
}
"""Games that random play cannot make lose a life within a few thousand
frames: their lives and game-over rules are reached by pokes alone."""

(test_rules_match_ale, test_static_facts_match_ale,
 test_mode_shown_matches_ale, test_set_mode_protocol) = game_tests(
    PLANS | LIVES_BY_POKES)


def test_et_set_mode_gives_up_after_100_presses() -> None:
    """E.T.'s setMode stops pressing SELECT after 100 tries and fails."""
    ops = FakeOps([np.zeros(128, np.uint8)])  # $EA = 0 shows no mode
    with pytest.raises(RuntimeError):
        games.GAMES["et"].set_mode(ops, 1)
    assert ops.calls == [("select", 25)] * 100
