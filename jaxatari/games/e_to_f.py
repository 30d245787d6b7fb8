"""ALE's rules for the games whose ROM ids start with e or f.

One `step` per game, restating `src/ale/games/supported/<Game>.cpp` of
ale-py 0.12.1 (see `jaxatari.games.core` for the conventions), and the
game's `GameRules` in `RULES`. Comments give RAM addresses as CPU
addresses.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxatari.games.core import (
    FIRE, GameRules, StepResult, bcd, bcd_score, byte, make_rules,
    mode_byte_shown, result, select_mode, split_vars)

def _enduro_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Enduro: the score counts cars passed, from the level and cars left.

    Level L is $AD and the cars still to pass are BCD $AB/$AC. Day 1 asks
    for 200 cars and later days for 300 each, so the score is 0 before the
    race, 200 - left on day 1, and 200 + 300 (L - 2) + 300 - left after.
    The race is lost when $AF reads 0xFF. No lives.
    """
    prev, lives_var, aux = split_vars(vars_)
    level = byte(ram, 0xAD)
    left = bcd_score(ram, 0xAB, 0xAC)
    score = jnp.where(level == 0, 0,
                      jnp.where(level == 1, 200 - left,
                                200 + (level - 2) * 300 + 300 - left))
    terminal = byte(ram, 0xAF) == 0xFF
    return result(score - prev, terminal, 0, score, lives_var, aux)


def _freeway_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Freeway: BCD score $E7, reward clipped to [0, 1]; over when $96 == 1."""
    prev, lives_var, aux = split_vars(vars_)
    score = bcd(ram, 0xE7)
    reward = jnp.clip(score - prev, 0, 1)
    terminal = byte(ram, 0x96) == 1
    return result(reward, terminal, 0, score, lives_var, aux)


_FREEWAY_MODES = tuple(range(8))

RULES: tuple[GameRules, ...] = (
    make_rules("enduro", "Enduro", _enduro_step,
               minimal_actions=(0, 1, 3, 4, 5, 8, 9, 11, 12),
               starting_actions=(FIRE,)),
    make_rules("freeway", "Freeway", _freeway_step,
               minimal_actions=(0, 2, 5), modes=_FREEWAY_MODES,
               set_mode=select_mode(_FREEWAY_MODES, mode_byte_shown(0x80), 1),
               mode_shown=mode_byte_shown(0x80),
               difficulties=(0, 1)),
)
