"""Many consoles, of one game or many, driven in lock-step by host scripts.

ALE's reset sequences and the parity tool are imperative host code: they
read RAM between frames and decide what to press next (`setMode` cycles
SELECT until a RAM byte shows the mode). Run one console at a time and each
frame is a dispatch of its own; run them together and one vmapped frame
serves them all.

`Lockstep` does the latter. Each console runs its *script*, an ordinary
Python function given a `Handle` (a `environment.ConsoleDriver`), in a thread
of its own. A handle's `frames` and `system_reset` block until every live
script has asked for its next operation; then the coordinator runs all
requested resets as one batched call and all requested frames as another
(consoles that asked for nothing else are masked), and releases the scripts.
The batch is split over all devices, each running its share as a program
of its own (`jaxatari.sharding`); idle consoles pad it to a multiple of
the device count.
The programs are game-agnostic: the cartridge, the display window, the
controller type and the difficulty switches are per-console data, so one
compiled program serves any mix of games. The game rules (`RomSettings::
step`) run on the host after each frame, per console.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh

from jaxatari import console, environment, games, sharding, system_rng

Script = Callable[["Handle"], Any]


class Slot(NamedTuple):
    """What is fixed for one console: its game's hardware and controller."""
    board: console.Board
    controls: environment.Controls


def make_slot(env: environment.AtariEnv) -> Slot:
    """The per-console data of one environment's game and settings."""
    return Slot(board=env.board, controls=environment.Controls(
        *(jnp.asarray(value) for value in env.controls)))


def _one_frame(slot: Slot, machine: console.Console, paddles: jax.Array,
               action: jax.Array, buttons: jax.Array, active: jax.Array):
    """One rendered ALE frame of one console (unchanged if not `active`)."""
    stepped, paddles_after = environment.console_frame(
        slot.board, slot.controls, machine, paddles, action, buttons, True)
    keep = lambda new, old: jnp.where(active, new, old)
    return (jax.tree.map(keep, stepped, machine), keep(paddles_after, paddles))


def _one_reset(slot: Slot, machine: console.Console, paddles: jax.Array,
               inputs: system_rng.ResetInputs, active: jax.Array):
    """`System::reset` of one console with paddles centred, if `active`."""
    reset = console.system_reset(slot.board, machine, inputs)
    centred = environment.paddle_centre(slot.controls)
    keep = lambda new, old: jnp.where(active, new, old)
    return jax.tree.map(keep, reset, machine), keep(centred, paddles)


def _all_ram(machines: console.Console) -> jax.Array:
    """uint8[B, 256]: each console's RIOT RAM, then its Superchip RAM (zeros
    without one), for `Handle.ram`."""
    return jax.vmap(lambda m: environment.rules_ram(
        m, games.core.RIOT_RAM_SIZE + games.core.CART_RAM_SIZE))(machines)


def _frames(slots, machines, paddles, actions, buttons, active):
    machines, paddles = jax.vmap(_one_frame)(slots, machines, paddles,
                                             actions, buttons, active)
    return (machines, paddles, _all_ram(machines),
            jax.vmap(console.scanlines)(machines))


def _resets(slots, machines, paddles, inputs, active):
    machines, paddles = jax.vmap(_one_reset)(slots, machines, paddles,
                                             inputs, active)
    return (machines, paddles, _all_ram(machines),
            jax.vmap(console.scanlines)(machines))


@functools.cache
def _programs(mesh: Mesh):
    """The batched frame, reset and screen programs over `mesh`."""
    return (sharding.over_batch(_frames, mesh, (True,) * 6),
            sharding.over_batch(_resets, mesh, (True,) * 5),
            sharding.over_batch(jax.vmap(console.screen), mesh, (True,)))


@jax.jit
def _gather(tree, index: jax.Array):
    """Consoles `index` of a batch, every leaf in one program (leaf by leaf,
    eagerly, a tick of a few consoles cost more than their frame)."""
    return jax.tree.map(lambda x: x[index], tree)


@jax.jit
def _scatter(whole, part, index: jax.Array):
    """`whole` with consoles `index` replaced by `part`'s."""
    return jax.tree.map(lambda w, p: w.at[index].set(p), whole, part)


@functools.cache
def _rules_step(rom_id: str):
    return jax.jit(games.lookup(rom_id).step)


class Handle(environment.ConsoleDriver):
    """One console inside a `Lockstep`; its script's view of the machine.

    Besides the `ConsoleDriver` operations it keeps the game's host-side
    state after each frame: `reward`, `terminal`, `lives`.
    """

    def __init__(self, group: "Lockstep", index: int,
                 env: environment.AtariEnv):
        self.group, self.index, self.env = group, index, env
        self.rules = env.rules
        # ALE's environment RNG for setMode's draws; a script's play between
        # resets (ALE's sticky tests) is not counted in it.
        self.random_seed = env.random_seed
        self.vars = env.rules.reset_vars()
        self.reward, self.terminal, self.lives = 0, False, 0
        self.pal = False
        self.request: tuple | None = None
        self.posted, self.released = threading.Event(), threading.Event()
        self.finished, self.result, self.error = False, None, None

    # The primitives, served by the coordinator.
    def frames(self, action: int, buttons: int, count: int) -> None:
        for _ in range(count):
            self._ask(("frame", int(action), int(buttons)))
            if buttons != 2:   # ALE's pressSelect skips RomSettings::step
                self._rules_step()

    def system_reset(self, resets: int, pal: bool | None = None) -> None:
        if pal is not None and resets >= 2:   # detected (reset 1 is NTSC)
            rows = console.board_for_format(self.env.board, pal).features
            if rows.rows != self.env.board.features.rows:
                raise ValueError(
                    f"{self.rules.rom_id}: ALE detects "
                    f"{'PAL' if pal else 'NTSC'}, but the board was built "
                    f"for {console.display_format(self.env.board)} (see "
                    "cart.PAL_MD5S); boot an AtariEnv alone to refit it")
        if pal is not None:
            self.pal = pal
        self._ask(("reset", system_rng.reset_inputs(
            resets, self.env.cart.has_ram, self.pal)))

    def scanlines(self) -> int:
        return int(self.group.host_scanlines[self.index])

    def begin_episode(self) -> None:
        self.vars = self.rules.reset_vars()

    def ram(self) -> np.ndarray:
        """The RAM the game's rules read: ALE's 128 bytes (`getRAM`), or
        256 with the Superchip RAM for a game whose rules need it."""
        return self.group.host_ram[self.index, :self.rules.ram_size]

    def screen(self) -> np.ndarray:
        """uint8[rows, 160]: the screen after the last frame (210 rows, or
        250 for a PAL game, whatever the batch's widest board)."""
        rows = self.env.board.features.rows
        return self.group.host_screens()[self.index, :rows]

    def _rules_step(self) -> None:
        reward, terminal, lives, self.vars = _rules_step(self.rules.rom_id)(
            jnp.asarray(self.ram(), jnp.int32), self.vars)
        self.reward, self.terminal = int(reward), bool(terminal)
        self.lives = int(lives)

    def _ask(self, request: tuple) -> None:
        self.request = request
        self.posted.set()
        self.released.wait()
        self.released.clear()

    def _main(self, script: Script) -> None:
        try:
            self.result = script(self)
        except BaseException as error:  # reported by Lockstep.run
            self.error = error
        self.finished = True
        self.posted.set()


class Lockstep:
    """A batch of consoles (one environment each) stepped together."""

    def __init__(self, envs: list[environment.AtariEnv]):
        self.envs = envs
        # Idle consoles pad the batch to a multiple of the device count.
        self.size = -(-len(envs) // len(jax.devices())) * len(jax.devices())
        padded = envs + [envs[-1]] * (self.size - len(envs))
        stack = lambda *xs: jnp.stack(xs)
        # One program for all: every board gets the union of the features.
        features = console.union_features([e.board.features for e in envs])
        slots = [make_slot(e)._replace(board=console.widen_board(
            e.board, features)) for e in padded]
        self.slots = jax.tree.map(stack, *slots)
        self.machines = jax.tree.map(
            stack, *[console.power_on(s.board) for s in slots])
        self.paddles = jax.vmap(environment.paddle_centre)(
            self.slots.controls)
        mesh = sharding.batch_mesh(self.size)
        self._frames, self._resets, self._screens_of = _programs(mesh)
        # A tick where only a few consoles play a frame (one game's long
        # setMode, the last runs of a parity batch) runs them alone.
        self._straggler_size = len(mesh.devices.flat)
        self._small_frames = _programs(
            sharding.batch_mesh(self._straggler_size))[0]
        self.slots, self.machines, self.paddles = jax.device_put(
            (self.slots, self.machines, self.paddles),
            sharding.batch_sharding(mesh))
        self._sharding = sharding.batch_sharding(mesh)
        self.host_ram = np.asarray(_all_ram(self.machines))
        self.host_scanlines = np.zeros(self.size, np.int32)
        self._screens = None
        self._lock = threading.Lock()

    def host_screens(self) -> np.ndarray:
        """uint8[B, 210, 160], fetched from the device once per tick."""
        with self._lock:
            if self._screens is None:
                self._screens = np.asarray(self._screens_of(self.machines))
            return self._screens

    def run(self, scripts: list[Script]) -> list[Any]:
        """Run one script per console to its end; returns their results.

        Raises:
            RuntimeError: if any script raised (the others still finish).
        """
        if len(scripts) != len(self.envs):
            raise ValueError(f"{len(scripts)} scripts for "
                             f"{len(self.envs)} consoles")
        handles = [Handle(self, i, e) for i, e in enumerate(self.envs)]
        threads = [threading.Thread(target=h._main, args=(s,), daemon=True)
                   for h, s in zip(handles, scripts)]
        for thread in threads:
            thread.start()
        while True:
            for handle in handles:
                handle.posted.wait()
            live = [h for h in handles if not h.finished]
            if not live:
                break
            self._serve(live)
            for handle in live:
                handle.posted.clear()
                handle.released.set()
        failed = [(h.index, h.error) for h in handles if h.error is not None]
        if failed:
            raise RuntimeError(f"scripts failed: {failed}") from failed[0][1]
        return [h.result for h in handles]

    def _straggler_frames(self, frames: dict[int, tuple[int, int]]):
        """A frame of a few consoles only (the others wait): run it on a
        batch of `_straggler_size` gathered consoles, not the whole one,
        and scatter them back. Returns the whole batch's RAM and lines."""
        idle = next(k for k in range(self.size) if k not in frames)
        index = np.array(sorted(frames) + [idle] * (
            self._straggler_size - len(frames)))
        pressed = np.array([frames.get(int(k), (0, 0)) for k in index],
                           np.int32)
        active = np.isin(index, list(frames))
        machines, paddles, ram, lines = self._small_frames(
            *_gather((self.slots, self.machines, self.paddles), index),
            pressed[:, 0], pressed[:, 1], active)
        self.machines, self.paddles = _scatter(
            (self.machines, self.paddles), (machines, paddles), index)
        host_ram, host_lines = self.host_ram.copy(), self.host_scanlines.copy()
        host_ram[index], host_lines[index] = np.asarray(ram), np.asarray(lines)
        return host_ram, host_lines

    def _serve(self, live: list[Handle]) -> None:
        """One tick: every requested system reset, then frame."""
        size = self.size
        resets = {h.index: h.request[1] for h in live
                  if h.request[0] == "reset"}
        frames = {h.index: h.request[1:] for h in live
                  if h.request[0] == "frame"}
        if resets:
            idle = system_rng.reset_inputs(1)
            inputs = jax.tree.map(lambda *xs: np.stack(xs), *[
                resets.get(k, idle) for k in range(size)])
            active = np.isin(np.arange(size), list(resets))
            self.machines, self.paddles, ram, lines = self._resets(
                self.slots, self.machines, self.paddles, inputs, active)
            self.host_ram, self.host_scanlines = (np.asarray(ram),
                                                  np.asarray(lines))
        if frames and len(frames) <= self._straggler_size < size:
            ram, lines = self._straggler_frames(frames)
        elif frames:
            pressed = np.zeros((size, 2), np.int32)
            pressed[list(frames)] = list(frames.values())
            active = np.isin(np.arange(size), list(frames))
            self.machines, self.paddles, ram, lines = self._frames(
                self.slots, self.machines, self.paddles, pressed[:, 0],
                pressed[:, 1], active)
        if frames:
            self.host_ram = np.asarray(ram)
            self.host_scanlines = np.asarray(lines)
        with self._lock:
            self._screens = None
