"""ALE's rules for the games whose ROM ids start with c or d.

One `step` per game, restating `src/ale/games/supported/<Game>.cpp` of
ale-py 0.12.1 (see `jaxatari.games.core` for the conventions), and the
game's `GameRules` in `RULES`. Comments give RAM addresses as CPU
addresses.
"""

from __future__ import annotations

from jaxatari.games.core import GameRules

RULES: tuple[GameRules, ...] = ()
