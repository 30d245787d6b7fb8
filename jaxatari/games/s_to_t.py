"""ALE's rules for the games whose ROM ids start with s or t.

One `step` per game, restating `src/ale/games/supported/<Game>.cpp` of
ale-py 0.12.1 (see `jaxatari.games.core` for the conventions), and the
game's `GameRules` in `RULES`. Comments give RAM addresses as CPU
addresses.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxatari.games.core import (
    GameRules, StepResult, bcd_score, byte, lives_unless_terminal, make_rules,
    mode_byte_shown, reset_vars_fn, result, select_mode, split_vars)

def _seaquest_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Seaquest: BCD score $BA/$B9/$B8; lives $BB + 1; over when $A3 != 0."""
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xBA, 0xB9, 0xB8)
    terminal = byte(ram, 0xA3) != 0
    lives_var = byte(ram, 0xBB) + 1
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _space_invaders_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Space Invaders: a score drop counts as a wrap of the counter at 10,000.

    Lives are $C9; the game is over when bit 7 of $98 is set or lives are 0.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xE8, 0xE6)
    reward = score - prev
    reward = jnp.where(reward < 0, (10000 - prev) + score, reward)
    lives_byte = byte(ram, 0xC9)
    terminal = ((byte(ram, 0x98) & 0x80) != 0) | (lives_byte == 0)
    lives = lives_unless_terminal(terminal, lives_byte)
    return result(reward, terminal, lives, score, lives_byte, aux)


_SPACE_INVADERS_MODES = tuple(range(16))

RULES: tuple[GameRules, ...] = (
    make_rules("seaquest", "Seaquest", _seaquest_step,
               reset_vars=reset_vars_fn(lives=4), difficulties=(0, 1)),
    make_rules("space_invaders", "SpaceInvaders", _space_invaders_step,
               minimal_actions=(0, 1, 3, 4, 11, 12),
               modes=_SPACE_INVADERS_MODES, reset_vars=reset_vars_fn(lives=3),
               set_mode=select_mode(_SPACE_INVADERS_MODES,
                                    mode_byte_shown(0xDC), 2),
               mode_shown=mode_byte_shown(0xDC), difficulties=(0, 1)),
)
