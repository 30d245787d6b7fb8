"""Per-game rules: reward, terminal and lives read from the 2600's RAM.

ALE turns a cartridge into an RL environment with one `RomSettings` class per
game (`src/ale/games/supported/*.cpp` in ale-py 0.12.1). After every emulated
frame, reset frames included, ALE calls the class's `step(system)`, which reads
a few RAM bytes and updates the member variables behind `getReward()`,
`isTerminal()` and `lives()`. This module restates those rules, written afresh
from what the sources do, as pure `jax.numpy` functions over the 128 RAM bytes,
so that a batch of emulated consoles can compute them inside `jit`/`vmap`.

RAM and the carried state
-------------------------
`ram[i]` is the byte at CPU address `0x80 + i`; ALE's `readRam(system, a)`
reads address `0x80 + (a & 0x7F)`, so a rule written as `readRam(0xB9)` and
one written as `readRam(57)` both read `ram[57]`.

A `RomSettings` object carries state from frame to frame: at least the score
seen on the previous frame (rewards are score differences), and for a few
games more (Breakout's "game has started" flag, Q*bert's lives counter and
last lives byte, Beam Rider's accepted lives, River Raid's last lives byte).
Here that state is an int32 vector `vars` of `GameRules.num_vars` (4) entries,
the same layout for every game:

=====  ==============================================================
index  meaning
=====  ==============================================================
0      `m_score`: the score on the previous frame
1      `m_lives`: Q*bert's lives counter, Beam Rider's accepted lives,
       the lives read from RAM for the other games with lives, else 0
2      game-specific memory: Breakout's "started" flag, Q*bert's last
       lives byte (signed), River Raid's last lives byte, else 0
3      `m_terminal` of the previous frame (0 or 1), for reference
=====  ==============================================================

`step` accepts any leading batch shape (`ram[..., 128]`, `vars[..., 4]`)
and works under `vmap`.

`rules.reset_vars()` is the state right after `RomSettings::reset()`. ALE
calls that reset during its reset sequence (after the 60 NOOP frames and the
first console reset) and then steps the rules on every later reset frame
(the NOOP frame after each SELECT press, but not the SELECT-held frames; the
console resets; the starting actions), so an emulator that mirrors ALE runs
`rules.step` on those frames as well. A
caller that only has the RAM at the end of the reset sequence can step once
on it from `reset_vars()` instead: for these 15 games the result matches
ALE's state (the tests check this against ale-py).

Game modes
----------
`rules.set_mode(ops, mode)` is host-side Python, run during a reset, that
does what `RomSettings::setMode` does: press SELECT until a mode byte in RAM
shows the wanted mode, then reset the console. It drives the emulator
through the small `ResetOps` protocol. Games without a `setMode` override
accept only mode 0 and do nothing.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Protocol

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "ALL_ACTIONS",
    "GAMES",
    "GameRules",
    "ResetOps",
    "StepResult",
    "lookup",
]

# ALE's joystick actions, by id (`Action` in ale-py).
ALL_ACTIONS = (
    "NOOP", "FIRE", "UP", "RIGHT", "LEFT", "DOWN", "UPRIGHT", "UPLEFT",
    "DOWNRIGHT", "DOWNLEFT", "UPFIRE", "RIGHTFIRE", "LEFTFIRE", "DOWNFIRE",
    "UPRIGHTFIRE", "UPLEFTFIRE", "DOWNRIGHTFIRE", "DOWNLEFTFIRE",
)
NOOP, FIRE, UP, RIGHT, LEFT, DOWN = 0, 1, 2, 3, 4, 5
FULL_ACTION_SET = tuple(range(18))

VAR_SCORE, VAR_LIVES, VAR_AUX, VAR_TERMINAL = 0, 1, 2, 3
NUM_VARS = 4

# Safety stop for the SELECT loops of `set_mode`; ALE would loop forever.
_MAX_SELECT_PRESSES = 1000

StepResult = tuple[jax.Array, jax.Array, jax.Array, jax.Array]
"""`(reward int32, terminal bool, lives int32, new_vars int32[num_vars])`."""

StepFn = Callable[[jax.Array, jax.Array], StepResult]


class ResetOps(Protocol):
    """What `GameRules.set_mode` needs from the emulator, during a reset.

    Each call emulates frames exactly as the ALE method named below does,
    including `RomSettings::step` after the frames where ALE calls it.
    """

    def ram(self) -> np.ndarray:
        """Returns the 128 RAM bytes ($80-$FF) now, as `np.uint8[128]`."""

    def press_select(self, n: int) -> None:
        """`pressSelect(n)`: `n` frames with SELECT held, then 1 NOOP frame.

        ALE steps the rules after the NOOP frame only.
        """

    def soft_reset(self) -> None:
        """`softReset()`: the RESET switch held for 4 frames."""

    def act(self, action: int) -> None:
        """`environment->act(action)`: one agent action, as setMode uses it."""


@dataclasses.dataclass(frozen=True)
class GameRules:
    """Everything game-specific that ALE knows about one ROM.

    Attributes:
        rom_id: ale-py's ROM id, e.g. "space_invaders".
        ale_name: the Gymnasium id stem, e.g. "SpaceInvaders" for
            "ALE/SpaceInvaders-v5".
        minimal_actions: `getMinimalActionSet()`, ALE action ids in ALE's
            order (ascending).
        ystart: the first scanline of the 210-line screen (`Display.YStart`).
        hmove_blanks: whether HMOVE blanks the first 8 pixels of a line
            (`Emulation.HmoveBlanks`).
        paddles: whether ALE drives the game with paddles, not joysticks.
        swap_paddles: whether the paddles are swapped
            (`Controller.SwapPaddles`).
        starting_actions: `getStartingActions()`, one action per frame,
            emulated at the end of every reset.
        modes: `getAvailableModes()`.
        default_mode: `getDefaultMode()`.
        difficulties: `getAvailableDifficulties()`.
        default_difficulty: the difficulty ALE uses unless told otherwise.
        step: `step(ram, vars) -> (reward, terminal, lives, new_vars)`, pure
            and jittable: one frame of `RomSettings::step` followed by
            `getReward()`, `isTerminal()` and `lives()`. `ram` is uint8 or
            int32 of shape `[..., 128]`, `vars` int32 `[..., num_vars]`.
        reset_vars: `reset_vars() -> int32[num_vars]`, the carried state
            right after `RomSettings::reset()`.
        set_mode: `set_mode(ops, mode)`, host-side `RomSettings::setMode`.
        num_vars: the length of `vars`.
    """

    rom_id: str
    ale_name: str
    minimal_actions: tuple[int, ...]
    ystart: int
    hmove_blanks: bool
    paddles: bool
    swap_paddles: bool
    starting_actions: tuple[int, ...]
    modes: tuple[int, ...]
    default_mode: int
    difficulties: tuple[int, ...]
    default_difficulty: int
    step: StepFn = dataclasses.field(repr=False)
    reset_vars: Callable[[], jax.Array] = dataclasses.field(repr=False)
    set_mode: Callable[[ResetOps, int], None] = dataclasses.field(repr=False)
    num_vars: int = NUM_VARS


# ---------------------------------------------------------------------------
# RAM readers, shared by the rules below.


def _byte(ram: jax.Array, addr: int) -> jax.Array:
    """The RAM byte that ALE's `readRam(addr)` returns, as int32."""
    return ram[..., addr & 0x7F].astype(jnp.int32)


def _bcd(ram: jax.Array, addr: int) -> jax.Array:
    """One byte read as two decimal digits: 10 * high nibble + low nibble.

    Nibbles above 9 are not rejected (0xC0 reads as 120), as in ALE.
    """
    value = _byte(ram, addr)
    return 10 * (value >> 4) + (value & 0xF)


def _bcd_score(ram: jax.Array, *addrs: int) -> jax.Array:
    """A score stored as BCD bytes, least significant byte first."""
    total = jnp.zeros(ram.shape[:-1], jnp.int32)
    for place, addr in enumerate(addrs):
        total = total + (100 ** place) * _bcd(ram, addr)
    return total


def _vars(vars_: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Splits `vars` into (score, lives, aux) int32 arrays."""
    vars_ = jnp.asarray(vars_, jnp.int32)
    return vars_[..., VAR_SCORE], vars_[..., VAR_LIVES], vars_[..., VAR_AUX]


def _result(reward: jax.Array, terminal: jax.Array, lives: jax.Array,
            score: jax.Array, lives_var: jax.Array,
            aux: jax.Array) -> StepResult:
    """Packs one frame's outputs and the new carried state."""
    shape = jnp.broadcast_shapes(*(jnp.shape(x) for x in (
        reward, terminal, lives, score, lives_var, aux)))

    def int32(x: jax.Array | int) -> jax.Array:
        return jnp.broadcast_to(jnp.asarray(x, jnp.int32), shape)

    terminal = jnp.broadcast_to(jnp.asarray(terminal, jnp.bool_), shape)
    new_vars = jnp.stack(
        [int32(x) for x in (score, lives_var, aux, terminal)], axis=-1)
    return int32(reward), terminal, int32(lives), new_vars


def _lives_unless_terminal(terminal: jax.Array, lives: jax.Array) -> jax.Array:
    """`lives()` of the games that report 0 lives once the game is over."""
    return jnp.where(terminal, 0, lives)


def _reset_vars_fn(score: int = 0, lives: int = 0,
                   aux: int = 0) -> Callable[[], jax.Array]:
    """A `reset_vars` that returns the given post-`reset()` members."""

    def reset_vars() -> jax.Array:
        return jnp.array([score, lives, aux, 0], jnp.int32)

    return reset_vars


# ---------------------------------------------------------------------------
# step() of each game. Comments give the RAM addresses as CPU addresses.


def _pong_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Pong: score = player ($8E) - CPU ($8D); over at 21; no lives."""
    prev, lives_var, aux = _vars(vars_)
    cpu, player = _byte(ram, 0x8D), _byte(ram, 0x8E)
    score = player - cpu
    terminal = (cpu == 21) | (player == 21)
    return _result(score - prev, terminal, 0, score, lives_var, aux)


def _breakout_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Breakout: terminal once lives ($B9) have been 5 and are now 0.

    The score is BCD $CD plus 100 times the low nibble of $CC. The aux slot
    holds the "started" flag, set the first time the lives byte reads 5.
    """
    prev, _, started = _vars(vars_)
    low, high = _byte(ram, 0xCD), _byte(ram, 0xCC)
    score = (low & 0xF) + 10 * (low >> 4) + 100 * (high & 0xF)
    lives_byte = _byte(ram, 0xB9)
    started = (started != 0) | (lives_byte == 5)
    terminal = started & (lives_byte == 0)
    lives = _lives_unless_terminal(terminal, lives_byte)
    return _result(score - prev, terminal, lives, score, lives_byte, started)


def _space_invaders_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Space Invaders: a score drop counts as a wrap of the counter at 10,000.

    Lives are $C9; the game is over when bit 7 of $98 is set or lives are 0.
    """
    prev, _, aux = _vars(vars_)
    score = _bcd_score(ram, 0xE8, 0xE6)
    reward = score - prev
    reward = jnp.where(reward < 0, (10000 - prev) + score, reward)
    lives_byte = _byte(ram, 0xC9)
    terminal = ((_byte(ram, 0x98) & 0x80) != 0) | (lives_byte == 0)
    lives = _lives_unless_terminal(terminal, lives_byte)
    return _result(reward, terminal, lives, score, lives_byte, aux)


def _freeway_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Freeway: BCD score $E7, reward clipped to [0, 1]; over when $96 == 1."""
    prev, lives_var, aux = _vars(vars_)
    score = _bcd(ram, 0xE7)
    reward = jnp.clip(score - prev, 0, 1)
    terminal = _byte(ram, 0x96) == 1
    return _result(reward, terminal, 0, score, lives_var, aux)


def _boxing_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Boxing: punches landed, mine ($92) minus the CPU's ($93).

    A byte of 0xC0 is a knockout and counts as 100 punches. The bout ends
    at a knockout (either count at 100) or when the clock ($90 minutes in
    the high nibble, $91 BCD seconds) reads 0:00.
    """
    prev, lives_var, aux = _vars(vars_)
    mine = jnp.where(_byte(ram, 0x92) == 0xC0, 100, _bcd(ram, 0x92))
    theirs = jnp.where(_byte(ram, 0x93) == 0xC0, 100, _bcd(ram, 0x93))
    score = mine - theirs
    knockout = (mine == 100) | (theirs == 100)
    minutes = _byte(ram, 0x90) >> 4
    seconds = _bcd(ram, 0x91)
    terminal = knockout | ((minutes == 0) & (seconds == 0))
    return _result(score - prev, terminal, 0, score, lives_var, aux)


def _seaquest_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Seaquest: BCD score $BA/$B9/$B8; lives $BB + 1; over when $A3 != 0."""
    prev, _, aux = _vars(vars_)
    score = _bcd_score(ram, 0xBA, 0xB9, 0xB8)
    terminal = _byte(ram, 0xA3) != 0
    lives_var = _byte(ram, 0xBB) + 1
    lives = _lives_unless_terminal(terminal, lives_var)
    return _result(score - prev, terminal, lives, score, lives_var, aux)


def _enduro_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Enduro: the score counts cars passed, from the level and cars left.

    Level L is $AD and the cars still to pass are BCD $AB/$AC. Day 1 asks
    for 200 cars and later days for 300 each, so the score is 0 before the
    race, 200 - left on day 1, and 200 + 300 (L - 2) + 300 - left after.
    The race is lost when $AF reads 0xFF. No lives.
    """
    prev, lives_var, aux = _vars(vars_)
    level = _byte(ram, 0xAD)
    left = _bcd_score(ram, 0xAB, 0xAC)
    score = jnp.where(level == 0, 0,
                      jnp.where(level == 1, 200 - left,
                                200 + (level - 2) * 300 + 300 - left))
    terminal = _byte(ram, 0xAF) == 0xFF
    return _result(score - prev, terminal, 0, score, lives_var, aux)


def _riverraid_digit(ram: jax.Array, addr: int) -> jax.Array:
    """A River Raid score digit, stored as a digit-sprite offset (8 * d).

    ALE looks the byte up in a map from 0, 8, ..., 72 to 0..9; any other
    value (the blank leading digits) is not in the map and reads as 0.
    """
    value = _byte(ram, addr)
    return jnp.where(((value & 7) == 0) & (value <= 72), value >> 3, 0)


def _riverraid_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """River Raid: six digit-sprite offsets; lives from the byte at $C0.

    The aux slot holds the previous $C0 byte (0x58 after a reset). The game
    is over when $C0 goes from 0x59 to 0x58. Lives read 4 while the byte is
    0x58 (a new game), 1 at 0x59, and byte / 8 + 1 otherwise.
    """
    prev, lives_var, last_byte = _vars(vars_)
    score = jnp.zeros(ram.shape[:-1], jnp.int32)
    for place, addr in enumerate((87, 85, 83, 81, 79, 77)):
        score = score + (10 ** place) * _riverraid_digit(ram, addr)
    lives_byte = _byte(ram, 0xC0)
    terminal = (lives_byte == 0x58) & (last_byte == 0x59)
    numeric = jnp.where(lives_byte == 0x58, 4,
                        jnp.where(lives_byte == 0x59, 1, lives_byte // 8 + 1))
    lives = _lives_unless_terminal(terminal, numeric)
    return _result(score - prev, terminal, lives, score, lives_var, lives_byte)


def _pitfall_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Pitfall!: BCD score $D7/$D6/$D5, starting from 2000.

    The high nibble of $80 shows the spare lives as tally marks (0xA: two,
    0x8: one); the game is over when it is 0 and the timer byte $9E is not.
    """
    prev, _, aux = _vars(vars_)
    score = _bcd_score(ram, 0xD7, 0xD6, 0xD5)
    tally = _byte(ram, 0x80) >> 4
    terminal = (tally == 0) & (_byte(ram, 0x9E) != 0)
    lives_var = jnp.where(tally == 0xA, 3, jnp.where(tally == 0x8, 2, 1))
    lives = _lives_unless_terminal(terminal, lives_var)
    return _result(score - prev, terminal, lives, score, lives_var, aux)


def _ms_pacman_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Ms. Pac-Man: BCD score $F8/$F9/$FA; lives in the low bits of $FB.

    The game is over when the low nibble of $FB is 0 and the death timer
    $A7 reads 0x53.
    """
    prev, _, aux = _vars(vars_)
    score = _bcd_score(ram, 0xF8, 0xF9, 0xFA)
    lives_byte = _byte(ram, 0xFB) & 0xF
    terminal = (lives_byte == 0) & (_byte(ram, 0xA7) == 0x53)
    lives_var = (lives_byte & 0x7) + 1
    lives = _lives_unless_terminal(terminal, lives_var)
    return _result(score - prev, terminal, lives, score, lives_var, aux)


def _qbert_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Q*bert: lives are counted, not read; no reward once the game is over.

    $88, read as a signed byte, is the lives indicator. The counter (vars
    slot 1, 4 after a reset) drops by one whenever the byte reads exactly
    one less than on the previous frame (aux slot, 2 after a reset). The
    game is over when the byte is 0xFE, or 0x02 right after 0xFF. While it
    is over the reward is 0 and the remembered score stays unchanged.
    """
    prev, counter, last = _vars(vars_)
    value = _byte(ram, 0x88)
    terminal = (value == 0xFE) | ((value == 0x02) & (last == -1))
    signed = jnp.where(value >= 0x80, value - 0x100, value)
    counter = jnp.where(last - 1 == signed, counter - 1, counter)
    current = _bcd_score(ram, 0xDB, 0xDA, 0xD9)
    reward = jnp.where(terminal, 0, current - prev)
    score = jnp.where(terminal, prev, current)
    lives = _lives_unless_terminal(terminal, counter)
    return _result(reward, terminal, lives, score, counter, signed)


def _beam_rider_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Beam Rider: BCD score $89/$8A/$8B; lives $85 + 1, accepted with care.

    A drop of exactly one life is taken only on a frame where $8C reads 1;
    any other change is taken at once. The game is over when $85 is 0xFF.
    """
    prev, lives_var, aux = _vars(vars_)
    score = _bcd_score(ram, 0x89, 0x8A, 0x8B)
    new_lives = _byte(ram, 0x85) + 1
    accept = (new_lives != lives_var - 1) | (_byte(ram, 0x8C) == 0x01)
    lives_var = jnp.where(accept, new_lives, lives_var)
    terminal = _byte(ram, 0x85) == 0xFF
    lives = _lives_unless_terminal(terminal, lives_var)
    return _result(score - prev, terminal, lives, score, lives_var, aux)


def _asteroids_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Asteroids: 10 x BCD $BE/$BD, wrapping at 100,000; lives $BC >> 4."""
    prev, _, aux = _vars(vars_)
    score = 10 * _bcd_score(ram, 0xBE, 0xBD)
    reward = score - prev
    reward = jnp.where(reward < 0, reward + 100000, reward)
    lives_var = _byte(ram, 0xBC) >> 4
    terminal = lives_var == 0
    return _result(reward, terminal, lives_var, score, lives_var, aux)


def _montezuma_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Montezuma's Revenge: BCD score $95/$94/$93; lives ($BA & 7) + 1.

    The game is over when $BA is 0 and $FE reads 0x60.
    """
    prev, _, aux = _vars(vars_)
    score = _bcd_score(ram, 0x95, 0x94, 0x93)
    lives_byte = _byte(ram, 0xBA)
    terminal = (lives_byte == 0) & (_byte(ram, 0xFE) == 0x60)
    lives_var = (lives_byte & 0x7) + 1
    lives = _lives_unless_terminal(terminal, lives_var)
    return _result(score - prev, terminal, lives, score, lives_var, aux)


def _robotank_step(ram: jax.Array, vars_: jax.Array) -> StepResult:
    """Robotank: 12 x squadrons ($B6) + tanks ($B5) destroyed, in binary.

    Lives are (low nibble of $A8) + 1; the game is over when $A8 is 0 and
    $B4 reads 0xFF.
    """
    prev, _, aux = _vars(vars_)
    score = 12 * _byte(ram, 0xB6) + _byte(ram, 0xB5)
    lives_byte = _byte(ram, 0xA8)
    terminal = (lives_byte == 0) & (_byte(ram, 0xB4) == 0xFF)
    lives_var = (lives_byte & 0xF) + 1
    lives = _lives_unless_terminal(terminal, lives_var)
    return _result(score - prev, terminal, lives, score, lives_var, aux)


# ---------------------------------------------------------------------------
# setMode.


def _no_set_mode(ops: ResetOps, mode: int) -> None:
    """The base `RomSettings::setMode`: only mode 0 exists, nothing to do."""
    del ops
    if mode != 0:
        raise ValueError(f"mode {mode} is not available for this game")


def _select_until(ops: ResetOps, done: Callable[[np.ndarray], bool],
                  presses: int) -> None:
    """Presses SELECT (`presses` frames each) until `done(ram)`, then resets.

    Raises:
        RuntimeError: if the mode never shows up in RAM.
    """
    for _ in range(_MAX_SELECT_PRESSES):
        if done(np.asarray(ops.ram())):
            ops.soft_reset()
            return
        ops.press_select(presses)
    raise RuntimeError("the game never reached the requested mode")


def _mode_byte_set_mode(addr: int, presses: int, modes: tuple[int, ...],
                        ) -> Callable[[ResetOps, int], None]:
    """A `setMode` that cycles SELECT until RAM byte `addr` equals the mode."""

    def set_mode(ops: ResetOps, mode: int) -> None:
        if mode not in modes:
            raise ValueError(f"mode {mode} is not one of {modes}")
        _select_until(ops, lambda ram: int(ram[addr & 0x7F]) == mode, presses)

    return set_mode


def _ms_pacman_set_mode(ops: ResetOps, mode: int) -> None:
    """Ms. Pac-Man: mode 0 is game 1, variation 1 ($99 == 1, $A1 == 1).

    Other modes m want $99 == m and $A1 == 0. SELECT is held 10 frames.
    """
    if mode not in range(4):
        raise ValueError(f"mode {mode} is not one of (0, 1, 2, 3)")
    want = (1, 1) if mode == 0 else (mode, 0)
    _select_until(ops, lambda ram: (int(ram[0x19]), int(ram[0x21])) == want,
                  10)


# ---------------------------------------------------------------------------
# The table.


def _rules(rom_id: str, ale_name: str, step: StepFn, *,
           minimal_actions: tuple[int, ...] = FULL_ACTION_SET,
           reset_vars: Callable[[], jax.Array] | None = None,
           modes: tuple[int, ...] = (0,),
           set_mode: Callable[[ResetOps, int], None] = _no_set_mode,
           difficulties: tuple[int, ...] = (0,),
           starting_actions: tuple[int, ...] = (),
           ystart: int = 34, hmove_blanks: bool = True,
           paddles: bool = False, swap_paddles: bool = False) -> GameRules:
    """Builds a `GameRules` with the defaults most games share."""
    if reset_vars is None:
        reset_vars = _reset_vars_fn()
    return GameRules(
        rom_id=rom_id, ale_name=ale_name, minimal_actions=minimal_actions,
        ystart=ystart, hmove_blanks=hmove_blanks, paddles=paddles,
        swap_paddles=swap_paddles, starting_actions=starting_actions,
        modes=modes, default_mode=modes[0], difficulties=difficulties,
        default_difficulty=0, step=step, reset_vars=reset_vars,
        set_mode=set_mode)


_PONG_MODES = (0, 1)
_BREAKOUT_MODES = tuple(range(0, 48, 4))
_SPACE_INVADERS_MODES = tuple(range(16))
_FREEWAY_MODES = tuple(range(8))
_ASTEROIDS_MODES = tuple(range(32)) + (0x80,)

_ALL_RULES = (
    _rules("pong", "Pong", _pong_step,
           minimal_actions=(0, 1, 3, 4, 11, 12), modes=_PONG_MODES,
           set_mode=_mode_byte_set_mode(0x96, 2, _PONG_MODES),
           difficulties=(0, 1, 2, 3), paddles=True, swap_paddles=True),
    _rules("breakout", "Breakout", _breakout_step,
           minimal_actions=(0, 1, 3, 4), modes=_BREAKOUT_MODES,
           reset_vars=_reset_vars_fn(lives=5),
           set_mode=_mode_byte_set_mode(0xB2, 1, _BREAKOUT_MODES),
           difficulties=(0, 1), paddles=True),
    _rules("space_invaders", "SpaceInvaders", _space_invaders_step,
           minimal_actions=(0, 1, 3, 4, 11, 12), modes=_SPACE_INVADERS_MODES,
           reset_vars=_reset_vars_fn(lives=3),
           set_mode=_mode_byte_set_mode(0xDC, 2, _SPACE_INVADERS_MODES),
           difficulties=(0, 1)),
    _rules("freeway", "Freeway", _freeway_step,
           minimal_actions=(0, 2, 5), modes=_FREEWAY_MODES,
           set_mode=_mode_byte_set_mode(0x80, 1, _FREEWAY_MODES),
           difficulties=(0, 1)),
    _rules("boxing", "Boxing", _boxing_step, difficulties=(0, 1, 2, 3)),
    _rules("seaquest", "Seaquest", _seaquest_step,
           reset_vars=_reset_vars_fn(lives=4), difficulties=(0, 1)),
    _rules("enduro", "Enduro", _enduro_step,
           minimal_actions=(0, 1, 3, 4, 5, 8, 9, 11, 12),
           starting_actions=(FIRE,)),
    _rules("riverraid", "Riverraid", _riverraid_step,
           reset_vars=_reset_vars_fn(aux=0x58), difficulties=(0, 1)),
    _rules("pitfall", "Pitfall", _pitfall_step,
           reset_vars=_reset_vars_fn(score=2000, lives=3),
           starting_actions=(UP,)),
    _rules("ms_pacman", "MsPacman", _ms_pacman_step,
           minimal_actions=(0, 2, 3, 4, 5, 6, 7, 8, 9), modes=(0, 1, 2, 3),
           reset_vars=_reset_vars_fn(lives=3),
           set_mode=_ms_pacman_set_mode, hmove_blanks=False),
    _rules("qbert", "Qbert", _qbert_step, minimal_actions=(0, 1, 2, 3, 4, 5),
           reset_vars=_reset_vars_fn(lives=4, aux=2), difficulties=(0, 1),
           ystart=40),
    _rules("beam_rider", "BeamRider", _beam_rider_step,
           minimal_actions=(0, 1, 2, 3, 4, 6, 7, 11, 12),
           reset_vars=_reset_vars_fn(lives=3), difficulties=(0, 1),
           starting_actions=(RIGHT,)),
    _rules("asteroids", "Asteroids", _asteroids_step,
           minimal_actions=(0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15),
           modes=_ASTEROIDS_MODES, reset_vars=_reset_vars_fn(lives=4),
           set_mode=_mode_byte_set_mode(0x80, 2, _ASTEROIDS_MODES),
           difficulties=(0, 3), hmove_blanks=False),
    _rules("montezuma_revenge", "MontezumaRevenge", _montezuma_step,
           reset_vars=_reset_vars_fn(lives=6)),
    _rules("robotank", "Robotank", _robotank_step,
           reset_vars=_reset_vars_fn(lives=4)),
)

GAMES: dict[str, GameRules] = {rules.rom_id: rules for rules in _ALL_RULES}
"""The games jaxatari knows, keyed by ale-py ROM id."""

_BY_SQUASHED_NAME = {rules.rom_id.replace("_", ""): rules
                     for rules in _ALL_RULES}

# "ALE/SpaceInvaders-v5", "SpaceInvadersNoFrameskip-v4", "Pong-ram-v0", ...
_GYM_ID = re.compile(
    r"^(?:ALE/)?(?P<stem>[A-Za-z0-9_]+?)"
    r"(?:-ram)?(?:NoFrameskip|Deterministic)?(?:-ram)?(?:-v\d+)?$")


def lookup(game: str) -> GameRules:
    """Finds a game's rules by ROM id, Gymnasium id or Gymnasium name stem.

    Accepted forms, for example: "space_invaders", "SpaceInvaders",
    "ALE/SpaceInvaders-v5", "SpaceInvadersNoFrameskip-v4", "SpaceInvaders-v0".

    Args:
        game: the name to look up; case and underscores do not matter.

    Returns:
        The game's `GameRules`.

    Raises:
        ValueError: for a name that is not one of the known games.
    """
    match = _GYM_ID.match(game.strip())
    if match:
        squashed = match.group("stem").replace("_", "").lower()
        if squashed in _BY_SQUASHED_NAME:
            return _BY_SQUASHED_NAME[squashed]
    known = ", ".join(sorted(GAMES))
    raise ValueError(
        f"unknown game {game!r}. jaxatari has rules for: {known}. Pass one "
        "of these ale-py ROM ids, or a Gymnasium id such as "
        "'ALE/SpaceInvaders-v5' or 'SpaceInvadersNoFrameskip-v4'. For "
        "another ALE game, add its GameRules to jaxatari/games.py, written "
        "from ALE's src/ale/games/supported/<Game>.cpp.")
