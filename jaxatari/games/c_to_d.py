"""ALE's rules for the games whose ROM ids start with c or d.

One `step` per game, restating `src/ale/games/supported/<Game>.cpp` of
ale-py 0.12.1 (see `jaxatari.games.core` for the conventions), and the
game's `GameRules` in `RULES`. Comments give RAM addresses as CPU
addresses.

Games that keep ALE's base `lives()` (Casino, Crossbow, Dark Chambers)
report 1 life until the game is over and 0 afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari.games.core import (
    DOWN, FIRE, LEFT, MAX_SELECT_PRESSES, NOOP, RIGHT, UPFIRE, VAR_TERMINAL,
    GameRules, ResetOps, StepResult, bcd, bcd_score, byte, check_mode,
    extra_vars, lives_unless_terminal, make_rules, mode_byte_shown, ram_byte,
    reset_vars_fn, result, select_mode, split_vars)


def _base_lives(terminal: jax.Array) -> jax.Array:
    """ALE's default `RomSettings::lives()`: 1, or 0 once the game is over."""
    return jnp.where(terminal, 0, 1)


def _carnival_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Carnival: 10 x BCD score $AE/$AD; over when the ammo ($83) is 0.

    ALE reports no lives.
    """
    prev, lives_var, aux = split_vars(vars_)
    score = 10 * bcd_score(ram, 0xAE, 0xAD)
    terminal = byte(ram, 0x83) < 1
    return result(score - prev, terminal, 0, score, lives_var, aux)


def _casino_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Casino: chips are BCD $95/$8C; the rules depend on the game ($D4).

    In game 3 the reward is the change in chips, and the game is over once
    chips are above 0 and $9E reads 0xAA (the payout is done). In the
    other games the reward is updated only while input is enabled (bit 7
    of $D3 clear); while it is disabled ALE keeps returning the previous
    frame's reward (carried in the aux slot). The game is over when the
    chips are 0, or when the bet (BCD $9E) is above 0 while input is
    disabled. The remembered chips follow RAM on every frame.
    """
    prev, lives_var, last_reward = split_vars(vars_)
    score = bcd_score(ram, 0x95, 0x8C)
    game_three = byte(ram, 0xD4) == 3
    paid_out = byte(ram, 0x9E) == 0xAA
    input_disabled = (byte(ram, 0xD3) & 0x80) != 0
    bet = bcd(ram, 0x9E)
    reward = jnp.where(game_three | ~input_disabled, score - prev,
                       last_reward)
    terminal = jnp.where(game_three, (score > 0) & paid_out,
                         (score == 0) | ((bet > 0) & input_disabled))
    return result(reward, terminal, _base_lives(terminal), score, lives_var,
                  reward)


def _centipede_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Centipede: BCD score $F6/$F5/$F4; a drop in score gives reward 0.

    Lives are bits 4-6 of $ED plus 1; the game is over when bit 6 of $A6
    is set.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xF6, 0xF5, 0xF4)
    reward = jnp.maximum(score - prev, 0)
    lives_var = ((byte(ram, 0xED) >> 4) & 0x7) + 1
    terminal = (byte(ram, 0xA6) & 0x40) != 0
    lives = lives_unless_terminal(terminal, lives_var)
    return result(reward, terminal, lives, score, lives_var, aux)


def _chopper_command_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Chopper Command: 100 x BCD $EE/$EC; lives the low nibble of $E4.

    The game is over when lives are 0, but only once it has started: the
    aux slot is a "started" flag, set the first time bit 0 of $C2 (the
    chopper faces right) is 1. Lives are reported as read, even when the
    game is over.
    """
    prev, _, started = split_vars(vars_)
    score = 100 * bcd_score(ram, 0xEE, 0xEC)
    lives_var = byte(ram, 0xE4) & 0xF
    started = (started != 0) | ((byte(ram, 0xC2) & 0x1) != 0)
    terminal = started & (lives_var == 0)
    return result(score - prev, terminal, lives_var, score, lives_var,
                  started)


def _crazy_climber_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Crazy Climber: four decimal digits $82-$85, one per byte, x 100.

    Each byte is taken whole (not masked) as a digit: score = 100 x ($82 +
    10 $83 + 100 $84 + 1000 $85). A drop in score gives reward 0. Lives
    are $AA; the game is over when they are 0.
    """
    prev, _, aux = split_vars(vars_)
    digits = sum(10 ** place * byte(ram, 0x82 + place) for place in range(4))
    score = 100 * digits
    reward = jnp.maximum(score - prev, 0)
    lives_var = byte(ram, 0xAA)
    terminal = lives_var == 0
    lives = lives_unless_terminal(terminal, lives_var)
    return result(reward, terminal, lives, score, lives_var, aux)


def _crossbow_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Crossbow: BCD score $8D/$8C/$8B; over when $E7 reads 0x82."""
    prev, lives_var, aux = split_vars(vars_)
    score = bcd_score(ram, 0x8D, 0x8C, 0x8B)
    terminal = byte(ram, 0xE7) == 0x82
    return result(score - prev, terminal, _base_lives(terminal), score,
                  lives_var, aux)


def _crossbow_mode_shown(ram: np.ndarray, mode: int) -> bool:
    """Crossbow's SELECT test: $8D minus 1, as an unsigned byte, is `mode`.

    $8D shows the game number (mode + 1) while selecting; it is also the
    score's low byte, so the test does not hold after the game resets.
    """
    return (ram_byte(ram, 0x0D) - 1) & 0xFF == mode


def _darkchambers_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Dark Chambers: 10 x BCD $CC/$CF; game over is sticky.

    The aux slot is the level seen last, extra slot 0 the health. If the
    level ($D5) is below the remembered one, the game is over and nothing
    else changes. Otherwise the level is remembered; if the score dropped
    the game is over (reward 0, remembered score kept), else the reward is
    the score's change. The health (low 5 bits of $CA) is remembered, and
    0 ends the game. Once over, the game stays over until a reset.
    """
    prev, lives_var, level = split_vars(vars_)
    health = extra_vars(vars_)[0]
    was_over = jnp.asarray(vars_, jnp.int32)[..., VAR_TERMINAL] != 0
    new_level = byte(ram, 0xD5)
    level_dropped = new_level < level
    new_score = 10 * bcd_score(ram, 0xCC, 0xCF)
    score_dropped = ~level_dropped & (new_score < prev)
    scored = ~level_dropped & ~score_dropped
    new_health = byte(ram, 0xCA) & 0x1F
    health = jnp.where(level_dropped, health, new_health)
    terminal = (was_over | level_dropped | score_dropped
                | (~level_dropped & (new_health == 0)))
    reward = jnp.where(scored, new_score - prev, 0)
    score = jnp.where(scored, new_score, prev)
    level = jnp.where(level_dropped, level, new_level)
    return result(reward, terminal, _base_lives(terminal), score, lives_var,
                  level, extra=(health,))


def _defender_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Defender: six digits in the low nibbles of $9C-$A1, least first.

    A digit nibble of 0xA (a blank) reads as 0; other nibbles count as they
    are. Lives are $C2; the game is over when they are 0.
    """
    prev, _, aux = split_vars(vars_)
    score = jnp.zeros(ram.shape[:-1], jnp.int32)
    for place in range(6):
        digit = byte(ram, 0x9C + place) & 0xF
        score = score + 10 ** place * jnp.where(digit == 0xA, 0, digit)
    lives_var = byte(ram, 0xC2)
    terminal = lives_var == 0
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _demon_attack_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Demon Attack: BCD score $85/$83/$81; lives $F2 + 1.

    The bytes $81, $83, $85 reading 0xAB, 0xCD, 0xEA (the power-on
    pattern) count as score 0. The game is over when $F2 is 0 and $F1
    reads 0xBD. ALE also suppresses game over on the one frame right after
    its setMode (a flag set there and cleared by every step); that frame is
    inside the reset sequence and its result is overwritten by the later
    reset frames, so no flag is carried here.
    """
    prev, _, aux = split_vars(vars_)
    blank = ((byte(ram, 0x81) == 0xAB) & (byte(ram, 0x83) == 0xCD)
             & (byte(ram, 0x85) == 0xEA))
    score = jnp.where(blank, 0, bcd_score(ram, 0x85, 0x83, 0x81))
    shown = byte(ram, 0xF2)
    terminal = (shown == 0) & (byte(ram, 0xF1) == 0xBD)
    lives_var = shown + 1
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _donkey_kong_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Donkey Kong: 100 x BCD $88/$87; lives $A3.

    The game is over when lives are 0, $8F reads 3 and $8B reads 0x1F.
    """
    prev, _, aux = split_vars(vars_)
    score = 100 * bcd_score(ram, 0x88, 0x87)
    lives_var = byte(ram, 0xA3)
    terminal = ((lives_var == 0) & (byte(ram, 0x8F) == 0x03)
                & (byte(ram, 0x8B) == 0x1F))
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _double_dunk_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Double Dunk: score = mine (BCD $F6) - theirs (BCD $F7); no lives.

    The game is over when either side has 24 points or more and $FE reads
    0xE7.
    """
    prev, lives_var, aux = split_vars(vars_)
    mine, theirs = bcd(ram, 0xF6), bcd(ram, 0xF7)
    score = mine - theirs
    terminal = ((mine >= 24) | (theirs >= 24)) & (byte(ram, 0xFE) == 0xE7)
    return result(score - prev, terminal, 0, score, lives_var, aux)


# Double Dunk's options menu: the mode bit set by each menu row, with the
# bit of $80 that shows the option switched on, in menu order.
_DOUBLE_DUNK_OPTIONS = ((1, 0x08), (2, 0x10), (4, 0x04), (8, 0x20))


def _double_dunk_repeat(ops: ResetOps, action: int,
                        until: Callable[[np.ndarray], bool]) -> None:
    """`action` then NOOP, as ALE's act() calls, until `until(ram)` holds.

    Raises:
        RuntimeError: if the menu never responds (ALE would loop forever).
    """
    for _ in range(MAX_SELECT_PRESSES):
        if until(np.asarray(ops.ram())):
            return
        ops.act(action)
        ops.act(NOOP)
    raise RuntimeError("Double Dunk's options menu did not respond")


def _double_dunk_go_down(ops: ResetOps) -> None:
    """Moves the menu cursor ($B0) one row down: DOWN, NOOP until it moves."""
    row = int(np.asarray(ops.ram())[0x30])
    _double_dunk_repeat(ops, DOWN, lambda ram: int(ram[0x30]) != row)


def _double_dunk_set_option(ops: ResetOps, bit: int, on: bool) -> None:
    """Switches an option of $80 on (RIGHT, NOOP) or off (LEFT, NOOP)."""
    if on:
        _double_dunk_repeat(ops, RIGHT, lambda ram: (ram[0] & bit) == bit)
    else:
        _double_dunk_repeat(ops, LEFT, lambda ram: (ram[0] & bit) != bit)


def _double_dunk_set_mode(ops: ResetOps, mode: int) -> None:
    """Double Dunk's setMode: the mode's four bits are menu options.

    One `pressSelect(1)` opens the options menu; the cursor goes down two
    rows, then for each option in menu order the option is switched to the
    mode's bit (bits 1, 2, 4, 8 show as bits 0x08, 0x10, 0x04, 0x20 of
    $80), going down one row between options. Then RESET, and the agent
    actions UPFIRE and NOOP. ALE counts the SELECT press and every act()
    in the episode's frame number (13 in mode 0).
    """
    check_mode(mode, _DOUBLE_DUNK_MODES)
    ops.press_select(1)
    _double_dunk_go_down(ops)
    for mode_bit, option in _DOUBLE_DUNK_OPTIONS:
        _double_dunk_go_down(ops)
        _double_dunk_set_option(ops, option, bool(mode & mode_bit))
    ops.soft_reset()
    ops.act(UPFIRE)
    ops.act(NOOP)


_CASINO_MODES = (0, 2, 3)
_CENTIPEDE_MODES = (0x16, 0x56)
_CHOPPER_COMMAND_MODES = (0, 2)
_CRAZY_CLIMBER_MODES = (0, 1, 2, 3)
_CROSSBOW_MODES = (0, 2, 4, 6)
_DEFENDER_MODES = tuple(range(1, 10)) + (16,)
_DEMON_ATTACK_MODES = (1, 3, 5, 7)
_DOUBLE_DUNK_MODES = tuple(range(16))


def _polled_mode(modes: tuple[int, ...], addr: int,
                 presses: int) -> dict[str, Any]:
    """The `set_mode`/`mode_shown` pair of a SELECT loop on byte `addr`."""
    shown = mode_byte_shown(addr)
    return {"modes": modes, "mode_shown": shown,
            "set_mode": select_mode(modes, shown, presses)}


RULES: tuple[GameRules, ...] = (
    make_rules("carnival", "Carnival", _carnival_step,
               minimal_actions=(0, 1, 3, 4, 11, 12), ystart=26, height=214),
    make_rules("casino", "Casino", _casino_step,
               minimal_actions=(0, 1, 2, 5),
               **_polled_mode(_CASINO_MODES, 0xD4, 2),
               difficulties=(0, 1, 2, 3),
               starting_actions=(NOOP,) * 60 + (FIRE, FIRE), paddles=True),
    make_rules("centipede", "Centipede", _centipede_step,
               reset_vars=reset_vars_fn(lives=3),
               **_polled_mode(_CENTIPEDE_MODES, 0xA7, 2)),
    make_rules("chopper_command", "ChopperCommand", _chopper_command_step,
               reset_vars=reset_vars_fn(lives=3),
               **_polled_mode(_CHOPPER_COMMAND_MODES, 0xE0, 2),
               difficulties=(0, 1)),
    make_rules("crazy_climber", "CrazyClimber", _crazy_climber_step,
               minimal_actions=(0, 2, 3, 4, 5, 6, 7, 8, 9),
               reset_vars=reset_vars_fn(lives=5),
               **_polled_mode(_CRAZY_CLIMBER_MODES, 0x80, 2),
               difficulties=(0, 1)),
    make_rules("crossbow", "Crossbow", _crossbow_step,
               modes=_CROSSBOW_MODES,
               set_mode=select_mode(_CROSSBOW_MODES, _crossbow_mode_shown,
                                    2),
               difficulties=(0, 1)),
    make_rules("darkchambers", "Darkchambers", _darkchambers_step,
               starting_actions=(NOOP,) * 486, hmove_blanks=False),
    make_rules("defender", "Defender", _defender_step,
               reset_vars=reset_vars_fn(lives=3),
               **_polled_mode(_DEFENDER_MODES, 0x9B, 2),
               difficulties=(0, 1)),
    make_rules("demon_attack", "DemonAttack", _demon_attack_step,
               minimal_actions=(0, 1, 3, 4, 11, 12),
               reset_vars=reset_vars_fn(lives=4),
               **_polled_mode(_DEMON_ATTACK_MODES, 0xEA, 1),
               difficulties=(0, 1)),
    make_rules("donkey_kong", "DonkeyKong", _donkey_kong_step,
               reset_vars=reset_vars_fn(lives=2)),
    make_rules("double_dunk", "DoubleDunk", _double_dunk_step,
               modes=_DOUBLE_DUNK_MODES, set_mode=_double_dunk_set_mode,
               starting_actions=(UPFIRE,)),
)
