"""jaxatari.games.s_to_t against ale-py (see tests/games/harness.py)."""

from __future__ import annotations

from tests.games.harness import Plan, game_tests

PLANS = {
    "seaquest": Plan(1, 2000, 5000, pokes=(0xB8, 0xB9, 0xBA)),
    "space_invaders": Plan(1, 2000, 5000, pokes=(0xE6, 0xE8, 0xC9, 0x98),
                           special=(0, 0x80, 0x99)),
}

(test_rules_match_ale, test_static_facts_match_ale,
 test_mode_shown_matches_ale, test_set_mode_protocol) = game_tests(PLANS)
