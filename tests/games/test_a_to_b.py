"""jaxatari.games.a_to_b against ale-py (see tests/games/harness.py)."""

from __future__ import annotations

from tests.games.harness import Plan, game_tests

PLANS = {
    "asteroids": Plan(1, 2000, 6000, pokes=(0xBD, 0xBE), special=(0, 0x99)),
    "beam_rider": Plan(1, 2000, 9000, pokes=(0x89, 0x8A, 0x8B)),
    "boxing": Plan(1, 2000, 8000, pokes=(0x90, 0x91, 0x92, 0x93),
                   special=(0, 0xC0, 0x99, 0x9A), has_lives=False),
    "breakout": Plan(1, 2000, 4000, bias={1: 3}, pokes=(0xCC, 0xCD, 0xB9),
                     special=(0, 1, 5)),
}

(test_rules_match_ale, test_static_facts_match_ale,
 test_mode_shown_matches_ale, test_set_mode_protocol) = game_tests(PLANS)
