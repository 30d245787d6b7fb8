"""jaxatari.games.e_to_f against ale-py (see tests/games/harness.py)."""

from __future__ import annotations

from tests.games.harness import Plan, game_tests

PLANS = {
    "enduro": Plan(1, 2000, 14000, bias={1: 30}, pokes=(0xAB, 0xAC, 0xAD),
                   special=(0, 1, 2, 3, 7), has_lives=False),
    "freeway": Plan(1, 2000, 9000, bias={2: 8}, pokes=(0xE7, 0x96),
                    special=(0, 1), has_lives=False),
}

(test_rules_match_ale, test_static_facts_match_ale,
 test_mode_shown_matches_ale, test_set_mode_protocol) = game_tests(PLANS)
