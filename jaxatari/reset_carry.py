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

* **At boot**, `depends_on_console` resets a booted state twice more, its
  RAM (and a DPC cartridge's registers, which `System::reset` keeps too)
  filled once with random bytes and once with their complement. If
  either ends anywhere other than as booted (RAM, registers, TIA, the
  screen shown, the rule variables, rewards, lives), the reset depends
  on the console it starts from. The fills are a test, not a proof: a byte the
  reset reads only to compare with one value could escape both.
* **Its script**, recorded from those resets (`ScriptRecorder`): each
  frame's joystick action and console switches, where ALE's
  `RomSettings::reset()` and the episode's start fall, and where the
  game's `setMode` loops on SELECT until RAM shows the mode
  (`games.core.select_until`): how often it presses depends on the RAM
  it finds, so the loop is kept as a loop, with its RAM test
  (`select_test`, written to run on JAX arrays too).
* **At every auto-reset** (`AtariEnv.reset_after`), `replay` runs the
  script from the played console: the `k`-th `System::reset` (its draws,
  `ResetInputs`), then the script's frames through the same compiled
  frame the step runs, its last two drawn (`DRAWN_FRAMES`: the screen
  and the TIA's other buffer come out as the boot's, which draws them
  all); a `lax.scan`,
  or with a SELECT loop a `lax.while_loop` of one frame an iteration. The
  booted state gives only the action, which does not depend on the
  console. Under `vmap`, `replay_where` replays only when a console
  needs it, not at every step: on the CPU the done consoles alone, one
  after another (`REPLAY_CHUNK`); on an accelerator the whole batch under
  one `lax.cond`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxatari import lowering, updates

RAM_SIZE = 128
FILL_SEED = 2600
DRAWN_FRAMES = 2
"""A replay draws its last frames only (`render` as data): the screen
shown and the TIA's other buffer, as the host's boot, which draws all."""
REPLAY_CHUNK = 1
"""The consoles the CPU's lowering replays at once: only the done ones,
gathered this many at a time (`_in_chunks`). Kung Fu Master's preset at
a batch of 64 (BENCHMARKS.md, "Resets after play"), chunks of 1, 4 and 8
against the whole batch: one console done cost 0.39, 0.92, 1.78 and 17.9
steps, all 64 done 22, 15, 14 and 18. One console at a time runs its
frame loop as one kernel (`updates`), and an env's episodes end a few at
a step, seldom all together."""


class NotReplayable(ValueError):
    """A reset that depends on the played console but whose script
    cannot be replayed from an arbitrary console: more than one SELECT
    loop, or a loop whose RAM test does not run on JAX arrays."""


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
        counted: int32, the frames ALE counts in the episode's frame
            number at its start, but the SELECT loop's presses.
        loop_at: int32, the SELECT loop's place: it runs before frame
            `loop_at` (-1: none).
        presses: the loop's SELECT frames a press (0: no loop); static.
    """
    inputs: Any
    actions: jax.Array
    buttons: jax.Array
    active: jax.Array
    begin: jax.Array
    start: jax.Array
    counted: jax.Array
    loop_at: jax.Array
    presses: int = struct.field(pytree_node=False, default=0)


class ScriptRecorder:
    """Records a driver's frames as a script (wraps `_EnvDriver`'s
    `frames` and `begin_episode`)."""

    def __init__(self) -> None:
        self.frames: list[tuple[int, int]] = []
        self.begin_at: list[int] = []
        self.start_at: list[int] = []
        self.loops: list[tuple[int, int]] = []
        self.counted = 0

    def frame(self, action: int, buttons: int) -> None:
        """One frame played."""
        self.frames.append((int(action), int(buttons)))

    def begin(self) -> None:
        """`RomSettings::reset()` now, before the next frame."""
        self.begin_at.append(len(self.frames))

    def start(self, counted: int) -> None:
        """The episode starts now (`episode_start`), `counted` frames in."""
        self.start_at.append(len(self.frames))
        self.counted = counted

    def select_loop(self, presses: int) -> None:
        """A SELECT loop (`select_until`) starts now."""
        self.loops.append((len(self.frames), presses))

    def script(self, inputs: Any) -> ResetScript:
        """The frames so far, a SELECT loop's presses taken out.

        Raises:
            NotReplayable: more than one SELECT loop.
        """
        if len(self.loops) > 1:
            raise NotReplayable(f"the reset has {len(self.loops)} SELECT "
                                "loops; a replay runs at most one")
        frames, begin_at, start_at = self.frames, self.begin_at, self.start_at
        loop_at, presses, pressed = -1, 0, 0
        if self.loops:
            (loop_at, presses), = self.loops
            end, press = loop_at, [(0, 2)] * presses + [(0, 0)]
            while frames[end:end + presses + 1] == press:
                end, pressed = end + presses + 1, pressed + 1
            frames = frames[:loop_at] + frames[end:]
            cut = lambda i: i if i <= loop_at else i - (end - loop_at)
            begin_at, start_at = map(cut, begin_at), map(cut, start_at)
        count = len(frames)
        begin, start = np.zeros(count, bool), np.zeros(count + 1, bool)
        begin[list(begin_at)], start[list(start_at)] = True, True
        return ResetScript(
            inputs, jnp.asarray([a for a, _ in frames], jnp.int32),
            jnp.asarray([b for _, b in frames], jnp.int32),
            jnp.ones(count, bool), jnp.asarray(begin), jnp.asarray(start),
            jnp.int32(self.counted - pressed), jnp.int32(loop_at), presses)


class _Found(Exception):
    """`_Probe` found the SELECT loop."""


class _Probe:
    """`games.ResetOps` that emulates nothing and stops at the SELECT
    loop of a `setMode`, to find its RAM test."""

    loop: tuple[Callable[[Any], Any], int] | None = None

    def ram(self) -> np.ndarray:
        return np.zeros(RAM_SIZE, np.uint8)

    def press_select(self, n: int = 1) -> None:
        del n

    def soft_reset(self) -> None:
        pass

    def act(self, action: int) -> None:
        del action

    def environment_rng_next(self) -> int:
        return 0

    def select_loop(self, done: Callable[[Any], Any], presses: int) -> None:
        self.loop = (done, presses)
        raise _Found


def select_test(rules: Any, mode: int) -> Callable[[Any], Any] | None:
    """The RAM test of `rules.set_mode(ops, mode)`'s SELECT loop (None
    without one); it runs on JAX RAM.

    Raises:
        NotReplayable: the test does not run on JAX arrays.
    """
    probe = _Probe()
    try:
        rules.set_mode(probe, mode)
    except _Found:
        done = probe.loop[0]
        try:
            jax.eval_shape(done, jax.ShapeDtypeStruct((RAM_SIZE,), jnp.uint8))
        except Exception as error:   # the test's own code, any failure
            raise NotReplayable(f"{rules.rom_id}'s SELECT test does not run "
                                f"on JAX arrays ({error})") from error
        return done
    return None


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


def depends_on_console(booted: Any, reset: Callable[[Any], Any]) -> bool:
    """Whether a reset's result depends on what `System::reset` keeps of
    the console it starts from: the RAM, and a DPC cartridge's registers
    (Pitfall II's random number and data fetchers).

    Args:
        booted: a booted reset state (an `EnvState`).
        reset: the same reset again (its `resets`-th `reset_game()`, with
            its settings) from a given state, on the host.
    """
    return not all(same_shown(reset(filled), booted)
                   for filled in _filled(booted))


def _filled(state: Any) -> list[Any]:
    """`state` with its RAM, and its DPC registers if it has them, filled
    with random bytes, then with their complement (`ram_fills`)."""
    chips = state.machine.chips
    states = []
    for complement, fill in enumerate(ram_fills()):
        filled = with_ram(state, fill)
        if chips.dpc is not None:
            draws = np.random.default_rng(FILL_SEED + 1)
            dpc = jax.tree.map(lambda x: jnp.asarray(
                np.abs(draws.integers(0, 256, x.shape) - 255 * complement),
                x.dtype), chips.dpc)
            filled = filled.replace(machine=filled.machine.replace(
                chips=chips.replace(dpc=dpc)))
        states.append(filled)
    return states


def _where(flag: jax.Array, a: Any, b: Any) -> Any:
    return jax.tree.map(lambda x, y: jnp.where(flag, x, y), a, b)


def replay(env: Any, played: Any, script: ResetScript, fresh: Any,
           mode: int, difficulty: int) -> Any:
    """The reset `script` from the console `played`: the state ALE's reset
    reaches from it.

    Args:
        env: the `AtariEnv` (its board, frame and rules).
        played: the `EnvState` the episode ended in.
        script: the reset's `ResetScript`.
        fresh: the booted state of the same reset: the action, which does
            not depend on the console, comes from it.
        mode, difficulty: ALE's settings (`EnvParams.mode`, `.difficulty`).
    """
    from jaxatari import console, environment   # the env imports this
    machine = console.system_reset(env.board, played.machine, script.inputs)
    state = played.replace(machine=machine,
                           paddles=environment.paddle_centre(env.controls))

    drawn = len(script.actions) - DRAWN_FRAMES

    def frame(state, pc, action, buttons, run):
        new = env._frame(state, action, buttons, jnp.int32(difficulty),
                         pc >= drawn)
        return _where(run, new, state)

    if script.presses:
        state, pressed = _replay_loop(frame, env.rules.reset_vars, state,
                                      script, select_test(env.rules, mode))
    else:
        def scripted(state, pc):
            state = _marked(env.rules.reset_vars, state, script, pc,
                            jnp.int32(0))
            return frame(state, pc, script.actions[pc], script.buttons[pc],
                         script.active[pc]), None
        state, _ = jax.lax.scan(scripted, state,
                                jnp.arange(len(script.actions)))
        pressed = jnp.int32(0)
    state = _started(state, script, len(script.actions), pressed)
    return state.replace(action=fresh.action)


def _started(state: Any, script: ResetScript, pc: jax.Array | int,
             pressed: jax.Array) -> Any:
    """`state`, the episode started if it starts before frame `pc`: no
    reward yet, and the frames counted (`pressed` SELECT presses too)."""
    started = state.replace(reward=jnp.int32(0),
                            episode_frame=script.counted + pressed)
    return _where(script.start[pc], started, state)


def _marked(reset_vars: Callable, state: Any, script: ResetScript,
            pc: jax.Array, pressed: jax.Array) -> Any:
    """`state` with the marks before frame `pc`: the rules' reset, the
    episode's start."""
    state = _where(script.begin[pc], state.replace(vars=reset_vars()), state)
    return _started(state, script, pc, pressed)


def _replay_loop(frame: Callable, reset_vars: Callable, state: Any,
                 script: ResetScript, done: Callable[[Any], Any]
                 ) -> tuple[Any, jax.Array]:
    """The script's frames, one an iteration, and its SELECT loop where it
    stands: before each press `done(ram)` is tested, and once it holds the
    script goes on (`select_until`). A press is `presses` SELECT frames
    then a NOOP frame, and ALE counts it as one frame (`press_select`).
    Returns the state and the presses made."""
    from jaxatari import games   # the env imports this
    length, presses = len(script.actions), script.presses
    bound = length + games.core.MAX_SELECT_PRESSES * (presses + 1)

    def body(carry):
        state, pc, sub, pressed, last, steps = carry
        # the rules' reset comes before the loop, in setMode's reset
        state = _where((pc != last) & script.begin[pc],
                       state.replace(vars=reset_vars()), state)
        pressing = (pc == script.loop_at) & ~(
            (sub == 0) & done(state.machine.riot.ram))
        state = _where(pressing, state,
                       _started(state, script, pc, pressed))
        action = jnp.where(pressing, 0, script.actions[pc])
        buttons = jnp.where(pressing, jnp.where(sub < presses, 2, 0),
                            script.buttons[pc]).astype(jnp.int32)
        state = frame(state, pc, action, buttons,
                      pressing | script.active[pc])
        pressed = pressed + (pressing & (sub == 0))
        sub = jnp.where(pressing, (sub + 1) % (presses + 1), 0)
        return (state, jnp.where(pressing, pc, pc + 1), sub, pressed, pc,
                steps + 1)

    zero = jnp.int32(0)
    state, _, _, pressed, _, _ = jax.lax.while_loop(
        lambda carry: (carry[1] < length) & (carry[5] < bound), body,
        (state, zero, zero, zero, jnp.int32(-1), zero))
    return state, pressed


def replay_where(env: Any, done: jax.Array, played: Any,
                 script: ResetScript, fresh: Any, mode: int,
                 difficulty: int) -> Any:
    """`replay` where `done`, else `fresh`; replayed only when needed.

    One console: a `lax.cond`. Under `vmap` (its own rule,
    `_replay_batch`): on the CPU a loop over the done consoles, a chunk
    at a time; on an accelerator one `lax.cond` for the batch, replaying
    every console when any is done and keeping the replay where it is (a
    plain vmap would replay at every step). A vmap around that (a
    population of batches) joins the batch, so it stays one loop or one
    cond.
    """
    @jax.custom_batching.custom_vmap
    def pick(done, played, script, fresh):
        return jax.lax.cond(
            done, lambda: replay(env, played, script, fresh, mode,
                                 difficulty),
            lambda: fresh)

    @pick.def_vmap
    def batch(axis_size, in_batched, *args):
        args = [updates.broadcast(axis_size, batched, tree)
                for batched, tree in zip(in_batched, args)]
        out = _replay_batch(env, mode, difficulty)(*args)
        return out, jax.tree.map(lambda _: True, out)

    return pick(done, played, script, fresh)


def _replay_batch(env: Any, mode: int, difficulty: int):
    """`replay_where` of a batch (a leading axis on every argument), as a
    `custom_vmap` function that a further vmap flattens into its batch.

    Per backend (`lowering.per_backend`): the CPU replays only the done
    consoles, `REPLAY_CHUNK` at a time (`_in_chunks`); an accelerator
    replays the whole batch under one `lax.cond` (a loop over chunks
    would cost it a whole replay's kernel launches per chunk). A batch of
    at most `REPLAY_CHUNK` consoles is one cond on both."""
    def replay_one(played, script, fresh):
        return replay(env, played, script, fresh, mode, difficulty)

    @jax.custom_batching.custom_vmap
    def run(done, played, script, fresh):
        def whole():
            def replayed():
                again = jax.vmap(replay_one)(played, script, fresh)
                return jax.vmap(_where)(done, again, fresh)
            return jax.lax.cond(jnp.any(done), replayed, lambda: fresh)

        if done.shape[0] <= REPLAY_CHUNK:
            return whole()
        return lowering.per_backend(
            cpu=lambda: _in_chunks(replay_one, done, played, script, fresh),
            accelerator=whole)

    @run.def_vmap
    def flattened(axis_size, in_batched, *args):
        size = args[0].shape[-1]   # `done`: one flag a console
        merged, _ = updates.merge_batch_axes(
            axis_size, size, args, tuple(in_batched),
            jax.tree.map(lambda _: 0, args))
        out = run(*merged)
        out = jax.tree.map(
            lambda x: x.reshape((axis_size, size) + x.shape[1:]), out)
        return out, jax.tree.map(lambda _: True, out)
    return run


def _in_chunks(replay_one: Callable, done: jax.Array, played: Any,
               script: ResetScript, fresh: Any) -> Any:
    """`fresh`, with `replay_one` of each done console in its place: the
    done consoles gathered `REPLAY_CHUNK` at a time (in index order), a
    `lax.while_loop` of as many trips as their count needs (none when no
    console is done), as `tia_gather.write_compacted` gathers its writers.
    Lanes past the last done console replay a clipped index and are not
    written back (their index is out of range, dropped)."""
    size = done.shape[0]

    def body(carry):
        todo, out = carry
        index = jnp.nonzero(todo, size=REPLAY_CHUNK, fill_value=size)[0]
        gathered = jax.tree.map(lambda x: x.at[index].get(mode="clip"),
                                (played, script, fresh))
        replayed = jax.vmap(replay_one)(*gathered)
        out = jax.tree.map(lambda o, r: o.at[index].set(r, mode="drop"),
                           out, replayed)
        return todo.at[index].set(False, mode="drop"), out

    _, out = jax.lax.while_loop(lambda carry: jnp.any(carry[0]), body,
                                (done, fresh))
    return out


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
    loop_at = int(script.loop_at)
    return script.replace(
        actions=grow(script.actions, actions, 0),
        buttons=grow(script.buttons, [0] * count, 0),
        active=grow(script.active, [True] * count, False),
        begin=grow(script.begin, [False] * count, False),
        start=grow(script.start, [False] * count, False),
        loop_at=jnp.int32(loop_at + pad if loop_at >= 0 else -1))
