"""ALE's rules for the games whose ROM ids start with m to r.

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
    FIRE, NOOP, UP, VAR_TERMINAL, GameRules, ResetOps, StepResult, bcd,
    bcd_score, byte, check_mode, extra_vars, lives_unless_terminal,
    make_rules, mode_byte_shown, ram_byte, reset_vars_fn, result, select_mode,
    select_until, split_vars)


def _mario_bros_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Mario Bros.: 100 x BCD $8A/$89; lives $87; over when lives are 0."""
    prev, _, aux = split_vars(vars_)
    score = 100 * bcd_score(ram, 0x8A, 0x89)
    lives_var = byte(ram, 0x87)
    terminal = lives_var == 0
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _golf_finish_hole(level: jax.Array, vars_: jax.Array,
                      ) -> tuple[jax.Array, ...]:
    """Miniature Golf, first half of a frame: a change of hole is scored.

    Returns:
        (reward, terminal, hits, hits_at_start): the hole just left scores
        par - strokes when its strokes are positive; a change to hole 0
        ends the game (and stays ended); the stroke counters restart.
    """
    _, _, last_level = split_vars(vars_)
    par, hits, shown_hits, hits_at_start = extra_vars(vars_)
    changed = level != last_level
    strokes = shown_hits + hits - hits_at_start
    reward = jnp.where(changed & (strokes > 0), par - strokes, 0)
    terminal = (vars_[..., VAR_TERMINAL] != 0) | (changed & (level == 0))
    hits = jnp.where(changed, 0, hits)
    hits_at_start = jnp.where(changed, shown_hits, hits_at_start)
    return reward, terminal, hits, hits_at_start


def _miniature_golf_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Miniature Golf: the reward is par minus strokes, paid as a hole ends.

    ALE carries five numbers (no score): the hole (aux slot, from BCD
    $AF), the par, the strokes lost to counter wraps, the stroke counter
    last shown, and that counter when the hole began (extra slots 4-7).
    When the hole byte changes, the hole left scores par - strokes if its
    strokes (shown + wrapped - at start) are positive, and a change to 0
    ends the game for good. Then, if BCD $88 is not 0 (between holes), it
    is the new par; else BCD $87 is the stroke counter, and a drop in it
    is a wrap past 99 that adds the last value to the wrapped strokes.
    Lives are 1 until the game is over (ALE's default).
    """
    level, right, left = bcd(ram, 0xAF), bcd(ram, 0x88), bcd(ram, 0x87)
    reward, terminal, hits, hits_at_start = _golf_finish_hole(level, vars_)
    par, _, shown_hits, _ = extra_vars(vars_)
    between_holes = right != 0
    par = jnp.where(between_holes, right, par)
    wrapped = ~between_holes & (left < shown_hits)
    hits = jnp.where(wrapped, hits + shown_hits, hits)
    shown_hits = jnp.where(between_holes, shown_hits, left)
    lives = jnp.where(terminal, 0, 1)
    return result(reward, terminal, lives, 0, 0, level,
                  extra=(par, hits, shown_hits, hits_at_start))


def _montezuma_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Montezuma's Revenge: BCD score $95/$94/$93; lives ($BA & 7) + 1.

    The game is over when $BA is 0 and $FE reads 0x60.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0x95, 0x94, 0x93)
    lives_byte = byte(ram, 0xBA)
    terminal = (lives_byte == 0) & (byte(ram, 0xFE) == 0x60)
    lives_var = (lives_byte & 0x7) + 1
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _mr_do_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Mr. Do!: 10 x BCD $82/$83; lives $DB; over when $DA reads 0x40."""
    prev, _, aux = split_vars(vars_)
    score = 10 * bcd_score(ram, 0x82, 0x83)
    lives_var = byte(ram, 0xDB)
    terminal = byte(ram, 0xDA) == 0x40
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _ms_pacman_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Ms. Pac-Man: BCD score $F8/$F9/$FA; lives in the low bits of $FB.

    The game is over when the low nibble of $FB is 0 and the death timer
    $A7 reads 0x53.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xF8, 0xF9, 0xFA)
    lives_byte = byte(ram, 0xFB) & 0xF
    terminal = (lives_byte == 0) & (byte(ram, 0xA7) == 0x53)
    lives_var = (lives_byte & 0x7) + 1
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _ms_pacman_mode_shown(ram: np.ndarray, mode: int) -> bool:
    """Ms. Pac-Man: mode 0 is game 1, variation 1 ($99 == 1, $A1 == 1).

    Other modes m want $99 == m and $A1 == 0. SELECT is held 10 frames.
    """
    want = (1, 1) if mode == 0 else (mode, 0)
    return (int(ram[0x19]), int(ram[0x21])) == want


def _name_this_game_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Name This Game: BCD score $C6/$C5/$C4; lives $C7 & 7; over at 0."""
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xC6, 0xC5, 0xC4)
    lives_var = byte(ram, 0xC7) & 0x7
    terminal = lives_var == 0
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _name_this_game_set_mode(ops: ResetOps, mode: int) -> None:
    """Name This Game: SELECT (2 frames) until $DE equals the mode, reset.

    The byte is not the mode once the game is reset, so there is no
    `mode_shown`. The game steps $DE only after SELECT has been pressed
    129 times, so a reset takes 134 presses for mode 8 (130 for 0x18, 132
    for 0x28), and each adds 1 to ALE's frame counters.
    """
    check_mode(mode, _NAME_THIS_GAME_MODES)
    select_until(ops, lambda ram: int(ram[0xDE & 0x7F]) == mode, 2)


def _othello_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Othello: white's discs (BCD $CE) minus black's (BCD $D0).

    The aux slot counts the frames in a row on which the turn byte $C0
    reads 0 (no player to move); the game is over once it exceeds 50.
    Lives are 1 until the game is over (ALE's default).
    """
    prev, lives_var, idle = split_vars(vars_)
    score = bcd(ram, 0xCE) - bcd(ram, 0xD0)
    idle = jnp.where(byte(ram, 0xC0) == 0, idle + 1, 0)
    terminal = idle > 50
    lives = jnp.where(terminal, 0, 1)
    return result(score - prev, terminal, lives, score, lives_var, idle)


def _othello_set_mode(ops: ResetOps, mode: int) -> None:
    """Othello: SELECT (2 frames) until $DE - 1 (a byte) is the mode, reset.

    After the reset the byte no longer shows the mode, so there is no
    `mode_shown`.
    """
    check_mode(mode, _OTHELLO_MODES)
    select_until(ops, lambda ram: (int(ram[0xDE & 0x7F]) - 1) & 0xFF == mode,
                 2)


def _pacman_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Pac-Man: BCD score $CC/$CE/$D0; lives $98 + 1.

    The game is over when lives read 1 and the animation counter $E4
    reads 0x3F.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xCC, 0xCE, 0xD0)
    lives_var = byte(ram, 0x98) + 1
    terminal = (lives_var == 1) & (byte(ram, 0xE4) == 0x3F)
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _pacman_set_mode(ops: ResetOps, mode: int) -> None:
    """Pac-Man: SELECT (2 frames) until a one-player game of the mode shows.

    That is $CC - 1 (a byte) equal to the mode and $E6 equal to 0; then
    the console is reset. $CC is also the low score byte, and reads 0
    after the reset, so there is no `mode_shown`.
    """
    check_mode(mode, _PACMAN_MODES)

    def shown(ram: np.ndarray) -> bool:
        number = (int(ram[0xCC & 0x7F]) - 1) & 0xFF
        return number == mode and int(ram[0xE6 & 0x7F]) == 0

    select_until(ops, shown, 2)


def _phoenix_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Phoenix: 10 x (10 x BCD $C8/$C9 + high nibble of $C7); lives $CB & 7.

    The game is over when $CC reads 0x80.
    """
    prev, _, aux = split_vars(vars_)
    score = 10 * (10 * bcd_score(ram, 0xC8, 0xC9) + (byte(ram, 0xC7) >> 4))
    lives_var = byte(ram, 0xCB) & 0x7
    terminal = byte(ram, 0xCC) == 0x80
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _pitfall_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Pitfall!: BCD score $D7/$D6/$D5, starting from 2000.

    The high nibble of $80 shows the spare lives as tally marks (0xA: two,
    0x8: one); the game is over when it is 0 and the timer byte $9E is not.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0xD7, 0xD6, 0xD5)
    tally = byte(ram, 0x80) >> 4
    terminal = (tally == 0) & (byte(ram, 0x9E) != 0)
    lives_var = jnp.where(tally == 0xA, 3, jnp.where(tally == 0x8, 2, 1))
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _pitfall2_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Pitfall II: BCD score $C9/$C8/$C7, starting from 4000.

    The game has no lives; ALE ends it only when the score reads 199000
    (the highest possible), and lives() is 1 until then.
    """
    prev, lives_var, aux = split_vars(vars_)
    score = bcd_score(ram, 0xC9, 0xC8, 0xC7)
    terminal = score == 199000
    lives = jnp.where(terminal, 0, 1)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _pong_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Pong: score = player ($8E) - CPU ($8D); over at 21; no lives."""
    prev, lives_var, aux = split_vars(vars_)
    cpu, player = byte(ram, 0x8D), byte(ram, 0x8E)
    score = player - cpu
    terminal = (cpu == 21) | (player == 21)
    return result(score - prev, terminal, 0, score, lives_var, aux)


def _pooyan_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Pooyan: BCD score $8A/$89/$88; lives ($96 & 7) + 1.

    The game is over when $96 is 0 and $98 reads 5.
    """
    prev, _, aux = split_vars(vars_)
    score = bcd_score(ram, 0x8A, 0x89, 0x88)
    lives_byte = byte(ram, 0x96)
    terminal = (lives_byte == 0) & (byte(ram, 0x98) == 0x05)
    lives_var = (lives_byte & 0x7) + 1
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _pooyan_set_mode(ops: ResetOps, mode: int) -> None:
    """Pooyan: one SELECT press (2 frames) first, whatever the mode shown.

    Then SELECT (2 frames) until $BD equals the mode, and a reset. After
    the reset $BD reads 0x0A in every mode, so there is no `mode_shown`.
    """
    check_mode(mode, _POOYAN_MODES)
    ops.press_select(2)
    select_until(ops, lambda ram: ram_byte(ram, 0xBD) == mode, 2)


def _private_eye_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Private Eye: BCD score $CA/$C9/$C8, from 1000; lives() is always 0.

    The game is over when the timer byte $C2 is neither 0 (playing) nor 1
    (starting).
    """
    prev, lives_var, aux = split_vars(vars_)
    score = bcd_score(ram, 0xCA, 0xC9, 0xC8)
    timer = byte(ram, 0xC2)
    terminal = (timer != 0x00) & (timer != 0x01)
    return result(score - prev, terminal, 0, score, lives_var, aux)


def _qbert_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Q*bert: lives are counted, not read; no reward once the game is over.

    $88, read as a signed byte, is the lives indicator. The counter (vars
    slot 1, 4 after a reset) drops by one whenever the byte reads exactly
    one less than on the previous frame (aux slot, 2 after a reset). The
    game is over when the byte is 0xFE, or 0x02 right after 0xFF. While it
    is over the reward is 0 and the remembered score stays unchanged.
    """
    prev, counter, last = split_vars(vars_)
    value = byte(ram, 0x88)
    terminal = (value == 0xFE) | ((value == 0x02) & (last == -1))
    signed = jnp.where(value >= 0x80, value - 0x100, value)
    counter = jnp.where(last - 1 == signed, counter - 1, counter)
    current = bcd_score(ram, 0xDB, 0xDA, 0xD9)
    reward = jnp.where(terminal, 0, current - prev)
    score = jnp.where(terminal, prev, current)
    lives = lives_unless_terminal(terminal, counter)
    return result(reward, terminal, lives, score, counter, signed)


def _riverraid_digit(ram: jax.Array, addr: int) -> jax.Array:
    """A River Raid score digit, stored as a digit-sprite offset (8 * d).

    ALE looks the byte up in a map from 0, 8, ..., 72 to 0..9; any other
    value (the blank leading digits) is not in the map and reads as 0.
    """
    value = byte(ram, addr)
    return jnp.where(((value & 7) == 0) & (value <= 72), value >> 3, 0)


def _riverraid_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """River Raid: six digit-sprite offsets; lives from the byte at $C0.

    The aux slot holds the previous $C0 byte (0x58 after a reset). The game
    is over when $C0 goes from 0x59 to 0x58. Lives read 4 while the byte is
    0x58 (a new game), 1 at 0x59, and byte / 8 + 1 otherwise.
    """
    prev, lives_var, last_byte = split_vars(vars_)
    score = jnp.zeros(ram.shape[:-1], jnp.int32)
    for place, addr in enumerate((87, 85, 83, 81, 79, 77)):
        score = score + (10 ** place) * _riverraid_digit(ram, addr)
    lives_byte = byte(ram, 0xC0)
    terminal = (lives_byte == 0x58) & (last_byte == 0x59)
    numeric = jnp.where(lives_byte == 0x58, 4,
                        jnp.where(lives_byte == 0x59, 1, lives_byte // 8 + 1))
    lives = lives_unless_terminal(terminal, numeric)
    return result(score - prev, terminal, lives, score, lives_var, lives_byte)


def _road_runner_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Road Runner: 100 x four digits, the low nibbles of $C9-$CC.

    $C9 is the ones digit. A nibble 0xA is a blank and counts 0; other
    nibbles count their value, 0xB-0xF included. Lives are ($C4 & 7) + 1;
    the game is over when $C4 & 7 is 0 and $B9 or $BD is not 0.
    """
    prev, _, aux = split_vars(vars_)
    score = jnp.zeros(ram.shape[:-1], jnp.int32)
    for place in range(4):
        digit = byte(ram, 0xC9 + place) & 0xF
        score = score + (10 ** place) * jnp.where(digit == 0xA, 0, digit)
    score = 100 * score
    lives_nibble = byte(ram, 0xC4) & 0x7
    moving = (byte(ram, 0xB9) != 0) | (byte(ram, 0xBD) != 0)
    terminal = (lives_nibble == 0) & moving
    lives_var = lives_nibble + 1
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _robotank_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Robotank: 12 x squadrons ($B6) + tanks ($B5) destroyed, in binary.

    Lives are (low nibble of $A8) + 1; the game is over when $A8 is 0 and
    $B4 reads 0xFF.
    """
    prev, _, aux = split_vars(vars_)
    score = 12 * byte(ram, 0xB6) + byte(ram, 0xB5)
    lives_byte = byte(ram, 0xA8)
    terminal = (lives_byte == 0) & (byte(ram, 0xB4) == 0xFF)
    lives_var = (lives_byte & 0xF) + 1
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


_MARIO_BROS_MODES = (0, 2, 4, 6)
_MR_DO_MODES = (0, 1, 2, 3)
_MS_PACMAN_MODES = (0, 1, 2, 3)
_NAME_THIS_GAME_MODES = (0x08, 0x18, 0x28)
_OTHELLO_MODES = (0, 1, 2)
_PACMAN_MODES = tuple(range(8))
_PONG_MODES = (0, 1)
_POOYAN_MODES = (0x0A, 0x1E, 0x32, 0x46)
_PRIVATE_EYE_MODES = tuple(range(5))

# Mr. Do! and Pac-Man are PAL cartridges (Stella's display autodetection
# says so), whose screen Stella makes 250 rows high.
_PAL_HEIGHT = 250

# Mario Bros.: 10 NOOP frames, then FIRE held 7 frames, start the game.
_MARIO_BROS_START = (NOOP,) * 10 + (FIRE,) * 7

RULES: tuple[GameRules, ...] = (
    make_rules("mario_bros", "MarioBros", _mario_bros_step,
               modes=_MARIO_BROS_MODES,
               set_mode=select_mode(_MARIO_BROS_MODES, mode_byte_shown(0x80),
                                    5),
               mode_shown=mode_byte_shown(0x80),
               starting_actions=_MARIO_BROS_START),
    make_rules("miniature_golf", "MiniatureGolf", _miniature_golf_step,
               difficulties=(0, 1)),
    make_rules("montezuma_revenge", "MontezumaRevenge", _montezuma_step,
               reset_vars=reset_vars_fn(lives=6)),
    make_rules("mr_do", "MrDo", _mr_do_step,
               minimal_actions=(0, 1, 2, 3, 4, 5, 10, 11, 12, 13),
               modes=_MR_DO_MODES, reset_vars=reset_vars_fn(lives=4),
               set_mode=select_mode(_MR_DO_MODES, mode_byte_shown(0x80), 5),
               mode_shown=mode_byte_shown(0x80), starting_actions=(FIRE,),
               height=_PAL_HEIGHT),
    make_rules("ms_pacman", "MsPacman", _ms_pacman_step,
               minimal_actions=(0, 2, 3, 4, 5, 6, 7, 8, 9),
               modes=_MS_PACMAN_MODES, reset_vars=reset_vars_fn(lives=3),
               set_mode=select_mode(_MS_PACMAN_MODES, _ms_pacman_mode_shown,
                                    10),
               mode_shown=_ms_pacman_mode_shown, hmove_blanks=False),
    make_rules("name_this_game", "NameThisGame", _name_this_game_step,
               minimal_actions=(0, 1, 3, 4, 11, 12),
               modes=_NAME_THIS_GAME_MODES, reset_vars=reset_vars_fn(lives=3),
               set_mode=_name_this_game_set_mode, difficulties=(0, 1)),
    make_rules("othello", "Othello", _othello_step,
               minimal_actions=tuple(range(10)), modes=_OTHELLO_MODES,
               set_mode=_othello_set_mode, difficulties=(0, 2)),
    make_rules("pacman", "Pacman", _pacman_step,
               minimal_actions=(0, 2, 3, 4, 5), modes=_PACMAN_MODES,
               reset_vars=reset_vars_fn(lives=4), set_mode=_pacman_set_mode,
               difficulties=(0, 1), height=_PAL_HEIGHT),
    make_rules("phoenix", "Phoenix", _phoenix_step,
               minimal_actions=(0, 1, 3, 4, 5, 11, 12, 13),
               reset_vars=reset_vars_fn(lives=5)),
    make_rules("pitfall", "Pitfall", _pitfall_step,
               reset_vars=reset_vars_fn(score=2000, lives=3),
               starting_actions=(UP,)),
    make_rules("pitfall2", "Pitfall2", _pitfall2_step,
               reset_vars=reset_vars_fn(score=4000, lives=1),
               starting_actions=(UP,)),
    make_rules("pong", "Pong", _pong_step,
               minimal_actions=(0, 1, 3, 4, 11, 12), modes=_PONG_MODES,
               set_mode=select_mode(_PONG_MODES, mode_byte_shown(0x96), 2),
               mode_shown=mode_byte_shown(0x96),
               difficulties=(0, 1, 2, 3), paddles=True, swap_paddles=True),
    make_rules("pooyan", "Pooyan", _pooyan_step,
               minimal_actions=(0, 1, 2, 5, 10, 13), modes=_POOYAN_MODES,
               reset_vars=reset_vars_fn(lives=3), set_mode=_pooyan_set_mode,
               ystart=26, height=220),
    make_rules("private_eye", "PrivateEye", _private_eye_step,
               modes=_PRIVATE_EYE_MODES, reset_vars=reset_vars_fn(score=1000),
               set_mode=select_mode(_PRIVATE_EYE_MODES, mode_byte_shown(0x80),
                                    2),
               mode_shown=mode_byte_shown(0x80), difficulties=(0, 1, 2, 3),
               starting_actions=(UP,)),
    make_rules("qbert", "Qbert", _qbert_step,
               minimal_actions=(0, 1, 2, 3, 4, 5),
               reset_vars=reset_vars_fn(lives=4, aux=2),
               difficulties=(0, 1), ystart=40),
    make_rules("riverraid", "Riverraid", _riverraid_step,
               reset_vars=reset_vars_fn(aux=0x58), difficulties=(0, 1)),
    make_rules("road_runner", "RoadRunner", _road_runner_step,
               reset_vars=reset_vars_fn(lives=3)),
    make_rules("robotank", "Robotank", _robotank_step,
               reset_vars=reset_vars_fn(lives=4)),
)
