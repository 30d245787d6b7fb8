"""ALE's rules for the games whose ROM ids start with g or h.

One `step` per game, restating `src/ale/games/supported/<Game>.cpp` of
ale-py 0.12.1 (see `jaxatari.games.core` for the conventions), and the
game's `GameRules` in `RULES`. Comments give RAM addresses as CPU
addresses.

Hangman and Human Cannonball keep the base class's `lives()`, which
reports 1 while the game runs and 0 once it is over (`_base_lives`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari.games.core import (
    FIRE, MAX_SELECT_PRESSES, GameRules, ResetOps, StepResult, bcd,
    bcd_score, byte, check_mode, extra_vars, lives_unless_terminal,
    make_rules, mode_byte_shown, reset_vars_fn, result, select_mode,
    split_vars)


def _base_lives(terminal: jax.Array) -> jax.Array:
    """The base `RomSettings::lives()`: 0 once the game is over, else 1."""
    return jnp.where(terminal, 0, 1)


def _galaxian_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Galaxian: BCD score $AE/$AD/$AC, wrapping at 1,000,000.

    A negative score difference is taken as a wrap: the reward becomes
    (1,000,000 - previous score) + score. The game is over when bit 7 of
    $BF is set; lives are then 0, else $B9 + 1.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xAE, 0xAD, 0xAC)
    reward = score - prev
    reward = jnp.where(reward < 0, (1000000 - prev) + score, reward)
    terminal = (byte(ram, 0xBF) & 0x80) != 0
    lives_var = jnp.where(terminal, 0, byte(ram, 0xB9) + 1)
    return result(reward, terminal, lives_var, score, lives_var, aux)


_GOPHER_LIVES_FROM_CARROTS = (0, 1, 1, 2, 1, 2, 2, 3)


def _gopher_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Gopher: BCD score $B2/$B1/$B0; lives from the carrots left.

    The low three bits of $B4 are one bit per carrot; lives are the number
    of bits set and the game is over when none is.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xB2, 0xB1, 0xB0)
    carrots = byte(ram, 0xB4) & 0x7
    terminal = carrots == 0
    lives_var = jnp.asarray(_GOPHER_LIVES_FROM_CARROTS, jnp.int32)[carrots]
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _gravitar_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Gravitar: BCD score $89/$88/$87; over when the screen byte $81 is 1.

    Lives read 6 while $81 is 0 (the start screen), else $84 + 1. ALE's
    setMode also sets the lives (6, 15, 6, 100 or 25 by mode), but every
    later frame overwrites them, so nothing of it is carried.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0x89, 0x88, 0x87)
    screen = byte(ram, 0x81)
    terminal = screen == 0x01
    lives_var = jnp.where(screen == 0, 6, byte(ram, 0x84) + 1)
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _hangman_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Hangman: reward = my BCD score's gain ($EB) - the CPU's ($EC).

    The two scores are carried separately (slot 0 mine, extra slot 4 the
    CPU's) and the timer $F1 of the previous frame in the aux slot (-1
    after a reset). The game is over on any nonzero reward, or when the
    timer reads 0 right after 255. Lives are the base class's.
    """
    mine_before, lives_var, last_timer = split_vars(vars_)
    theirs_before = extra_vars(vars_)[0]
    mine, theirs = bcd(ram, 0xEB), bcd(ram, 0xEC)
    reward = (mine - mine_before) - (theirs - theirs_before)
    timer = byte(ram, 0xF1)
    timed_out = (timer == 0) & (last_timer == 255)
    terminal = (reward != 0) | timed_out
    return result(reward, terminal, _base_lives(terminal), mine, lives_var,
                  timer, extra=(theirs,))


def _haunted_house_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Haunted House: -1 for each change of the matches used, BCD $82.

    The matches count of the last change is carried in slot 0 (0 after a
    reset). Escaping with the urn ($99 == 0x44) gives +100 and ends the
    game, as do 0 lives ($96, as read).
    """
    last_matches, _, aux = split_vars(vars_)
    matches = bcd(ram, 0x82)
    changed = matches != last_matches
    escaped = byte(ram, 0x99) == 0x44
    reward = jnp.where(changed, -1, 0) + jnp.where(escaped, 100, 0)
    lives_var = byte(ram, 0x96)
    terminal = (lives_var == 0) | escaped
    lives = lives_unless_terminal(terminal, lives_var)
    return result(reward, terminal, lives, matches, lives_var, aux)


def _hero_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """H.E.R.O.: BCD score $B9/$B8/$B7; lives $B3, over when it is 0."""
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xB9, 0xB8, 0xB7)
    lives_var = byte(ram, 0xB3)
    terminal = lives_var == 0
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _human_cannonball_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Human Cannonball: BCD score $B6; over at 7 hits or 7 misses ($B7).

    Lives are the base class's: 1, or 0 once over.
    """
    prev, lives_var, aux = split_vars(vars_)
    score = bcd(ram, 0xB6)
    terminal = (score == 7) | (bcd(ram, 0xB7) == 7)
    return result(score - prev, terminal, _base_lives(terminal), score,
                  lives_var, aux)


_GALAXIAN_MODES = tuple(range(1, 10))
_GOPHER_MODES = (0, 2)
_GRAVITAR_MODES = tuple(range(5))
_HANGMAN_MODES = (0, 1, 2, 3)
_HAUNTED_HOUSE_MODES = tuple(range(9))
_HERO_MODES = tuple(range(5))
_HUMAN_CANNONBALL_MODES = tuple(range(8))


def _gopher_mode_shown(ram: np.ndarray, mode: int) -> bool:
    """Gopher: $D3 is the mode."""
    return int(ram[0xD3 & 0x7F]) == mode


def _gopher_set_mode(ops: ResetOps, mode: int) -> None:
    """Gopher's setMode: a reset first, then SELECT (5 frames) until $D3
    shows the mode, then another reset.

    Raises:
        ValueError: for a mode Gopher does not have.
        RuntimeError: if the mode never shows up in RAM.
    """
    check_mode(mode, _GOPHER_MODES)
    ops.soft_reset()
    for _ in range(MAX_SELECT_PRESSES):
        if _gopher_mode_shown(np.asarray(ops.ram()), mode):
            ops.soft_reset()
            return
        ops.press_select(5)
    raise RuntimeError("the game never reached the requested mode")


def _human_cannonball_mode_shown(ram: np.ndarray, mode: int) -> bool:
    """Human Cannonball: ($B6 - 1) mod 256 is the mode and $B7 (players)
    is 1.

    Only the SELECT screen shows the game number and players there: the
    console reset that ends setMode zeroes both (they become the score and
    the misses), so the rules give no `mode_shown` to test against
    post-reset RAM.
    """
    return ((int(ram[0xB6 & 0x7F]) - 1) & 0xFF == mode
            and int(ram[0xB7 & 0x7F]) == 1)


RULES: tuple[GameRules, ...] = (
    make_rules("galaxian", "Galaxian", _galaxian_step,
               minimal_actions=(0, 1, 3, 4, 11, 12), modes=_GALAXIAN_MODES,
               reset_vars=reset_vars_fn(lives=3),
               set_mode=select_mode(_GALAXIAN_MODES, mode_byte_shown(0xB3),
                                    1),
               mode_shown=mode_byte_shown(0xB3), difficulties=(0, 1)),
    make_rules("gopher", "Gopher", _gopher_step,
               minimal_actions=(0, 1, 2, 3, 4, 10, 11, 12),
               modes=_GOPHER_MODES, reset_vars=reset_vars_fn(lives=3),
               set_mode=_gopher_set_mode, difficulties=(0, 1),
               starting_actions=(FIRE,)),
    make_rules("gravitar", "Gravitar", _gravitar_step,
               modes=_GRAVITAR_MODES, reset_vars=reset_vars_fn(lives=6),
               set_mode=select_mode(_GRAVITAR_MODES, mode_byte_shown(0x80),
                                    10),
               mode_shown=mode_byte_shown(0x80),
               starting_actions=(FIRE,) * 16),
    make_rules("hangman", "Hangman", _hangman_step, modes=_HANGMAN_MODES,
               reset_vars=reset_vars_fn(aux=-1),
               set_mode=select_mode(_HANGMAN_MODES, mode_byte_shown(0xEE), 2),
               mode_shown=mode_byte_shown(0xEE), difficulties=(0, 1)),
    make_rules("haunted_house", "HauntedHouse", _haunted_house_step,
               modes=_HAUNTED_HOUSE_MODES, reset_vars=reset_vars_fn(lives=9),
               set_mode=select_mode(_HAUNTED_HOUSE_MODES,
                                    mode_byte_shown(0xCC), 2),
               mode_shown=mode_byte_shown(0xCC), difficulties=(0, 1)),
    make_rules("hero", "Hero", _hero_step, modes=_HERO_MODES,
               reset_vars=reset_vars_fn(lives=4),
               set_mode=select_mode(_HERO_MODES, mode_byte_shown(0x80), 1),
               mode_shown=mode_byte_shown(0x80)),
    make_rules("human_cannonball", "HumanCannonball", _human_cannonball_step,
               modes=_HUMAN_CANNONBALL_MODES,
               set_mode=select_mode(_HUMAN_CANNONBALL_MODES,
                                    _human_cannonball_mode_shown, 2),
               difficulties=(0, 1)),
)
