"""jaxatari.games.m_to_r against ale-py (see tests/games/harness.py)."""

from __future__ import annotations

from tests.games.harness import Plan, game_tests

PLANS = {
    "montezuma_revenge": Plan(1, 2000, 6000, pokes=(0x93, 0x94, 0x95),
                              scores=False),
    "ms_pacman": Plan(1, 2000, 5000, pokes=(0xF8, 0xF9, 0xFA)),
    "pitfall": Plan(3, 2000, 5000, pokes=(0xD5, 0xD6, 0xD7)),
    "pong": Plan(1, 2000, 6000, pokes=(0x8D, 0x8E), special=(20, 21),
                 has_lives=False),
    # Q*bert's second game-over rule: the lives byte reads 2 after 0xFF.
    "qbert": Plan(1, 2000, 4000, pokes=(0xD9, 0xDA, 0xDB),
                  script=((0x88, 0xFF), (0x88, 0x02))),
    "riverraid": Plan(1, 2000, 5000,
                      pokes=(0xCD, 0xCF, 0xD1, 0xD3, 0xD5, 0xD7),
                      special=(72, 80, 0x58, 0x59)),
    "robotank": Plan(1, 2000, 12000, pokes=(0xB5, 0xB6)),
}

(test_rules_match_ale, test_static_facts_match_ale,
 test_mode_shown_matches_ale, test_set_mode_protocol) = game_tests(PLANS)
