"""jaxatari.games.g_to_h against ale-py (see tests/games/harness.py)."""

from __future__ import annotations

from tests.games.harness import Plan, game_tests  # noqa: F401

PLANS = {

}

(test_rules_match_ale, test_static_facts_match_ale,
 test_mode_shown_matches_ale, test_set_mode_protocol) = game_tests(PLANS)
