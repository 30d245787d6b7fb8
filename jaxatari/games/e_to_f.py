"""ALE's rules for the games whose ROM ids start with e or f.

One `step` per game, restating `src/ale/games/supported/<Game>.cpp` of
ale-py 0.12.1 (see `jaxatari.games.core` for the conventions), and the
game's `GameRules` in `RULES`. Comments give RAM addresses as CPU
addresses.

Several of these games keep the base class's `lives()`, which reports 1
while the game runs and 0 once it is over (`_base_lives`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari.games.core import (
    FIRE, NOOP, GameRules, ResetOps, StepResult, bcd, bcd_score, byte,
    check_mode, lives_unless_terminal, make_rules, mode_byte_shown,
    reset_vars_fn, result, select_mode, split_vars)


def _base_lives(terminal: jax.Array) -> jax.Array:
    """The base `RomSettings::lives()`: 0 once the game is over, else 1."""
    return jnp.where(terminal, 0, 1)


def _earthworld_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """SwordQuest Earthworld: BCD score $A7; the game is over at score 10.

    Lives are the base class's: 1, or 0 once over.
    """
    prev, lives_var, aux = split_vars(vars_)
    score = bcd(ram, 0xA7)
    terminal = score == 10
    return result(score - prev, terminal, _base_lives(terminal), score,
                  lives_var, aux)


def _elevator_action_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Elevator Action: BCD score $89/$88/$87; lives $83, as read.

    The game is over when $83 is 0 and $81 (0 on the start screen) is not.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0x89, 0x88, 0x87)
    lives_var = byte(ram, 0x83)
    terminal = (lives_var == 0) & (byte(ram, 0x81) != 0)
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


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


def _entombed_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Entombed: the score is $E3 read in binary; over when $C7 & 3 is 0.

    Lives are the base class's: 1, or 0 once over.
    """
    prev, lives_var, aux = split_vars(vars_)
    score = byte(ram, 0xE3)
    terminal = (byte(ram, 0xC7) & 0x3) == 0
    return result(score - prev, terminal, _base_lives(terminal), score,
                  lives_var, aux)


def _et_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """E.T.: BCD score $E1/$E0/$DF; lives $E5 + 1, kept in a signed char.

    ALE stores $E5 + 1 in a `char`, so 0xFF reads as 0 lives and bytes
    0x7F..0xFE as -128..-1. The game is over when those lives are 0 and
    the game state $80 reads 8.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xE1, 0xE0, 0xDF)
    wrapped = (byte(ram, 0xE5) + 1) & 0xFF
    lives_var = jnp.where(wrapped >= 0x80, wrapped - 0x100, wrapped)
    terminal = (lives_var == 0) & (byte(ram, 0x80) == 8)
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _fishing_derby_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Fishing Derby: score = my BCD $BD - the opponent's BCD $BE.

    The game is over when either byte reads 0x99. No lives (always 0).
    """
    prev, lives_var, aux = split_vars(vars_)
    score = bcd(ram, 0xBD) - bcd(ram, 0xBE)
    terminal = (byte(ram, 0xBD) == 0x99) | (byte(ram, 0xBE) == 0x99)
    return result(score - prev, terminal, 0, score, lives_var, aux)


def _flag_capture_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Flag Capture: BCD score $EA; over when the BCD timer $EB reads 0.

    Lives are the base class's: 1, or 0 once over.
    """
    prev, lives_var, aux = split_vars(vars_)
    score = bcd(ram, 0xEA)
    terminal = bcd(ram, 0xEB) == 0
    return result(score - prev, terminal, _base_lives(terminal), score,
                  lives_var, aux)


def _freeway_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Freeway: BCD score $E7, reward clipped to [0, 1]; over when $96 == 1."""
    prev, lives_var, aux = split_vars(vars_)
    score = bcd(ram, 0xE7)
    reward = jnp.clip(score - prev, 0, 1)
    terminal = byte(ram, 0x96) == 1
    return result(reward, terminal, 0, score, lives_var, aux)


def _frogger_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Frogger: BCD score $CE (low) and $CC (high); lives $D0, as read.

    The game is over when $D0 reads 0xFF.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xCE, 0xCC)
    lives_var = byte(ram, 0xD0)
    terminal = lives_var == 0xFF
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _frostbite_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Frostbite: BCD score $CA/$C9/$C8; lives (low nibble of $CC) + 1.

    The game is over when that nibble is 0 and bit 7 of $F1 is set.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xCA, 0xC9, 0xC8)
    nibble = byte(ram, 0xCC) & 0xF
    terminal = (nibble == 0) & ((byte(ram, 0xF1) & 0x80) != 0)
    lives_var = nibble + 1
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


_ET_MODES = (0, 1, 2)
_ET_MAX_PRESSES = 100
_FLAG_CAPTURE_MODES = (8, 9, 10)
_FREEWAY_MODES = tuple(range(8))
_FROGGER_MODES = (0, 1, 2)
_FROSTBITE_MODES = (0, 2)


def _et_mode_shown(ram: np.ndarray, mode: int) -> bool:
    """E.T.: ($EA - 1) mod 256 is the mode."""
    return (int(ram[0xEA & 0x7F]) - 1) & 0xFF == mode


def _et_set_mode(ops: ResetOps, mode: int) -> None:
    """E.T.'s setMode: SELECT (25 frames) until the mode shows, then reset.

    Unlike the plain loop, ALE gives up after 100 presses.

    Raises:
        ValueError: for a mode E.T. does not have.
        RuntimeError: if the mode has not shown after 100 presses.
    """
    check_mode(mode, _ET_MODES)
    presses = 0
    while (not _et_mode_shown(np.asarray(ops.ram()), mode)
           and presses < _ET_MAX_PRESSES):
        ops.press_select(25)
        presses += 1
    if not _et_mode_shown(np.asarray(ops.ram()), mode):
        raise RuntimeError("Failed to select game mode.")
    ops.soft_reset()


def _frogger_mode_shown(ram: np.ndarray, mode: int) -> bool:
    """Frogger: $DD reads 2 * mode + 1."""
    return int(ram[0xDD & 0x7F]) == 2 * mode + 1


RULES: tuple[GameRules, ...] = (
    make_rules("earthworld", "Earthworld", _earthworld_step),
    make_rules("elevator_action", "ElevatorAction", _elevator_action_step,
               reset_vars=reset_vars_fn(lives=4),
               starting_actions=(FIRE,) * 16),
    make_rules("enduro", "Enduro", _enduro_step,
               minimal_actions=(0, 1, 3, 4, 5, 8, 9, 11, 12),
               starting_actions=(FIRE,)),
    make_rules("entombed", "Entombed", _entombed_step, difficulties=(0, 2),
               starting_actions=(FIRE,) + (NOOP,) * 5),
    make_rules("et", "Et", _et_step, modes=_ET_MODES,
               set_mode=_et_set_mode, mode_shown=_et_mode_shown,
               difficulties=(0, 1, 2, 3)),
    make_rules("fishing_derby", "FishingDerby", _fishing_derby_step,
               difficulties=(0, 1, 2, 3)),
    make_rules("flag_capture", "FlagCapture", _flag_capture_step,
               modes=_FLAG_CAPTURE_MODES,
               set_mode=select_mode(_FLAG_CAPTURE_MODES,
                                    mode_byte_shown(0xD6), 2),
               mode_shown=mode_byte_shown(0xD6)),
    make_rules("freeway", "Freeway", _freeway_step,
               minimal_actions=(0, 2, 5), modes=_FREEWAY_MODES,
               set_mode=select_mode(_FREEWAY_MODES, mode_byte_shown(0x80), 1),
               mode_shown=mode_byte_shown(0x80),
               difficulties=(0, 1)),
    make_rules("frogger", "Frogger", _frogger_step,
               minimal_actions=(0, 2, 3, 4, 5), modes=_FROGGER_MODES,
               reset_vars=reset_vars_fn(lives=4),
               set_mode=select_mode(_FROGGER_MODES, _frogger_mode_shown, 2),
               mode_shown=_frogger_mode_shown, difficulties=(0, 1)),
    make_rules("frostbite", "Frostbite", _frostbite_step,
               modes=_FROSTBITE_MODES, reset_vars=reset_vars_fn(lives=4),
               set_mode=select_mode(_FROSTBITE_MODES, mode_byte_shown(0x80),
                                    1),
               mode_shown=mode_byte_shown(0x80)),
)
