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
    GameRules, StepResult, UP, bcd_score, byte, lives_unless_terminal,
    make_rules, mode_byte_shown, reset_vars_fn, result, select_mode,
    split_vars)

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


def _pong_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Pong: score = player ($8E) - CPU ($8D); over at 21; no lives."""
    prev, lives_var, aux = split_vars(vars_)
    cpu, player = byte(ram, 0x8D), byte(ram, 0x8E)
    score = player - cpu
    terminal = (cpu == 21) | (player == 21)
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


_MS_PACMAN_MODES = (0, 1, 2, 3)
_PONG_MODES = (0, 1)

RULES: tuple[GameRules, ...] = (
    make_rules("montezuma_revenge", "MontezumaRevenge", _montezuma_step,
               reset_vars=reset_vars_fn(lives=6)),
    make_rules("ms_pacman", "MsPacman", _ms_pacman_step,
               minimal_actions=(0, 2, 3, 4, 5, 6, 7, 8, 9),
               modes=_MS_PACMAN_MODES, reset_vars=reset_vars_fn(lives=3),
               set_mode=select_mode(_MS_PACMAN_MODES, _ms_pacman_mode_shown,
                                    10),
               mode_shown=_ms_pacman_mode_shown, hmove_blanks=False),
    make_rules("pitfall", "Pitfall", _pitfall_step,
               reset_vars=reset_vars_fn(score=2000, lives=3),
               starting_actions=(UP,)),
    make_rules("pong", "Pong", _pong_step,
               minimal_actions=(0, 1, 3, 4, 11, 12), modes=_PONG_MODES,
               set_mode=select_mode(_PONG_MODES, mode_byte_shown(0x96), 2),
               mode_shown=mode_byte_shown(0x96),
               difficulties=(0, 1, 2, 3), paddles=True, swap_paddles=True),
    make_rules("qbert", "Qbert", _qbert_step,
               minimal_actions=(0, 1, 2, 3, 4, 5),
               reset_vars=reset_vars_fn(lives=4, aux=2),
               difficulties=(0, 1), ystart=40),
    make_rules("riverraid", "Riverraid", _riverraid_step,
               reset_vars=reset_vars_fn(aux=0x58), difficulties=(0, 1)),
    make_rules("robotank", "Robotank", _robotank_step,
               reset_vars=reset_vars_fn(lives=4)),
)
