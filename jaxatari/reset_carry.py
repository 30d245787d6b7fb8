"""What ALE's `reset_game()` keeps of the console it resets.

ALE resets a game on the console that has just played it
(`StellaEnvironment::reset`, ale-facts §1.3). `System::reset` sets the
CPU, the TIA, the RIOT's registers and the cartridge's bank, but keeps the
128 bytes of RIOT RAM; the game's own start-up code, run in the NOOP and
RESET frames that follow, decides which of them it overwrites. Most games
overwrite them all, so every reset after play starts the same episode as
a reset of a console that never played, which is what jaxatari's booted
states (`EnvParams.reset_states`) are. Some do not: after a game of Kung
Fu Master, ALE's reset keeps 7 bytes (81 and 90-95) as the game left them,
and about one game in ten does something similar (BENCHMARKS.md).

For those games the env replays the reset instead of copying it:

* **At boot**, `depends_on_ram` resets a booted state twice more, its RAM
  filled once with random bytes and once with their complement. If either
  ends anywhere other than as booted (RAM, registers, TIA, the screen
  shown, the rule variables, rewards, lives), the reset depends on the
  console it starts from. The fills are a test, not a proof: a byte the
  reset reads only to compare with one value could escape both.
* **Its script**, recorded from those resets (`ScriptRecorder`): each
  frame's joystick action and console switches, and where ALE's
  `RomSettings::reset()` and the episode's start fall. A reset whose
  `setMode` pressed SELECT is refused (`NotReplayable`): how often it
  presses depends on the RAM it finds.
* **At every auto-reset** (`AtariEnv.reset_after`), `replay` runs the
  script from the played console: the `k`-th `System::reset` (its draws,
  `ResetInputs`), then the script's frames through the same compiled
  frame the step runs, every one drawn (as the host's boot draws them:
  the TIA's other screen buffer comes out the same too). The booted state gives only what does not depend
  on the console (the action, the frame count). Under `vmap`, `replay_where`
  runs the script for the whole batch once, when any console needs it, not
  at every step.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxatari import updates

RAM_SIZE = 128
FILL_SEED = 2600


class NotReplayable(ValueError):
    """A reset that depends on the played console but whose script
    cannot be replayed from an arbitrary console."""


@struct.dataclass
class ResetScript:
    """The frames of one reset, for `replay` (one per reset state; stacked
    in `EnvParams.reset_scripts`).

    Attributes:
        inputs: the `System::reset`'s draws (`system_rng.ResetInputs`).
        actions: int32[L], each frame's ALE action.
        buttons: int32[L], 0, 1 (RESET held) or 2 (SELECT held).
        active: bool[L]; padding frames (False) come first.
        begin: bool[L], `RomSettings::reset()` before this frame.
        start: bool[L + 1], the episode starts (no action or reward yet)
            before this frame; index L: after the last.
    """
    inputs: Any
    actions: jax.Array
    buttons: jax.Array
    active: jax.Array
    begin: jax.Array
    start: jax.Array


class ScriptRecorder:
    """Records a driver's frames as a script (wraps `_EnvDriver`'s
    `frames` and `begin_episode`)."""

    def __init__(self) -> None:
        self.frames: list[tuple[int, int]] = []
        self.begin_at: list[int] = []
        self.start_at: list[int] = []

    def frame(self, action: int, buttons: int) -> None:
        """One frame played."""
        self.frames.append((int(action), int(buttons)))

    def begin(self) -> None:
        """`RomSettings::reset()` now, before the next frame."""
        self.begin_at.append(len(self.frames))

    def start(self) -> None:
        """The episode starts now (`episode_start`)."""
        self.start_at.append(len(self.frames))

    def script(self, inputs: Any, length: int | None = None) -> ResetScript:
        """The frames so far, front-padded to `length`.

        Raises:
            NotReplayable: a SELECT frame (see the module's docstring).
        """
        if any(buttons == 2 for _, buttons in self.frames):
            raise NotReplayable("the reset's setMode pressed SELECT, as "
                                "often as the RAM it found asked")
        count = len(self.frames)
        pad = (length or count) - count
        actions = np.zeros(pad + count, np.int32)
        buttons = np.zeros(pad + count, np.int32)
        actions[pad:] = [a for a, _ in self.frames]
        buttons[pad:] = [b for _, b in self.frames]
        active = np.arange(pad + count) >= pad
        begin = np.zeros(pad + count, bool)
        begin[[pad + i for i in self.begin_at]] = True
        start = np.zeros(pad + count + 1, bool)
        start[[pad + i for i in self.start_at]] = True
        return ResetScript(inputs, jnp.asarray(actions), jnp.asarray(buttons),
                           jnp.asarray(active), jnp.asarray(begin),
                           jnp.asarray(start))


def ram_fills() -> tuple[np.ndarray, np.ndarray]:
    """Two fills of the RAM that differ in every bit: random bytes (a
    fixed seed) and their complement."""
    fill = np.random.default_rng(FILL_SEED).integers(
        0, 256, RAM_SIZE, dtype=np.uint8)
    return fill, ~fill


def with_ram(state: Any, ram: Any) -> Any:
    """An `EnvState` whose console's RIOT RAM is `ram` (uint8[..., 128])."""
    machine = state.machine
    riot = machine.riot.replace(ram=jnp.asarray(ram, jnp.uint8))
    return state.replace(machine=machine.replace(riot=riot))


def shown_leaves(state: Any) -> list[np.ndarray]:
    """What an `EnvState` shows, on the host: every leaf but the TIA's
    two screen buffers and which one is shown, then the screen shown.
    (The other buffer is never observed: a step draws what it shows.)"""
    tia = state.machine.tia
    shown = np.asarray(tia.screen[tia.buffer])
    hidden = tia.replace(screen=jnp.zeros((), tia.screen.dtype),
                         regs={**tia.regs, "buffer": jnp.zeros((), jnp.int32)})
    state = state.replace(machine=state.machine.replace(tia=hidden))
    return [np.asarray(leaf) for leaf in jax.tree.leaves(state)] + [shown]


def same_shown(a: Any, b: Any) -> bool:
    """Whether two `EnvState`s show the same (`shown_leaves`)."""
    return all(np.array_equal(x, y)
               for x, y in zip(shown_leaves(a), shown_leaves(b)))


def depends_on_ram(booted: Any, reset: Callable[[Any], Any]) -> bool:
    """Whether a reset's result depends on the RAM it starts from.

    Args:
        booted: a booted reset state (an `EnvState`).
        reset: the same reset again (its `resets`-th `reset_game()`, with
            its settings) from a given state, on the host.
    """
    return not all(same_shown(reset(with_ram(booted, fill)), booted)
                   for fill in ram_fills())


def _where(flag: jax.Array, a: Any, b: Any) -> Any:
    return jax.tree.map(lambda x, y: jnp.where(flag, x, y), a, b)


def replay(env: Any, played: Any, script: ResetScript, fresh: Any,
           difficulty: int) -> Any:
    """The reset `script` from the console `played`: the state ALE's reset
    reaches from it.

    Args:
        env: the `AtariEnv` (its board, frame and rules).
        played: the `EnvState` the episode ended in.
        script: the reset's `ResetScript`.
        fresh: the booted state of the same reset: the action and frame
            count, which do not depend on the console, come from it.
        difficulty: the difficulty switch (`EnvParams.difficulty`).
    """
    from jaxatari import console, environment   # the env imports this
    machine = console.system_reset(env.board, played.machine, script.inputs)
    state = played.replace(machine=machine,
                           paddles=environment.paddle_centre(env.controls))

    def frame(state, inputs):
        action, buttons, active, begin, start = inputs
        state = _where(begin, state.replace(vars=env.rules.reset_vars()),
                       state)
        state = _where(start, state.replace(reward=jnp.int32(0)), state)
        new = env._frame(state, action, buttons, jnp.int32(difficulty), True)
        return _where(active, new, state), None

    state, _ = jax.lax.scan(frame, state, (
        script.actions, script.buttons, script.active, script.begin,
        script.start[:-1]))
    state = _where(script.start[-1], state.replace(reward=jnp.int32(0)),
                   state)
    return state.replace(action=fresh.action,
                         episode_frame=fresh.episode_frame)


def replay_where(env: Any, done: jax.Array, played: Any,
                 script: ResetScript, fresh: Any, difficulty: int) -> Any:
    """`replay` where `done`, else `fresh`; replayed only when needed.

    One console: a `lax.cond`. Under `vmap` (its own rule): one `lax.cond`
    for the batch, replaying every console when any is done and keeping
    the replay where it is (a plain vmap would replay at every step).
    """
    @jax.custom_batching.custom_vmap
    def pick(done, played, script, fresh):
        return jax.lax.cond(
            done, lambda: replay(env, played, script, fresh, difficulty),
            lambda: fresh)

    @pick.def_vmap
    def batch(axis_size, in_batched, done, played, script, fresh):
        args = [updates.broadcast(axis_size, batched, tree) for batched, tree
                in zip(in_batched, (done, played, script, fresh))]
        done, played, script, fresh = args

        def replayed():
            again = jax.vmap(lambda p, s, f: replay(env, p, s, f,
                                                    difficulty))
            return _where_batch(done, again(played, script, fresh), fresh)
        out = jax.lax.cond(jnp.any(done), replayed, lambda: fresh)
        return out, jax.tree.map(lambda _: True, out)

    return pick(done, played, script, fresh)


def _where_batch(flag: jax.Array, a: Any, b: Any) -> Any:
    return jax.tree.map(
        lambda x, y: jnp.where(flag.reshape(flag.shape + (1,) * (x.ndim - 1)),
                               x, y), a, b)


def followed_by(script: ResetScript, actions: list[int],
                length: int) -> ResetScript:
    """One reset's script with start frames after it (each `actions`
    entry a frame of that ALE action, no switch), front-padded to
    `length` frames: the script of a start state (`AtariPreprocessing`)."""
    count = len(actions)
    pad = length - len(script.actions) - count
    if pad < 0:
        raise ValueError(f"a script of {len(script.actions) + count} frames"
                         f" does not fit in {length}")

    def grow(x, tail, fill):
        x = np.asarray(x)
        return jnp.asarray(np.concatenate(
            [np.full(pad, fill, x.dtype), x, np.asarray(tail, x.dtype)]))
    return ResetScript(
        script.inputs, grow(script.actions, actions, 0),
        grow(script.buttons, [0] * count, 0),
        grow(script.active, [True] * count, False),
        grow(script.begin, [False] * count, False),
        grow(script.start, [False] * count, False))
