"""ALE's rules for the games whose ROM ids start with i to l.

One `step` per game, restating `src/ale/games/supported/<Game>.cpp` of
ale-py 0.12.1 (see `jaxatari.games.core` for the conventions), and the
game's `GameRules` in `RULES`. Comments give RAM addresses as CPU
addresses.

Three things here go beyond the 128 RIOT bytes and the 18 joystick actions:

* Klax is an F6SC (Superchip) cartridge, and ALE reads most of its rule
  bytes from the cartridge's own 128 bytes of RAM (read at $F080-$F0FF).
  Its `step` and `mode_shown` therefore take `ram[..., 256]`: the RIOT
  bytes $80-$FF, then the Superchip bytes, cartridge RAM byte `i` at index
  `128 + i` (`KLAX_RAM_SIZE`).
* Keystone Kapers and Laser Gates start every episode with ALE's `RESET`
  action (id 40, `ALE_RESET`): one frame with the console's RESET switch
  held and the joystick at rest.
* Lost Luggage's `isLegal` forbids every action with FIRE: ALE turns them
  into NOOP in `act()` and leaves them out of the legal action set.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari.games.core import (
    RESET, FIRE, NOOP, GameRules, StepResult, bcd, bcd_score, byte,
    lives_unless_terminal, make_rules, mode_byte_shown, reset_vars_fn,
    result, select_mode, split_vars)

ALE_RESET = RESET
"""ALE's `RESET` action id, used as a starting action: RESET switch held."""

KLAX_RAM_SIZE = 256
"""Klax's rules read RIOT RAM (128 bytes) followed by Superchip RAM (128)."""

_SUPERCHIP_OFFSET = 128


def _no_lives_step(score: jax.Array, reward: jax.Array, terminal: jax.Array,
                   vars_: jax.Array) -> StepResult:
    """Packs a frame of a game whose `lives()` is always 0."""
    _, lives_var, aux = split_vars(vars_)
    return result(reward, terminal, 0, score, lives_var, aux)


def _counted_lives_step(score: jax.Array, terminal: jax.Array,
                        lives_var: jax.Array, vars_: jax.Array) -> StepResult:
    """Packs a frame of a game whose `lives()` is 0 once over, else m_lives."""
    prev, _, aux = split_vars(vars_)
    lives = lives_unless_terminal(terminal, lives_var)
    return result(score - prev, terminal, lives, score, lives_var, aux)


def _ice_hockey_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Ice Hockey: goals, mine (BCD $8A) minus the CPU's (BCD $8B).

    The reward is clipped from above at 1 (a drop in the difference passes
    unclipped). The game ends when the clock reads 0: $87 (minutes) and $86
    (seconds) both 0. `lives()` is always 0.
    """
    prev = split_vars(vars_)[0]
    score = bcd(ram, 0x8A) - bcd(ram, 0x8B)
    reward = jnp.minimum(score - prev, 1)
    terminal = (byte(ram, 0x87) == 0) & (byte(ram, 0x86) == 0)
    return _no_lives_step(score, reward, terminal, vars_)


def _jamesbond_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """James Bond 007: BCD score $DC/$DD/$DE; lives (low nibble of $86) + 1.

    The game is over when that nibble is 0 and the screen byte $8C reads
    0x68. ALE's reset sets the lives to 6 until the first frame is read.
    """
    score = bcd_score(ram, 0xDC, 0xDD, 0xDE)
    lives_nibble = byte(ram, 0x86) & 0xF
    terminal = (lives_nibble == 0) & (byte(ram, 0x8C) == 0x68)
    return _counted_lives_step(score, terminal, lives_nibble + 1, vars_)


def _jamesbond_mode_shown(ram: np.ndarray, mode: int) -> bool:
    """James Bond 007: $8C is the mode, plus 0x48 on the title screen."""
    return int(ram[0x0C]) in (mode, mode + 0x48)


def _journey_escape_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Journey Escape: BCD cash $92/$91/$90; a gain of exactly 50,000 pays 0.

    (That gain is the starting cash; the score is still remembered.) The
    game ends when the clock reads 0: $95 (minutes) and $96 (seconds) both
    0. `lives()` is always 0.
    """
    prev = split_vars(vars_)[0]
    score = bcd_score(ram, 0x92, 0x91, 0x90)
    reward = score - prev
    reward = jnp.where(reward == 50000, 0, reward)
    terminal = (byte(ram, 0x95) == 0) & (byte(ram, 0x96) == 0)
    return _no_lives_step(score, reward, terminal, vars_)


def _kaboom_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Kaboom!: BCD score $A5/$A4/$A3; over when $A1 is 0 or at 999,999.

    ALE keeps the base `lives()`: 1 while playing, 0 once over.
    """
    score = bcd_score(ram, 0xA5, 0xA4, 0xA3)
    terminal = (byte(ram, 0xA1) == 0) | (score == 999999)
    return _counted_lives_step(score, terminal, 1, vars_)


def _kangaroo_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Kangaroo: 100 x BCD $A8/$A7; lives ($AD & 7) + 1; over at $AD 0xFF."""
    score = 100 * bcd_score(ram, 0xA8, 0xA7)
    lives_byte = byte(ram, 0xAD)
    terminal = lives_byte == 0xFF
    return _counted_lives_step(score, terminal, (lives_byte & 7) + 1, vars_)


def _kangaroo_mode_shown(ram: np.ndarray, mode: int) -> bool:
    """Kangaroo: $BA is the mode, with or without bit 7 set."""
    return int(ram[0x3A]) in (mode, mode + 0x80)


def _keystone_kapers_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Keystone Kapers: BCD score $9C/$9B; lives $96.

    The game is over when the lives are 0 and $88 reads 0.
    """
    score = bcd_score(ram, 0x9C, 0x9B)
    lives_byte = byte(ram, 0x96)
    terminal = (lives_byte == 0) & (byte(ram, 0x88) == 0)
    return _counted_lives_step(score, terminal, lives_byte, vars_)


def _king_kong_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """King Kong: BCD score $83/$82; lives $EE; over when they are 0."""
    score = bcd_score(ram, 0x83, 0x82)
    lives_byte = byte(ram, 0xEE)
    return _counted_lives_step(score, lives_byte == 0, lives_byte, vars_)


def _king_kong_mode_shown(ram: np.ndarray, mode: int) -> bool:
    """King Kong: $EC reads twice the mode."""
    return int(ram[0x6C]) == 2 * mode


def _superchip_byte(ram: jax.Array, addr: int) -> jax.Array:
    """Superchip RAM at CPU address `addr` ($F080-$F0FF), as int32."""
    if ram.shape[-1] < KLAX_RAM_SIZE:
        raise ValueError("Klax's rules need RIOT + Superchip RAM, "
                         f"{KLAX_RAM_SIZE} bytes, got {ram.shape[-1]}")
    return ram[..., _SUPERCHIP_OFFSET + (addr & 0x7F)].astype(jnp.int32)


def _klax_full_well(ram: jax.Array) -> jax.Array:
    """Klax: all 25 well cells $B3-$CB hold a tile.

    A cell is empty when it reads 0, 2, 6, 10 or 14.
    """
    cells = ram[..., 0x33:0x33 + 25].astype(jnp.int32)
    empty = jnp.isin(cells, jnp.array([0, 2, 6, 10, 14], jnp.int32))
    return jnp.sum(~empty, axis=-1) == 25


def _klax_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Klax: the score and most rule bytes are in Superchip RAM.

    `ram` is `ram[..., KLAX_RAM_SIZE]` (see the module doc). The score is
    BCD $F0B4/$F0B5/$F0B6. The game is over when the misses ($F0EE) reach
    a positive limit ($F0E9), when the game is running ($A8 == 4) with the
    well full (`_klax_full_well`), or when the level byte $F09D reads 0x99.
    ALE keeps the base `lives()`: 1 while playing, 0 once over.
    """
    digits = [_superchip_byte(ram, a) for a in (0xF0B4, 0xF0B5, 0xF0B6)]
    score = sum((100 ** k) * (10 * (d >> 4) + (d & 0xF))
                for k, d in enumerate(digits))
    limit = _superchip_byte(ram, 0xF0E9)
    missed_out = (limit > 0) & (_superchip_byte(ram, 0xF0EE) == limit)
    well_full = (byte(ram, 0xA8) == 4) & _klax_full_well(ram)
    last_level = _superchip_byte(ram, 0xF09D) == 0x99
    terminal = missed_out | well_full | last_level
    return _counted_lives_step(score, terminal, 1, vars_)


def _klax_mode_shown(ram: np.ndarray, mode: int) -> bool:
    """Klax: Superchip byte $F0EA is the mode (`ram` as for `_klax_step`)."""
    if len(ram) < KLAX_RAM_SIZE:
        raise ValueError("Klax's mode byte is in Superchip RAM: pass "
                         f"{KLAX_RAM_SIZE} bytes, got {len(ram)}")
    return int(ram[_SUPERCHIP_OFFSET + 0x6A]) == mode


def _koolaid_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Kool-Aid Man: 100 x BCD $81/$80; over when $D1 reads 0x80; no lives."""
    prev = split_vars(vars_)[0]
    score = 100 * bcd_score(ram, 0x81, 0x80)
    terminal = byte(ram, 0xD1) == 0x80
    return _no_lives_step(score, score - prev, terminal, vars_)


def _krull_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Krull: BCD score $9E/$9D/$9C; lives ($9F & 7) + 1.

    The game is over when $9F is 0, $A2 reads 3 and $80 reads 0x80.
    """
    score = bcd_score(ram, 0x9E, 0x9D, 0x9C)
    lives_byte = byte(ram, 0x9F)
    terminal = ((lives_byte == 0) & (byte(ram, 0xA2) == 0x03)
                & (byte(ram, 0x80) == 0x80))
    return _counted_lives_step(score, terminal, (lives_byte & 7) + 1, vars_)


def _kung_fu_master_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Kung-Fu Master: BCD score $9A/$99/$98; lives ($9D & 7) + 1.

    The game is over when $9D reads 0xFF.
    """
    score = bcd_score(ram, 0x9A, 0x99, 0x98)
    lives_byte = byte(ram, 0x9D)
    terminal = lives_byte == 0xFF
    return _counted_lives_step(score, terminal, (lives_byte & 7) + 1, vars_)


def _laser_gates_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Laser Gates: BCD score $82/$81/$80; over when $83 is 0; no lives."""
    prev = split_vars(vars_)[0]
    score = bcd_score(ram, 0x82, 0x81, 0x80)
    terminal = byte(ram, 0x83) == 0
    return _no_lives_step(score, score - prev, terminal, vars_)


def _lost_luggage_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Lost Luggage: BCD score $96/$95/$94; lives $CA.

    The game is over when the lives are 0, $C8 reads 0x0A and $A5 and $A9
    both read 0. ($94 also shows the game number on the select screen.)
    """
    score = bcd_score(ram, 0x96, 0x95, 0x94)
    lives_byte = byte(ram, 0xCA)
    terminal = ((lives_byte == 0) & (byte(ram, 0xC8) == 0x0A)
                & (byte(ram, 0xA5) == 0) & (byte(ram, 0xA9) == 0))
    return _counted_lives_step(score, terminal, lives_byte, vars_)


def _lost_luggage_game_shown(ram: np.ndarray, mode: int) -> bool:
    """Lost Luggage: mode m is game 1 + 3 m, shown in $94 by SELECT.

    $94 is also the score's top byte, so the RESET that follows clears it:
    this holds on the select screen, not after ALE's reset (where $A7, the
    game number less one, reads 3 m).
    """
    return int(ram[0x14]) == 1 + 3 * mode


_ICE_HOCKEY_MODES = (0, 2)
_JAMESBOND_MODES = (0, 1)
_KANGAROO_MODES = (0, 1)
_KING_KONG_MODES = (0, 1, 2, 3)
_KLAX_MODES = (0, 1, 2)
_LOST_LUGGAGE_MODES = (0, 1)


RULES: tuple[GameRules, ...] = (
    make_rules("ice_hockey", "IceHockey", _ice_hockey_step,
               modes=_ICE_HOCKEY_MODES,
               set_mode=select_mode(_ICE_HOCKEY_MODES, mode_byte_shown(0x80),
                                    2),
               mode_shown=mode_byte_shown(0x80),
               difficulties=(0, 1, 2, 3)),
    make_rules("jamesbond", "Jamesbond", _jamesbond_step,
               modes=_JAMESBOND_MODES, reset_vars=reset_vars_fn(lives=6),
               set_mode=select_mode(_JAMESBOND_MODES, _jamesbond_mode_shown,
                                    20),
               mode_shown=_jamesbond_mode_shown),
    make_rules("journey_escape", "JourneyEscape", _journey_escape_step,
               minimal_actions=(0, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14,
                                15, 16, 17),
               difficulties=(0, 1), starting_actions=(FIRE,), height=230),
    make_rules("kaboom", "Kaboom", _kaboom_step,
               minimal_actions=(0, 1, 3, 4), starting_actions=(FIRE,),
               paddles=True),
    make_rules("kangaroo", "Kangaroo", _kangaroo_step,
               modes=_KANGAROO_MODES, reset_vars=reset_vars_fn(lives=3),
               set_mode=select_mode(_KANGAROO_MODES, _kangaroo_mode_shown, 2),
               mode_shown=_kangaroo_mode_shown),
    make_rules("keystone_kapers", "KeystoneKapers", _keystone_kapers_step,
               minimal_actions=tuple(range(14)),
               reset_vars=reset_vars_fn(lives=3),
               starting_actions=(ALE_RESET,), height=250),
    make_rules("king_kong", "KingKong", _king_kong_step,
               minimal_actions=(0, 1, 2, 3, 4, 5), modes=_KING_KONG_MODES,
               reset_vars=reset_vars_fn(lives=3),
               set_mode=select_mode(_KING_KONG_MODES, _king_kong_mode_shown,
                                    2),
               mode_shown=_king_kong_mode_shown, height=250),
    make_rules("klax", "Klax", _klax_step, modes=_KLAX_MODES,
               set_mode=select_mode(_KLAX_MODES, _klax_mode_shown, 2),
               mode_shown=_klax_mode_shown, starting_actions=(FIRE, NOOP),
               ram_size=KLAX_RAM_SIZE, height=250),
    make_rules("koolaid", "Koolaid", _koolaid_step,
               minimal_actions=(0, 2, 3, 4, 5, 6, 7, 8, 9)),
    make_rules("krull", "Krull", _krull_step,
               reset_vars=reset_vars_fn(lives=3)),
    make_rules("kung_fu_master", "KungFuMaster", _kung_fu_master_step,
               minimal_actions=(0, 2, 3, 4, 5, 8, 9, 11, 12, 13, 14, 15, 16,
                                17),
               reset_vars=reset_vars_fn(lives=4)),
    make_rules("laser_gates", "LaserGates", _laser_gates_step,
               starting_actions=(ALE_RESET,), height=250),
    make_rules("lost_luggage", "LostLuggage", _lost_luggage_step,
               minimal_actions=(0, 2, 3, 4, 5, 6, 7, 8, 9),
               legal_actions=(0, 2, 3, 4, 5, 6, 7, 8, 9),
               modes=_LOST_LUGGAGE_MODES, reset_vars=reset_vars_fn(lives=3),
               set_mode=select_mode(_LOST_LUGGAGE_MODES,
                                    _lost_luggage_game_shown, 2),
               difficulties=(0, 1),
               starting_actions=(FIRE,)),
)
