"""ALE's rules for the games whose ROM ids start with u to z.

One `step` per game, restating `src/ale/games/supported/<Game>.cpp` of
ale-py 0.12.1 (see `jaxatari.games.core` for the conventions), and the
game's `GameRules` in `RULES`. Comments give RAM addresses as CPU
addresses.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari.games.core import (
    FIRE, NOOP, RIGHT, VAR_TERMINAL, GameRules, ResetOps, StepResult, bcd,
    bcd_score, byte, check_mode, lives_unless_terminal, make_rules,
    mode_byte_shown, ram_byte, reset_vars_fn, result, select_mode,
    select_until, split_vars)


def _last_terminal(vars_: jax.Array) -> jax.Array:
    """The `m_terminal` kept from the previous frame, as bool."""
    return jnp.asarray(vars_, jnp.int32)[..., VAR_TERMINAL] != 0


def _signed(value: jax.Array) -> jax.Array:
    """A RAM byte read as a signed char."""
    return jnp.where(value >= 0x80, value - 0x100, value)


def _up_n_down_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Up'n Down: BCD score $82/$81/$80; lives (low nibble of $86) + 1.

    The game is over when that nibble is 0 and the death timer $94 is
    above 0x40.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0x82, 0x81, 0x80)
    lives_byte = byte(ram, 0x86) & 0xF
    terminal = (byte(ram, 0x94) > 0x40) & (lives_byte == 0)
    lives_var = lives_byte + 1
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _venture_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Venture: 100 x BCD $C8/$C7; lives (low 3 bits of $C6) + 1.

    The game is over when $C6 is 0, the sound byte $CD reads 0xFF and bit
    7 of $BF is set.
    """
    prev, _, aux = split_vars(vars_)
    score = 100 * bcd_score(ram, 0xC8, 0xC7)
    lives_byte = byte(ram, 0xC6)
    terminal = ((lives_byte == 0) & (byte(ram, 0xCD) == 0xFF)
                & ((byte(ram, 0xBF) & 0x80) != 0))
    lives_var = (lives_byte & 0x7) + 1
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


# The 32 dark squares of the checkerboard, in RAM ($80-$87, $89-$90,
# $92-$99, $9B-$A2).
_CHECKERS_SQUARES = np.array(
    [a & 0x7F for first in (0x80, 0x89, 0x92, 0x9B)
     for a in range(first, first + 8)])


def _video_checkers_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Video Checkers: +-1 when one side has no pieces left; no score.

    A square byte of 0x10 or 0x20 is a black piece (the player's), 0x90 or
    0xA0 a white one. With no black pieces the reward is -1, else with no
    white pieces +1, both negated in reverse checkers (games 11-19), and
    the game is over. Otherwise the reward is left as it was on the
    previous frame (aux slot) and so is the game-over flag: ALE only ever
    sets them. `lives()` is 1 until the game is over.

    ALE remembers "reverse checkers" from the mode asked for in
    `setMode`, which the carried state cannot see; bit 4 of $B0 stands in
    for it (set in games 11-19, clear in games 1-9, on every frame of
    ale-py play in every mode).
    """
    _, lives_var, last_reward = split_vars(vars_)
    squares = ram[..., _CHECKERS_SQUARES].astype(jnp.int32)
    black = ((squares == 0x10) | (squares == 0x20)).sum(-1)
    white = ((squares == 0x90) | (squares == 0xA0)).sum(-1)
    win = jnp.where((byte(ram, 0xB0) & 0x10) != 0, -1, 1)
    reward = jnp.where(black == 0, -win,
                       jnp.where(white == 0, win, last_reward))
    terminal = _last_terminal(vars_) | (black == 0) | (white == 0)
    lives = jnp.where(terminal, 0, 1)
    return result(reward, terminal, lives, 0, lives_var, reward)


def _video_checkers_stored(mode: int) -> int:
    """The $F6 value of a Video Checkers mode: games 11-19 read 17-25."""
    return mode + 6 if mode >= 11 else mode


def _video_checkers_shown(ram: np.ndarray, mode: int) -> bool:
    """Video Checkers: $F6 holds the game number (11-19 stored as 17-25)."""
    return int(ram[0xF6 & 0x7F]) == _video_checkers_stored(mode)


def _video_chess_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Video Chess: +1 for mating black, -1 for being mated; no score.

    Only on white's turn ($E1 == 0x82) is the mate byte $EE looked at: 0
    means black is mated (+1, game over), 1 white (-1, game over). The
    reward is 0 on every other frame; the game-over flag, once set, stays
    set. `lives()` is ALE's constant `m_lives` of 1 until the game is over.
    """
    _, _, aux = split_vars(vars_)
    white_turn = byte(ram, 0xE1) == 0x82
    mate = byte(ram, 0xEE)
    black_mated = white_turn & (mate == 0)
    white_mated = white_turn & (mate == 1)
    reward = black_mated.astype(jnp.int32) - white_mated.astype(jnp.int32)
    terminal = _last_terminal(vars_) | black_mated | white_mated
    lives = jnp.where(terminal, 0, 1)
    return result(reward, terminal, lives, 0, 1, aux)


def _video_cube_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Video Cube: the reward is the change in completed cube faces.

    $A0-$D5 hold the six faces, 9 colour bytes each; a face is complete
    when its 9 bytes are equal. The score slot holds the completed faces
    of the previous frame, the aux slot the previous value of the timer
    $DB. When the timer goes from 0xFF to 0 (the computer takes over) the
    reward is -1 instead and the game is over; it is also over when all
    six faces are complete. `lives()` is 1 until the game is over.

    ALE does not clear the remembered timer in `reset()`; here a reset
    sets it to 0, which differs only if $DB read 0xFF on the last frame
    before ALE's `reset()` and 0 on the next.
    """
    prev_faces, lives_var, last_timer = split_vars(vars_)
    blocks = ram[..., 0x20:0x56].astype(jnp.int32)
    faces = blocks.reshape(blocks.shape[:-1] + (6, 9))
    complete = (faces == faces[..., :1]).all(-1).sum(-1).astype(jnp.int32)
    timer = byte(ram, 0xDB)
    timed_out = (timer == 0) & (last_timer == 0xFF)
    reward = jnp.where(timed_out, -1, complete - prev_faces)
    terminal = timed_out | (complete == 6)
    lives = jnp.where(terminal, 0, 1)
    return result(reward, terminal, lives, complete, lives_var, timer)


_VIDEO_CUBE_MODES = tuple(100 * cube + game for cube in range(51)
                          for game in range(3))
"""Video Cube modes: 100 x cube number (0 or 1: cube 1) + game index."""

_VIDEO_CUBE_GAMES = (1, 3, 9)
"""The game number (selected by SELECT) of each game index."""

_VIDEO_CUBE_MAX_ACTS = 2000
"""Safety stop for the RIGHT loop; cube 50 takes 783 (ALE loops forever)."""


def _video_cube_set_mode(ops: ResetOps, mode: int) -> None:
    """Video Cube: select the game, reset, then pick the cube with RIGHT.

    SELECT (2 frames a press) until the low 5 bits of $FB equal the game
    number - 1, a console reset, then one `act(RIGHT)` at a time until
    BCD $9F shows the cube number (mode // 100, or 1 below mode 100).

    Raises:
        ValueError: for a mode ALE does not list.
        RuntimeError: if the cube never shows up in RAM.
    """
    check_mode(mode, _VIDEO_CUBE_MODES)
    cube = mode // 100 if mode >= 100 else 1
    wanted = _VIDEO_CUBE_GAMES[mode % 100] - 1
    select_until(ops, lambda ram: (int(ram[0xFB & 0x7F]) & 0x1F) == wanted,
                 2)
    for _ in range(_VIDEO_CUBE_MAX_ACTS):
        shown = int(np.asarray(ops.ram())[0x9F & 0x7F])
        if 10 * (shown >> 4) + (shown & 0xF) == cube:
            return
        ops.act(RIGHT)
    raise RuntimeError("Video Cube never showed the requested cube")


def _video_pinball_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Video Pinball: BCD score $B0/$B2/$B4; over when bit 0 of $AF is set.

    Lives are 4 + (bit 0 of $A8, the extra ball) - (low 3 bits of $99,
    the balls played).
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xB0, 0xB2, 0xB4)
    terminal = (byte(ram, 0xAF) & 0x1) != 0
    lives_var = 4 + (byte(ram, 0xA8) & 0x1) - (byte(ram, 0x99) & 0x7)
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _wizard_of_wor_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Wizard of Wor: 100 x BCD $86/$88, less 8000 when that is >= 8000.

    The lives (low nibble of $8D) are taken only on frames where bit 0 of
    $D7 is clear; otherwise the lives of the previous frame stay (slot 1,
    3 after a reset). The game is over when the nibble is 0 and $F4 reads
    0xF8.
    """
    prev, lives_var, aux = split_vars(vars_)
    digits = bcd_score(ram, 0x86, 0x88)
    score = 100 * jnp.where(digits >= 8000, digits - 8000, digits)
    new_lives = byte(ram, 0x8D) & 0xF
    terminal = (new_lives == 0) & (byte(ram, 0xF4) == 0xF8)
    waiting = (byte(ram, 0xD7) & 0x1) == 0
    lives_var = jnp.where(waiting, new_lives, lives_var)
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _word_zapper_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Word Zapper: score 2 - $DC (signed), taken only while the clock runs.

    On frames where the wall clock (BCD $CF) is above 0, the score is 2
    minus $DC read as a signed byte, the reward its change, and the game
    is over when the score is 3 or the time left (BCD $DE) is 0. On other
    frames ALE changes nothing: the previous frame's reward (aux slot),
    score and game-over flag stay. `lives()` is 1 until the game is over.
    """
    prev, lives_var, last_reward = split_vars(vars_)
    running = bcd(ram, 0xCF) > 0
    current = 2 - _signed(byte(ram, 0xDC))
    ended = (current == 3) | (bcd(ram, 0xDE) == 0)
    reward = jnp.where(running, current - prev, last_reward)
    score = jnp.where(running, current, prev)
    terminal = jnp.where(running, ended, _last_terminal(vars_))
    lives = jnp.where(terminal, 0, 1)
    return result(reward, terminal, lives, score, lives_var, reward)


def _yars_revenge_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Yars' Revenge: BCD score $E2/$E1/$E0; lives $9E >> 4; over at 0."""
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xE2, 0xE1, 0xE0)
    lives_var = byte(ram, 0x9E) >> 4
    terminal = lives_var == 0
    return result(score - prev, terminal, lives_var, score, lives_var, aux)


_YARS_REVENGE_MODES = (0, 0x20, 0x40, 0x60)


def _yars_revenge_shown(ram: np.ndarray, mode: int) -> bool:
    """Yars' Revenge: $E3 holds the mode (0, 0x20, 0x40 or 0x60).

    Only while SELECT is pressed: after the reset it reads 0x40 in every
    mode, so the rules have no `mode_shown`.
    """
    return ram_byte(ram, 0xE3) == mode


def _yars_revenge_set_mode(ops: ResetOps, mode: int) -> None:
    """Yars' Revenge: one 2-frame SELECT press, then 1-frame presses.

    After the first press (made whatever the mode), SELECT is pressed for
    1 frame until $E3 shows the mode, then the console is reset. In the
    default mode this makes 7 presses, which is why ALE's frame counter
    reads 7 after a reset.
    """
    check_mode(mode, _YARS_REVENGE_MODES)
    ops.press_select(2)
    select_until(ops, lambda ram: _yars_revenge_shown(ram, mode), 1)


def _zaxxon_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Zaxxon: 100 x BCD $E9/$E8; lives low 3 bits of $EA; over at 0."""
    prev, _, aux = split_vars(vars_)
    score = 100 * bcd_score(ram, 0xE9, 0xE8)
    lives_var = byte(ram, 0xEA) & 0x7
    terminal = lives_var == 0
    return result(score - prev, terminal, lives_var, score, lives_var, aux)


_VIDEO_CHECKERS_MODES = tuple(range(1, 10)) + tuple(range(11, 20))
_VIDEO_CHESS_MODES = (0, 1, 2, 3, 4)
_VIDEO_PINBALL_MODES = (0, 2)
_WORD_ZAPPER_MODES = tuple(range(24))
_ZAXXON_MODES = (0, 8, 16, 24)
_ALL_DIFFICULTIES = (0, 1, 2, 3)

RULES: tuple[GameRules, ...] = (
    make_rules("up_n_down", "UpNDown", _up_n_down_step,
               minimal_actions=(0, 1, 2, 5, 10, 13),
               reset_vars=reset_vars_fn(lives=5),
               difficulties=_ALL_DIFFICULTIES, starting_actions=(FIRE,),
               ystart=30),
    make_rules("venture", "Venture", _venture_step,
               reset_vars=reset_vars_fn(lives=4),
               difficulties=_ALL_DIFFICULTIES),
    make_rules("video_checkers", "VideoCheckers", _video_checkers_step,
               minimal_actions=(1, 6, 7, 8, 9), modes=_VIDEO_CHECKERS_MODES,
               set_mode=select_mode(_VIDEO_CHECKERS_MODES,
                                    _video_checkers_shown, 1),
               mode_shown=_video_checkers_shown),
    make_rules("video_chess", "VideoChess", _video_chess_step,
               minimal_actions=tuple(range(10)), modes=_VIDEO_CHESS_MODES,
               reset_vars=reset_vars_fn(lives=1),
               set_mode=select_mode(_VIDEO_CHESS_MODES,
                                    mode_byte_shown(0xEA), 1),
               mode_shown=mode_byte_shown(0xEA)),
    make_rules("video_cube", "VideoCube", _video_cube_step,
               modes=_VIDEO_CUBE_MODES, set_mode=_video_cube_set_mode,
               difficulties=(0, 1),
               starting_actions=(NOOP,) * 61 + (FIRE, NOOP, NOOP)),
    # $C1 counts the SELECT presses but reads 0 again after the reset, so
    # it is no `mode_shown` (the tests check this loop themselves).
    make_rules("video_pinball", "VideoPinball", _video_pinball_step,
               minimal_actions=(0, 1, 2, 3, 4, 5, 10, 11, 12),
               modes=_VIDEO_PINBALL_MODES, reset_vars=reset_vars_fn(lives=3),
               set_mode=select_mode(_VIDEO_PINBALL_MODES,
                                    mode_byte_shown(0xC1), 2),
               difficulties=(0, 1)),
    make_rules("wizard_of_wor", "WizardOfWor", _wizard_of_wor_step,
               minimal_actions=(0, 1, 2, 3, 4, 5, 10, 11, 12, 13),
               reset_vars=reset_vars_fn(lives=3), difficulties=(0, 1),
               swap_ports=True),
    make_rules("word_zapper", "WordZapper", _word_zapper_step,
               modes=_WORD_ZAPPER_MODES,
               set_mode=select_mode(_WORD_ZAPPER_MODES,
                                    mode_byte_shown(0xDB), 2),
               mode_shown=mode_byte_shown(0xDB),
               difficulties=_ALL_DIFFICULTIES,
               starting_actions=(NOOP,) * 486 + (FIRE, NOOP, NOOP)),
    make_rules("yars_revenge", "YarsRevenge", _yars_revenge_step,
               modes=_YARS_REVENGE_MODES, reset_vars=reset_vars_fn(lives=4),
               set_mode=_yars_revenge_set_mode, difficulties=(0, 1),
               starting_actions=(FIRE,)),
    make_rules("zaxxon", "Zaxxon", _zaxxon_step, modes=_ZAXXON_MODES,
               reset_vars=reset_vars_fn(lives=5),
               set_mode=select_mode(_ZAXXON_MODES, mode_byte_shown(0x82),
                                    10),
               mode_shown=mode_byte_shown(0x82)),
)
