"""ALE's rules for the games whose ROM ids start with a or b.

One `step` per game, restating `src/ale/games/supported/<Game>.cpp` of
ale-py 0.12.1 (see `jaxatari.games.core` for the conventions), and the
game's `GameRules` in `RULES`. Comments give RAM addresses as CPU
addresses.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxatari.games.core import (
    GameRules, RIGHT, StepResult, bcd, bcd_score, byte, lives_unless_terminal,
    make_rules, mode_byte_shown, reset_vars_fn, result, select_mode,
    split_vars)

def _asteroids_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Asteroids: 10 x BCD $BE/$BD, wrapping at 100,000; lives $BC >> 4."""
    prev, _, aux = split_vars(vars_)
    score = 10 * bcd_score(ram, 0xBE, 0xBD)
    reward = score - prev
    reward = jnp.where(reward < 0, reward + 100000, reward)
    lives_var = byte(ram, 0xBC) >> 4
    terminal = lives_var == 0
    return result(reward, terminal, lives_var, score, lives_var, aux)


def _beam_rider_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Beam Rider: BCD score $89/$8A/$8B; lives $85 + 1, accepted with care.

    A drop of exactly one life is taken only on a frame where $8C reads 1;
    any other change is taken at once. The game is over when $85 is 0xFF.
    """
    prev, lives_var, aux = split_vars(vars_)
    score = bcd_score(ram, 0x89, 0x8A, 0x8B)
    new_lives = byte(ram, 0x85) + 1
    accept = (new_lives != lives_var - 1) | (byte(ram, 0x8C) == 0x01)
    lives_var = jnp.where(accept, new_lives, lives_var)
    terminal = byte(ram, 0x85) == 0xFF
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _boxing_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Boxing: punches landed, mine ($92) minus the CPU's ($93).

    A byte of 0xC0 is a knockout and counts as 100 punches. The bout ends
    at a knockout (either count at 100) or when the clock ($90 minutes in
    the high nibble, $91 BCD seconds) reads 0:00.
    """
    prev, lives_var, aux = split_vars(vars_)
    mine = jnp.where(byte(ram, 0x92) == 0xC0, 100, bcd(ram, 0x92))
    theirs = jnp.where(byte(ram, 0x93) == 0xC0, 100, bcd(ram, 0x93))
    score = mine - theirs
    knockout = (mine == 100) | (theirs == 100)
    minutes = byte(ram, 0x90) >> 4
    seconds = bcd(ram, 0x91)
    terminal = knockout | ((minutes == 0) & (seconds == 0))
    return result(score - prev, terminal, 0, score, lives_var, aux)


def _breakout_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Breakout: terminal once lives ($B9) have been 5 and are now 0.

    The score is BCD $CD plus 100 times the low nibble of $CC. The aux slot
    holds the "started" flag, set the first time the lives byte reads 5.
    """
    prev, _, started = split_vars(vars_)
    low, high = byte(ram, 0xCD), byte(ram, 0xCC)
    score = (low & 0xF) + 10 * (low >> 4) + 100 * (high & 0xF)
    lives_byte = byte(ram, 0xB9)
    started = (started != 0) | (lives_byte == 5)
    terminal = started & (lives_byte == 0)
    lives = lives_unless_terminal(terminal, lives_byte)
    return result(score - prev, terminal, lives, score, lives_byte, started)


_ASTEROIDS_MODES = tuple(range(32)) + (0x80,)
_BREAKOUT_MODES = tuple(range(0, 48, 4))

RULES: tuple[GameRules, ...] = (
    make_rules("asteroids", "Asteroids", _asteroids_step,
               minimal_actions=(0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14,
                                15),
               modes=_ASTEROIDS_MODES, reset_vars=reset_vars_fn(lives=4),
               set_mode=select_mode(_ASTEROIDS_MODES, mode_byte_shown(0x80),
                                    2),
               mode_shown=mode_byte_shown(0x80),
               difficulties=(0, 3), hmove_blanks=False),
    make_rules("beam_rider", "BeamRider", _beam_rider_step,
               minimal_actions=(0, 1, 2, 3, 4, 6, 7, 11, 12),
               reset_vars=reset_vars_fn(lives=3), difficulties=(0, 1),
               starting_actions=(RIGHT,)),
    make_rules("boxing", "Boxing", _boxing_step, difficulties=(0, 1, 2, 3)),
    make_rules("breakout", "Breakout", _breakout_step,
               minimal_actions=(0, 1, 3, 4), modes=_BREAKOUT_MODES,
               reset_vars=reset_vars_fn(lives=5),
               set_mode=select_mode(_BREAKOUT_MODES, mode_byte_shown(0xB2), 1),
               mode_shown=mode_byte_shown(0xB2),
               difficulties=(0, 1), paddles=True),
)
