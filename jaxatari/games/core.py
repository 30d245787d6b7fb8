"""What every game's rules share: `GameRules`, RAM readers, carried state.

ALE turns a cartridge into an RL environment with one `RomSettings` class per
game (`src/ale/games/supported/*.cpp` in ale-py 0.12.1). After every emulated
frame, reset frames included, ALE calls the class's `step(system)`, which reads
a few RAM bytes and updates the member variables behind `getReward()`,
`isTerminal()` and `lives()`. The game modules of this package restate those
rules, written afresh from what the sources do, as pure `jax.numpy` functions
over the 128 RAM bytes, so that a batch of consoles can compute them inside
`jit`/`vmap`. This module holds the pieces they share.

RAM and the carried state
-------------------------
`ram[i]` is the byte at CPU address `0x80 + i`; ALE's `readRam(system, a)`
reads address `0x80 + (a & 0x7F)`, so a rule written as `readRam(0xB9)` and
one written as `readRam(57)` both read `ram[57]`.

A `RomSettings` object carries state from frame to frame: at least the score
seen on the previous frame (rewards are score differences), and for some
games more (Breakout's "game has started" flag, Q*bert's lives counter and
last lives byte, Miniature Golf's hole, par and strokes...). Here that state
is an int32 vector `vars` of `NUM_VARS` (8) entries, the same layout for
every game, so that consoles of different games can be batched:

=====  ==============================================================
index  meaning
=====  ==============================================================
0      `m_score`: the score on the previous frame
1      `m_lives`: the lives the game reports or counts, else 0
2      game-specific memory (`VAR_AUX`), else 0
3      `m_terminal` of the previous frame (0 or 1), for reference
4-7    more game-specific memory (`VAR_EXTRA`), else 0
=====  ==============================================================

`step` accepts any leading batch shape (`ram[..., 128]`, `vars[..., 8]`)
and works under `vmap`.

`rules.reset_vars()` is the state right after `RomSettings::reset()`. ALE
calls that reset during its reset sequence (after the 60 NOOP frames and the
first console reset) and then steps the rules on every later reset frame
(the NOOP frame after each SELECT press, but not the SELECT-held frames; the
console resets; the starting actions), so an emulator that mirrors ALE runs
`rules.step` on those frames as well.

Game modes
----------
`rules.set_mode(ops, mode)` is host-side Python, run during a reset, that
does what `RomSettings::setMode` does, usually: press SELECT until a mode
byte in RAM shows the wanted mode, then reset the console. It drives the
emulator through the small `ResetOps` protocol. Games without a `setMode`
override accept only mode 0 and do nothing. `rules.mode_shown(ram, mode)`,
where given, is the RAM test such a loop waits for; the tests check it
against the RAM of ale-py's reset in every mode.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Protocol

import jax
import jax.numpy as jnp
import numpy as np

# ALE's joystick actions, by id (`Action` in ale-py).
ALL_ACTIONS = (
    "NOOP", "FIRE", "UP", "RIGHT", "LEFT", "DOWN", "UPRIGHT", "UPLEFT",
    "DOWNRIGHT", "DOWNLEFT", "UPFIRE", "RIGHTFIRE", "LEFTFIRE", "DOWNFIRE",
    "UPRIGHTFIRE", "UPLEFTFIRE", "DOWNRIGHTFIRE", "DOWNLEFTFIRE",
)
(NOOP, FIRE, UP, RIGHT, LEFT, DOWN, UPRIGHT, UPLEFT, DOWNRIGHT, DOWNLEFT,
 UPFIRE, RIGHTFIRE, LEFTFIRE, DOWNFIRE, UPRIGHTFIRE, UPLEFTFIRE,
 DOWNRIGHTFIRE, DOWNLEFTFIRE) = range(18)
FULL_ACTION_SET = tuple(range(18))
RESET = 40
"""ALE's `RESET` action: a frame with the console's RESET switch held. A few
games start every episode with it (`getStartingActions`)."""

PADDLE_MIN, PADDLE_MAX = 27450, 790196
"""ALE's default paddle resistance range (`paddle_min`/`paddle_max`)."""

RIOT_RAM_SIZE = 128
CART_RAM_SIZE = 128

VAR_SCORE, VAR_LIVES, VAR_AUX, VAR_TERMINAL = 0, 1, 2, 3
VAR_EXTRA = 4
NUM_EXTRA = 4
NUM_VARS = VAR_EXTRA + NUM_EXTRA

# Safety stop for the SELECT loops of `set_mode`; ALE would loop forever.
MAX_SELECT_PRESSES = 1000

StepResult = tuple[jax.Array, jax.Array, jax.Array, jax.Array]
"""`(reward int32, terminal bool, lives int32, new_vars int32[NUM_VARS])`."""

StepFn = Callable[[jax.Array, jax.Array], StepResult]
ModeShownFn = Callable[[np.ndarray, int], bool]


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
        swap_ports: whether the controller ports are swapped
            (`Console.SwapPorts`): player A plays on the right port.
        starting_actions: `getStartingActions()`, one action per frame,
            emulated at the end of every reset; `RESET` (40) is a frame
            with the RESET switch held.
        legal_actions: the actions `isLegal` accepts; ALE plays any other
            action as NOOP (all 18 for most games).
        paddle_range: (min, max) resistance of the paddles, ALE's
            `paddle_min`/`paddle_max` as the game sets them.
        height: the rows of ALE's screen: `Display.Height` (210 unless
            the property says otherwise), or 250 for a PAL cartridge left
            at 210, as Stella's console sets it.
        ram_size: how many RAM bytes `step` reads: 128 (the RIOT's), or
            256 for a game whose rules read the cartridge's extra RAM
            (RIOT RAM, then the 128 Superchip bytes).
        modes: `getAvailableModes()`.
        default_mode: `getDefaultMode()`.
        difficulties: `getAvailableDifficulties()`.
        default_difficulty: the difficulty ALE uses unless told otherwise.
        step: `step(ram, vars) -> (reward, terminal, lives, new_vars)`, pure
            and jittable: one frame of `RomSettings::step` followed by
            `getReward()`, `isTerminal()` and `lives()`. `ram` is uint8 or
            int32 of shape `[..., 128]`, `vars` int32 `[..., NUM_VARS]`.
        reset_vars: `reset_vars() -> int32[NUM_VARS]`, the carried state
            right after `RomSettings::reset()`.
        set_mode: `set_mode(ops, mode)`, host-side `RomSettings::setMode`.
        mode_shown: `mode_shown(ram, mode) -> bool`, the RAM test that
            `set_mode` waits for, or None when set_mode does not poll RAM.
        num_vars: the length of `vars` (`NUM_VARS`).
    """

    rom_id: str
    ale_name: str
    minimal_actions: tuple[int, ...]
    ystart: int
    hmove_blanks: bool
    paddles: bool
    swap_paddles: bool
    swap_ports: bool
    starting_actions: tuple[int, ...]
    legal_actions: tuple[int, ...]
    paddle_range: tuple[int, int]
    height: int
    ram_size: int
    modes: tuple[int, ...]
    default_mode: int
    difficulties: tuple[int, ...]
    default_difficulty: int
    step: StepFn = dataclasses.field(repr=False)
    reset_vars: Callable[[], jax.Array] = dataclasses.field(repr=False)
    set_mode: Callable[[ResetOps, int], None] = dataclasses.field(repr=False)
    mode_shown: ModeShownFn | None = dataclasses.field(repr=False,
                                                       default=None)
    num_vars: int = NUM_VARS


# ---------------------------------------------------------------------------
# RAM readers and the carried state, shared by the game modules.


def byte(ram: jax.Array, addr: int) -> jax.Array:
    """The RAM byte that ALE's `readRam(addr)` returns, as int32."""
    return ram[..., addr & 0x7F].astype(jnp.int32)


def bcd(ram: jax.Array, addr: int) -> jax.Array:
    """One byte read as two decimal digits: 10 * high nibble + low nibble.

    Nibbles above 9 are not rejected (0xC0 reads as 120), as in ALE.
    """
    value = byte(ram, addr)
    return 10 * (value >> 4) + (value & 0xF)


def bcd_score(ram: jax.Array, *addrs: int) -> jax.Array:
    """A score stored as BCD bytes, least significant byte first."""
    total = jnp.zeros(ram.shape[:-1], jnp.int32)
    for place, addr in enumerate(addrs):
        total = total + (100 ** place) * bcd(ram, addr)
    return total


def split_vars(vars_: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Splits `vars` into (score, lives, aux) int32 arrays."""
    vars_ = jnp.asarray(vars_, jnp.int32)
    return vars_[..., VAR_SCORE], vars_[..., VAR_LIVES], vars_[..., VAR_AUX]


def extra_vars(vars_: jax.Array) -> tuple[jax.Array, ...]:
    """The `NUM_EXTRA` further game-specific slots of `vars`, as a tuple."""
    vars_ = jnp.asarray(vars_, jnp.int32)
    return tuple(vars_[..., VAR_EXTRA + k] for k in range(NUM_EXTRA))


def result(reward: jax.Array, terminal: jax.Array, lives: jax.Array,
           score: jax.Array, lives_var: jax.Array, aux: jax.Array,
           extra: tuple[jax.Array | int, ...] = ()) -> StepResult:
    """Packs one frame's outputs and the new carried state.

    Args:
        reward, terminal, lives: what `getReward()`, `isTerminal()` and
            `lives()` return after this frame.
        score, lives_var, aux: the new slots 0, 1 and 2 of `vars`.
        extra: up to `NUM_EXTRA` values for slots 4 and on; missing ones
            are 0.
    """
    if len(extra) > NUM_EXTRA:
        raise ValueError(f"at most {NUM_EXTRA} extra vars, got {len(extra)}")
    extra = tuple(extra) + (0,) * (NUM_EXTRA - len(extra))
    parts = (reward, terminal, lives, score, lives_var, aux) + extra
    shape = jnp.broadcast_shapes(*(jnp.shape(x) for x in parts))

    def int32(x: jax.Array | int) -> jax.Array:
        return jnp.broadcast_to(jnp.asarray(x, jnp.int32), shape)

    terminal = jnp.broadcast_to(jnp.asarray(terminal, jnp.bool_), shape)
    new_vars = jnp.stack([int32(x) for x in (score, lives_var, aux, terminal)
                          + extra], axis=-1)
    return int32(reward), terminal, int32(lives), new_vars


def lives_unless_terminal(terminal: jax.Array, lives: jax.Array) -> jax.Array:
    """`lives()` of the games that report 0 lives once the game is over."""
    return jnp.where(terminal, 0, lives)


def reset_vars_fn(score: int = 0, lives: int = 0, aux: int = 0,
                  extra: tuple[int, ...] = ()) -> Callable[[], jax.Array]:
    """A `reset_vars` that returns the given post-`reset()` members."""
    if len(extra) > NUM_EXTRA:
        raise ValueError(f"at most {NUM_EXTRA} extra vars, got {len(extra)}")
    values = [score, lives, aux, 0] + list(extra)
    values += [0] * (NUM_VARS - len(values))

    def reset_vars() -> jax.Array:
        return jnp.array(values, jnp.int32)

    return reset_vars


# ---------------------------------------------------------------------------
# setMode.


def check_mode(mode: int, modes: tuple[int, ...]) -> None:
    """Raises ValueError unless `mode` is one of the game's `modes`."""
    if mode not in modes:
        raise ValueError(f"mode {mode} is not available; the game's modes "
                         f"are {modes}")


def no_set_mode(ops: ResetOps, mode: int) -> None:
    """The base `RomSettings::setMode`: only mode 0 exists, nothing to do."""
    del ops
    check_mode(mode, (0,))


def ram_byte(ram: np.ndarray | jax.Array, addr: int) -> np.ndarray:
    """RAM byte `addr` ($80-$FF, or its low 7 bits) as int32, from numpy
    or JAX RAM: the SELECT tests of `select_until` are written with it so
    that a reset replayed in JAX (`jaxatari.reset_carry`) can run them."""
    return ram[addr & 0x7F].astype(np.int32)


def select_until(ops: ResetOps, done: Callable[[np.ndarray], bool],
                 presses: int) -> None:
    """Presses SELECT (`presses` frames each) until `done(ram)`, then resets.

    `done` must also run on JAX RAM (`ram_byte`). A driver that records
    its frames is told of the loop first (`ops.select_loop(done,
    presses)`, where it has one).

    Raises:
        RuntimeError: if the mode never shows up in RAM.
    """
    notify = getattr(ops, "select_loop", None)
    if notify is not None:
        notify(done, presses)
    for _ in range(MAX_SELECT_PRESSES):
        if done(np.asarray(ops.ram())):
            ops.soft_reset()
            return
        ops.press_select(presses)
    raise RuntimeError("the game never reached the requested mode")


def mode_byte_shown(addr: int, offset: int = 0) -> ModeShownFn:
    """A `mode_shown` test: RAM byte `addr` equals `mode + offset`."""

    def shown(ram: np.ndarray, mode: int) -> bool:
        return ram_byte(ram, addr) == mode + offset

    return shown


def select_mode(modes: tuple[int, ...], shown: ModeShownFn, presses: int,
                ) -> Callable[[ResetOps, int], None]:
    """A `setMode` that presses SELECT until `shown(ram, mode)`, then resets.

    Args:
        modes: the game's modes; others raise ValueError.
        shown: the RAM test for "the wanted mode is selected".
        presses: frames SELECT is held per press (`pressSelect(presses)`).
    """

    def set_mode(ops: ResetOps, mode: int) -> None:
        check_mode(mode, modes)
        select_until(ops, lambda ram: shown(ram, mode), presses)

    return set_mode


def make_rules(rom_id: str, ale_name: str, step: StepFn, *,
               minimal_actions: tuple[int, ...] = FULL_ACTION_SET,
               reset_vars: Callable[[], jax.Array] | None = None,
               modes: tuple[int, ...] = (0,),
               default_mode: int | None = None,
               set_mode: Callable[[ResetOps, int], None] = no_set_mode,
               mode_shown: ModeShownFn | None = None,
               difficulties: tuple[int, ...] = (0,),
               default_difficulty: int = 0,
               starting_actions: tuple[int, ...] = (),
               ystart: int = 34, hmove_blanks: bool = True,
               paddles: bool = False, swap_paddles: bool = False,
               swap_ports: bool = False,
               legal_actions: tuple[int, ...] = FULL_ACTION_SET,
               paddle_range: tuple[int, int] = (PADDLE_MIN, PADDLE_MAX),
               height: int = 210,
               ram_size: int = RIOT_RAM_SIZE) -> GameRules:
    """Builds a `GameRules` with the defaults most games share.

    A game whose `setMode` presses SELECT until a RAM test holds passes
    that test twice: `set_mode=select_mode(modes, shown, presses)` and
    `mode_shown=shown`, so the tests can check it against ale-py.
    """
    if reset_vars is None:
        reset_vars = reset_vars_fn()
    return GameRules(
        rom_id=rom_id, ale_name=ale_name, minimal_actions=minimal_actions,
        ystart=ystart, hmove_blanks=hmove_blanks, paddles=paddles,
        swap_paddles=swap_paddles, swap_ports=swap_ports,
        starting_actions=starting_actions, legal_actions=legal_actions,
        paddle_range=paddle_range, height=height, ram_size=ram_size,
        modes=modes,
        default_mode=modes[0] if default_mode is None else default_mode,
        difficulties=difficulties, default_difficulty=default_difficulty,
        step=step, reset_vars=reset_vars, set_mode=set_mode,
        mode_shown=mode_shown)
