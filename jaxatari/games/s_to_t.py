"""ALE's rules for the games whose ROM ids start with s or t.

One `step` per game, restating `src/ale/games/supported/<Game>.cpp` of
ale-py 0.12.1 (see `jaxatari.games.core` for the conventions), and the
game's `GameRules` in `RULES`. Comments give RAM addresses as CPU
addresses.

Games whose `RomSettings` keep no lives member report ALE's default
`lives()`: 1 while the game runs, 0 once it is over.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari.games.core import (
    DOWN, FIRE, LEFT, RESET, VAR_TERMINAL, GameRules, ResetOps, StepFn,
    StepResult, bcd, bcd_score, byte, check_mode, extra_vars,
    lives_unless_terminal, make_rules, mode_byte_shown, ram_byte,
    reset_vars_fn, result, select_mode, select_until, split_vars)

# Stella detects PAL for these cartridges and shows 250 rows, not 210.
_PAL_HEIGHT = 250
# Skiing's `isLegal` refuses every action with FIRE.
_SKIING_LEGAL_ACTIONS = (0, 2, 3, 4, 5, 6, 7, 8, 9)


def _default_lives(terminal: jax.Array) -> jax.Array:
    """ALE's base `lives()`: 1 while the game runs, 0 once it is over."""
    return jnp.where(terminal, 0, 1)


def _seaquest_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Seaquest: BCD score $BA/$B9/$B8; lives $BB + 1; over when $A3 != 0."""
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xBA, 0xB9, 0xB8)
    terminal = byte(ram, 0xA3) != 0
    lives_var = byte(ram, 0xBB) + 1
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _sir_lancelot_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Sir Lancelot: BCD score $A0/$9F/$9E (lowest byte first); lives $A9.

    The game is over when the lives byte is 0 and $A7 reads 0xA0.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xA0, 0x9F, 0x9E)
    lives_var = byte(ram, 0xA9)
    terminal = (lives_var == 0) & (byte(ram, 0xA7) == 0xA0)
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _skiing_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Skiing: the score is the elapsed time; the reward is its negative.

    Time = 6000 x minutes ($E8, binary) + BCD centiseconds $EA/$E9 (lowest
    byte first); the reward is the previous time minus this frame's. The
    run is over when $91 reads 0xFF. No lives (`lives()` is always 0).
    """
    prev, lives_var, aux = split_vars(vars_)
    time = 6000 * byte(ram, 0xE8) + bcd_score(ram, 0xEA, 0xE9)
    terminal = byte(ram, 0x91) == 0xFF
    return result(prev - time, terminal, 0, time, lives_var, aux)


def _solaris_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Solaris: 10 x BCD score $DC/$DD/$DE (lowest byte first).

    Lives are the low nibble of $D9; the game is over when $D9 is 0.
    """
    prev, _, aux = split_vars(vars_)
    score = 10 * bcd_score(ram, 0xDC, 0xDD, 0xDE)
    lives_byte = byte(ram, 0xD9)
    terminal = lives_byte == 0
    lives_var = lives_byte & 0xF
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


def _space_war_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Space War: the score is $A7 read as BCD (the byte that shows the game
    number while SELECT is pressed).

    The game is over when that score reads 10 or the timer $80 is 0.
    Lives are ALE's default (1, 0 once over).
    """
    prev, lives_var, aux = split_vars(vars_)
    score = bcd(ram, 0xA7)
    terminal = (score == 10) | (byte(ram, 0x80) == 0)
    return result(score - prev, terminal, _default_lives(terminal), score,
                  lives_var, aux)


def _space_war_set_mode(ops: ResetOps, mode: int) -> None:
    """Space War's `setMode`: SELECT (2 frames) until BCD $A7 == mode.

    Then the console is reset, which clears $A7 again, so the post-reset
    RAM does not show the mode (hence no `mode_shown`).
    """
    check_mode(mode, _SPACE_WAR_MODES)
    select_until(ops, lambda ram: _bcd_byte(ram, 0xA7) == mode, 2)


def _bcd_byte(ram: np.ndarray, addr: int) -> int:
    """`getDecimalScore(addr)`: one RAM byte read as BCD (numpy or JAX)."""
    value = ram_byte(ram, addr)
    return 10 * (value >> 4) + (value & 0xF)


def _star_gunner_digit(ram: jax.Array, addr: int) -> jax.Array:
    """A Star Gunner score digit: the low nibble, with 10 (blank) read as 0."""
    digit = byte(ram, addr) & 0xF
    return jnp.where(digit == 10, 0, digit)


def _star_gunner_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Star Gunner: four digits in the low nibbles of $83..$86, times 100.

    A digit nibble of 10 reads as 0. The game is over when the lives byte
    $87 is 0. The aux slot is the "started" flag, set once $87 reads 5;
    until then lives read 5, afterwards the low nibble of $87.
    """
    prev, _, started = split_vars(vars_)
    score = jnp.zeros(ram.shape[:-1], jnp.int32)
    for place, addr in enumerate((0x83, 0x84, 0x85, 0x86)):
        score = score + (10 ** place) * _star_gunner_digit(ram, addr)
    score = 100 * score
    lives_byte = byte(ram, 0x87)
    terminal = lives_byte == 0
    started = (started != 0) | (lives_byte == 5)
    lives_var = jnp.where(started, lives_byte & 0xF, 5)
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, started)


def _superman_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Superman: one reward, at the end, for the time left of 99:59.

    The clock is BCD minutes $E3 and BCD seconds $E2; slot 0 keeps it in
    seconds (`m_time_in_seconds`). The game is over when Superman is
    Clark Kent (bit 6 of $9F) in the room whose address ($80 low, $81
    high) is 0xF2AC; on such frames the reward is 5999 - seconds, else 0.
    Lives are ALE's default (1, 0 once over).
    """
    _, lives_var, aux = split_vars(vars_)
    seconds = 60 * bcd(ram, 0xE3) + bcd(ram, 0xE2)
    room = byte(ram, 0x80) + (byte(ram, 0x81) << 8)
    is_clark_kent = (byte(ram, 0x9F) & 0x40) != 0
    terminal = is_clark_kent & (room == 0xF2AC)
    reward = jnp.where(terminal, 99 * 60 + 59 - seconds, 0)
    return result(reward, terminal, _default_lives(terminal), seconds,
                  lives_var, aux)


def _surround_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Surround: score = mine (BCD $F7) - theirs (BCD $F6); over at 10.

    Lives are ALE's default (1, 0 once over).
    """
    prev, lives_var, aux = split_vars(vars_)
    theirs, mine = bcd(ram, 0xF6), bcd(ram, 0xF7)
    score = mine - theirs
    terminal = (theirs == 10) | (mine == 10)
    return result(score - prev, terminal, _default_lives(terminal), score,
                  lives_var, aux)


def _tennis_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Tennis: rewards from changes of two differences; no lives.

    Games won in the set are $C7 (mine) and $C8 (theirs), points in the
    game $C5 and $C6, all binary (ALE calls them points and score). The
    aux slot is the game difference of the previous frame, extra slot 4
    the point difference (ALE's `m_prev_delta_points`/`_score`, 0 after a
    reset). The reward is the change of the game difference if it
    changed, else the change of the point difference. The match is over
    when a player with 6 or more games leads by 2, or has 7 games.
    """
    score, lives_var, prev_games = split_vars(vars_)
    prev_points = extra_vars(vars_)[0]
    my_games, their_games = byte(ram, 0xC7), byte(ram, 0xC8)
    games = my_games - their_games
    points = byte(ram, 0xC5) - byte(ram, 0xC6)
    reward = jnp.where(games != prev_games, games - prev_games,
                       jnp.where(points != prev_points,
                                 points - prev_points, 0))
    terminal = (((my_games >= 6) & (games >= 2))
                | ((their_games >= 6) & (-games >= 2))
                | (my_games == 7) | (their_games == 7))
    return result(reward, terminal, 0, score, lives_var, games,
                  extra=(points,))


def _tetris_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Tetris: BCD score $F1/$F2 (lowest byte first); only rises reward.

    The reward is the score's rise, 0 when it fell or stayed. The game is
    over when bit 7 of $F3 is set; then the remembered score becomes 0
    (and the aux slot, the "started" flag, is cleared; it is set again on
    every frame before the test, so it never matters). No lives.
    """
    prev, lives_var, _ = split_vars(vars_)
    score = bcd_score(ram, 0xF1, 0xF2)
    reward = jnp.where(score > prev, score - prev, 0)
    terminal = (byte(ram, 0xF3) & 0x80) != 0
    score = jnp.where(terminal, 0, score)
    return result(reward, terminal, 0, score, lives_var, ~terminal)


def _tic_tac_toe_3d_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """3-D Tic-Tac-Toe: +1 for a win, -1 for a loss, and over for good.

    A game has ended on a frame where $FF/$FE (high/low) read 0xF310: the
    reward is +1 if $E1 reads 0x08, else -1. The game is also over once
    the 64 cells $9A..$D9 are all non-zero. The terminal flag, once set,
    stays set (ALE never clears it before a reset). Lives are ALE's
    default (1, 0 once over).
    """
    _, lives_var, aux = split_vars(vars_)
    was_over = jnp.asarray(vars_)[..., VAR_TERMINAL] != 0
    ended = (byte(ram, 0xFF) == 0xF3) & (byte(ram, 0xFE) == 0x10)
    reward = jnp.where(ended, jnp.where(byte(ram, 0xE1) == 0x08, 1, -1), 0)
    grid = ram[..., 0x9A & 0x7F:(0xD9 & 0x7F) + 1]
    full = jnp.all(grid != 0, axis=-1)
    terminal = was_over | ended | full
    return result(reward, terminal, _default_lives(terminal), 0, lives_var,
                  aux)


def _time_pilot_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Time Pilot: 100 x BCD score $8D/$8F (lowest byte first).

    The game is over when $A0 is non-zero. Lives are taken as (low 3 bits
    of $8B) + 1 only on frames where the low nibble of $80 reads 2;
    otherwise the last value is kept (5 after a reset).
    """
    prev, lives_var, aux = split_vars(vars_)
    score = 100 * bcd_score(ram, 0x8D, 0x8F)
    terminal = byte(ram, 0xA0) != 0
    on_screen = (byte(ram, 0x80) & 0xF) == 2
    lives_var = jnp.where(on_screen, (byte(ram, 0x8B) & 0x7) + 1, lives_var)
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _trondead_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """TRON Deadly Discs: BCD score $BF/$BE/$BD (lowest byte first).

    $C8 counts the hits taken: lives are 5 - hits (negative for a poked
    count above 5) and the game is over at exactly 5 hits.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xBF, 0xBE, 0xBD)
    hits = byte(ram, 0xC8)
    terminal = hits == 5
    lives_var = 5 - hits
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _turmoil_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Turmoil: 10 x (BCD $89/$8A, lowest byte first, plus binary $D3).

    Lives are $B9; the game is over when they are 0 and $C5 reads 1.
    """
    prev, _, aux = split_vars(vars_)
    score = 10 * (bcd_score(ram, 0x89, 0x8A) + byte(ram, 0xD3))
    lives_var = byte(ram, 0xB9)
    terminal = (lives_var == 0) & (byte(ram, 0xC5) == 0x01)
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _turmoil_set_mode(ops: ResetOps, mode: int) -> None:
    """Turmoil's `setMode`: SELECT (2 frames) until $EA == mode, then reset.

    The reset leaves $EA at mode - 1 (0xFF for mode 0), so the post-reset
    RAM does not show the polled value (hence no `mode_shown`).
    """
    check_mode(mode, _TURMOIL_MODES)
    select_until(ops, lambda ram: int(ram[0xEA & 0x7F]) == mode, 2)


def _tutankham_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Tutankham: BCD score $9C/$9A (lowest byte first).

    Lives are the low 2 bits of $9E; the game is over when $9E is 0 and
    $81 does not read 0x84.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0x9C, 0x9A)
    lives_byte = byte(ram, 0x9E)
    terminal = (lives_byte == 0) & (byte(ram, 0x81) != 0x84)
    lives_var = lives_byte & 0x3
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


_SPACE_INVADERS_MODES = tuple(range(16))
_SPACE_WAR_MODES = tuple(range(6, 18))
_STAR_GUNNER_MODES = (0, 1, 2, 3)
_SURROUND_MODES = (0, 2)
_TENNIS_MODES = (0, 2)
_TIC_TAC_TOE_3D_MODES = tuple(range(9))
_TURMOIL_MODES = tuple(range(9))
_TUTANKHAM_MODES = (0, 4, 8, 12)
_ALL_BUT_FIRE_DIAGONALS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9)


def _polled_mode(game: str, ale_name: str, step: StepFn,
                 modes: tuple[int, ...], addr: int, presses: int,
                 offset: int = 0, **kwargs: Any) -> GameRules:
    """`make_rules` for a game whose `setMode` is a plain SELECT loop.

    ALE presses SELECT (`presses` frames each) until the byte at `addr`
    reads `mode + offset`, then resets the console.
    """
    shown = mode_byte_shown(addr, offset)
    return make_rules(game, ale_name, step, modes=modes,
                      set_mode=select_mode(modes, shown, presses),
                      mode_shown=shown, **kwargs)


RULES: tuple[GameRules, ...] = (
    make_rules("seaquest", "Seaquest", _seaquest_step,
               reset_vars=reset_vars_fn(lives=4), difficulties=(0, 1)),
    make_rules("sir_lancelot", "SirLancelot", _sir_lancelot_step,
               minimal_actions=(0, 1, 3, 4, 11, 12),
               reset_vars=reset_vars_fn(lives=3),
               starting_actions=(RESET, LEFT), height=_PAL_HEIGHT),
    make_rules("skiing", "Skiing", _skiing_step, minimal_actions=(0, 3, 4),
               starting_actions=(DOWN,) * 16,
               legal_actions=_SKIING_LEGAL_ACTIONS),
    make_rules("solaris", "Solaris", _solaris_step,
               reset_vars=reset_vars_fn(lives=3)),
    _polled_mode("space_invaders", "SpaceInvaders", _space_invaders_step,
                 _SPACE_INVADERS_MODES, 0xDC, 2,
                 minimal_actions=(0, 1, 3, 4, 11, 12),
                 reset_vars=reset_vars_fn(lives=3), difficulties=(0, 1)),
    make_rules("space_war", "SpaceWar", _space_war_step,
               modes=_SPACE_WAR_MODES, set_mode=_space_war_set_mode,
               height=_PAL_HEIGHT),
    _polled_mode("star_gunner", "StarGunner", _star_gunner_step,
                 _STAR_GUNNER_MODES, 0xF4, 15,
                 reset_vars=reset_vars_fn(lives=5)),
    make_rules("superman", "Superman", _superman_step,
               difficulties=(0, 1, 2, 3)),
    _polled_mode("surround", "Surround", _surround_step, _SURROUND_MODES,
                 0xF9, 2, offset=1, minimal_actions=(0, 2, 3, 4, 5),
                 difficulties=(0, 1, 2, 3), swap_ports=True),
    _polled_mode("tennis", "Tennis", _tennis_step, _TENNIS_MODES, 0x80, 2,
                 difficulties=(0, 1, 2, 3)),
    make_rules("tetris", "Tetris", _tetris_step,
               minimal_actions=(0, 1, 3, 4, 5)),
    _polled_mode("tic_tac_toe_3d", "TicTacToe3D", _tic_tac_toe_3d_step,
                 _TIC_TAC_TOE_3D_MODES, 0x88, 2,
                 minimal_actions=_ALL_BUT_FIRE_DIAGONALS,
                 difficulties=(0, 2)),
    make_rules("time_pilot", "TimePilot", _time_pilot_step,
               minimal_actions=(0, 1, 2, 3, 4, 5, 10, 11, 12, 13),
               reset_vars=reset_vars_fn(lives=5), difficulties=(0, 1, 2)),
    make_rules("trondead", "Trondead", _trondead_step,
               reset_vars=reset_vars_fn(lives=5), difficulties=(0, 1)),
    make_rules("turmoil", "Turmoil", _turmoil_step,
               minimal_actions=(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12),
               modes=_TURMOIL_MODES, set_mode=_turmoil_set_mode,
               reset_vars=reset_vars_fn(lives=4), starting_actions=(FIRE,)),
    _polled_mode("tutankham", "Tutankham", _tutankham_step,
                 _TUTANKHAM_MODES, 0xAB, 2,
                 minimal_actions=(0, 2, 3, 4, 5, 10, 11, 12),
                 reset_vars=reset_vars_fn(lives=3)),
)
