"""ALE's environment on top of the console: actions, reset, rewards.

This is ALE's `StellaEnvironment` plus Gymnasium's `AtariEnv`, in the gymnax
convention:

    env, params = jaxatari.make("breakout")
    obs, state = env.reset(key, params)
    obs, state, reward, done, info = env.step(key, state, action, params)

* **Actions** index `env.action_set`: ALE action ids, the minimal set in
  `getMinimalActionSet()` order (or all 18 with `full_action_space=True`).
  Joystick games see them on SWCHA/INPT4; paddle games (Pong, Breakout) move
  the paddle by 23,000 ohms per frame, within the game's paddle range, and
  press its button. As in ALE, an action the game calls illegal, and an
  index out of range (nothing can raise inside `jit`), play NOOP;
  `checked_step` raises on the host for an index out of range.
* **Sticky actions**, ALE's semantics: before every emulated frame, with
  probability `repeat_action_probability` the previous frame's action is
  kept. The draws come from the JAX key, not from ALE's mt19937;
  `info["applied_actions"]` reports the action each frame got, so ale-py
  fed those actions without stickiness replays the step exactly.
* **Modes and difficulties** (`EnvParams.mode`, `.difficulty`) are ALE's
  values; they shape the reset, so `env.make_params(mode=...)` boots the
  resets for them.
* **Reset** reproduces `loadROM()` + `reset_game()` on the host, once per
  game: the power-on RAM from Stella's fixed-seed generator, 60 frames of
  autodetection, 60 NOOP frames, RESET presses, the game's `setMode` and
  starting actions. ALE draws a fresh RIOT timer at each reset, so
  consecutive resets differ; `EnvParams.reset_states` holds the states of
  that many consecutive `reset_game()` calls (the first equals a freshly
  seeded Gymnasium reset) and `reset` picks one by key. ALE goes through
  its sequence in order and never repeats it (its k-th reset after
  `loadROM` is always state k); jaxatari draws uniformly among the first
  `num_reset_states` (4 by default) at every reset, so it reaches the same
  start states but in random order, and none beyond them.
* **Resets after play.** ALE resets the console that just played, and its
  `System::reset` keeps the RAM; most games' start-up code overwrites it
  all, but 15 of the 104 keep some of the last episode (Kung Fu Master:
  7 RAM bytes; Pitfall II: its DPC chip's random number). `reset` is
  ALE's reset of a console just loaded (a seeded Gymnasium reset);
  `step`'s auto-reset is `reset_after`, which for those games replays the
  reset from the played console (`jaxatari.reset_carry`,
  `params.reset_scripts`), and for the others copies the cached state.
* **Rewards, game over and lives** are the game's `RomSettings`
  (`jaxatari.games`), evaluated after every frame. An episode also ends at
  `max_num_frames_per_episode` frames, as ALE truncates it. `step`
  auto-resets on done; the returned observation is then the reset one.
"""
from __future__ import annotations

import dataclasses
import functools
import os
import pathlib
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax.experimental import checkify

from jaxatari import cart as cartridge
from jaxatari import (boot_cache, console, games, lowering, palette,
                      reset_carry, spaces, system_rng, tia)
from jaxatari.ale_sequences import (ConsoleDriver, load_rom,
                                    reset_game)
from jaxatari.controls import (Controls, controller_inputs, move_paddle,
                               paddle_centre, sticky_actions, switches,
                               to_ale_action)
from jaxatari.settings import check_settings

RESET_ACTION, SELECT = 40, -1
# `AtariEnv.boot`'s states and board, by `boot_key`
_BOOTED: dict[tuple, tuple] = {}


@struct.dataclass
class EnvState:
    """One environment (a batch axis under vmap)."""
    machine: console.Console
    vars: jax.Array
    paddles: jax.Array          # int32[2] resistances of paddles 0 and 1
    action: jax.Array           # the sticky action of the last frame
    reward: jax.Array           # the last frame's reward
    terminal: jax.Array
    lives: jax.Array
    episode_frame: jax.Array


@struct.dataclass
class EnvParams:
    """Settings of Gymnasium's `ALE/<Game>-v5`, plus the cached resets.

    `mode` and `difficulty` are ALE's `setMode`/`setDifficulty` values.
    They shape the reset itself, so `reset_states` are booted for them:
    build params for other values with `env.make_params(mode=...,
    difficulty=...)`, not with `params.replace` (which `step` and `reset`
    refuse, naming the fix).
    """
    frameskip: int = struct.field(pytree_node=False, default=4)
    repeat_action_probability: float = 0.25
    max_num_frames_per_episode: int = 108_000
    obs_type: str = struct.field(pytree_node=False, default="rgb")
    mode: int = struct.field(pytree_node=False, default=0)
    difficulty: int = struct.field(pytree_node=False, default=0)
    reset_states: Any = None
    reset_scripts: Any = None
    """`reset_carry.ResetScript`s, one per reset state, for a game whose
    reset depends on the console it resets (None for most games)."""
    reset_states_for: tuple[int, int] | None = struct.field(
        pytree_node=False, default=None)


def rules_ram(machine: console.Console, size: int) -> jax.Array:
    """The RAM a game's rules read (`GameRules.ram_size` bytes).

    128: the RIOT RAM, ALE's `getRAM`. 256: the RIOT RAM, then the 128
    bytes of Superchip RAM (Klax's rules read its score there); zeros for
    a cartridge without that RAM.
    """
    ram = console.ram(machine)
    if size == games.core.RIOT_RAM_SIZE:
        return ram
    cart_ram = machine.chips.ram
    if cart_ram is None:
        cart_ram = jnp.zeros(ram.shape[:-1] + (games.core.CART_RAM_SIZE,),
                             jnp.uint8)
    return jnp.concatenate([ram, cart_ram], axis=-1)


def console_frame(board: console.Board, controls: Controls,
                  machine: console.Console, paddles: jax.Array,
                  action: jax.Array, buttons: jax.Array,
                  render: bool | jax.Array):
    """One ALE frame of the console for player A's `action`, with RESET
    (`buttons` 1) or SELECT (2) held: returns (machine, paddles)."""
    paddles = move_paddle(controls, action, paddles)
    swchb = switches(controls.difficulty, buttons == 1, buttons == 2)
    inputs = controller_inputs(controls.paddle_game, controls.swap_paddles,
                               action, paddles, swchb, controls.swap_ports)
    return console.frame(board, machine, inputs, render), paddles


def _console_frame_as(board: console.Board, controls: Controls,
                      machine: console.Console, paddles: jax.Array,
                      action: jax.Array, buttons: jax.Array, render: bool,
                      variant: str | None):
    """`console_frame`; `variant` (static) is the lowering variant being
    traced where it is called (`lowering.tracing_variant`: inside one
    branch of a `per_backend`, else None), so that the jit cache keeps a
    trace per variant."""
    del variant
    return console_frame(board, controls, machine, paddles, action,
                         buttons, render)


_shared_console_frame = jax.jit(_console_frame_as, static_argnums=(6, 7))
"""`console_frame`, traced once per board features, `render` and the
lowering variant being traced: on the host (the boot), one compiled
program serves all boards of the same features; inside a traced step,
JAX reuses its jaxpr, so a new env or wrapper costs no new trace of the
console (about 15 s on this machine, most of a step's trace). A frame
traced inside one branch of a caller's `lowering.per_backend` holds that
variant's loop alone: the variant in the key keeps it from a caller that
lowers for both."""

_shared_flagged_frame = jax.jit(_console_frame_as, static_argnums=(7,))
"""`_shared_console_frame` with `render` as data (a step's frames,
`AtariEnv._frames`, and a replayed reset's): a second step program of the
same env reuses the first one's trace (5 s for Breakout's step on this
machine)."""


COSMIC_ARK_GAMES = frozenset({"journey_escape"})
"""Games ale-py ships that turn on Stella's Cosmic Ark motion (checked with
ALE's serialized TIA state): their programs draw it line by line
(`console.Features.cosmic_lines`)."""


def _height_property(rules: games.GameRules) -> int:
    """The game's `Display.Height` property from its screen rows: ALE's PAL
    ROMs keep the default 210, which the console raises to 250 once it has
    detected PAL (`tia.display_rows`)."""
    return tia.HEIGHT if rules.height == tia.PAL_HEIGHT else rules.height


class AtariEnv:
    """One game as a gymnax-style environment (see module doc).

    `random_seed` is ALE's setting of that name, for the resets booted on
    the host: ALE draws from its environment RNG during a reset only in
    Adventure's setMode (modes 1 and 2) and Berzerk's `act` calls. The
    reset states are then ALE's consecutive `reset_game()` calls after
    `loadROM` with that seed. Sticky actions in `step` draw from JAX keys.
    """

    def __init__(self, game: str | games.GameRules,
                 full_action_space: bool = False,
                 mode: int | None = None, difficulty: int | None = None,
                 num_reset_states: int = 4,
                 rom: str | os.PathLike | None = None,
                 random_seed: int = 0):
        self.rules = (game if isinstance(game, games.GameRules)
                      else games.lookup(game))
        self.cart = cartridge.load_cartridge(
            self.rules.rom_id if rom is None else rom)
        self.board = console.make_board(
            self.cart, self.rules.ystart, self.rules.hmove_blanks,
            height=_height_property(self.rules),
            cosmic_lines=self.rules.rom_id in COSMIC_ARK_GAMES)
        self.mode = self.rules.default_mode
        self.difficulty = self.rules.default_difficulty
        self.mode, self.difficulty = self._settings(mode, difficulty)
        self.controls = Controls(self.rules.paddles, self.rules.swap_paddles,
                                 self.difficulty, *self.rules.paddle_range,
                                 swap_ports=self.rules.swap_ports)
        self.action_set = (tuple(range(18)) if full_action_space
                           else tuple(self.rules.minimal_actions))
        # What ALE plays for each: an action the game calls illegal is NOOP.
        self.played_actions = tuple(a if a in self.rules.legal_actions
                                    else 0 for a in self.action_set)
        self.num_reset_states = num_reset_states
        self.random_seed = int(random_seed)
        # What the env's programs depend on: equal envs share their traces
        # (`jit` with the env static), so making one again costs nothing.
        self._config = (self.rules, self.cart.md5, self.action_set,
                        self.mode, self.difficulty, num_reset_states,
                        self.random_seed)
        self._rules_frame = jax.jit(self._after_frame)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._config == self._config

    def __hash__(self) -> int:
        return hash(self._config)

    # ------------------------------------------------------------------ frames
    def _frame(self, state: EnvState, action: jax.Array, buttons: jax.Array,
               difficulty: jax.Array, render: bool | jax.Array) -> EnvState:
        """One ALE frame: inputs, the console, then `RomSettings::step`.

        `buttons` is 0, 1 (RESET held) or 2 (SELECT held). Both parts are
        jitted functions: on the host (the boot, the NOOP starts) they run
        as two compiled programs, the console's shared by every game whose
        board has the same features; inside a traced step JAX reuses their
        jaxprs.
        """
        controls = self.controls._replace(difficulty=difficulty)
        shared = (_shared_console_frame if isinstance(render, bool)
                  else _shared_flagged_frame)   # a traced `render`: data
        machine, paddles = shared(self.board, controls, state.machine,
                                  state.paddles, action, buttons, render,
                                  lowering.tracing_variant())
        return self._rules_frame(state, machine, paddles, buttons)

    def _after_frame(self, state: EnvState, machine: console.Console,
                     paddles: jax.Array, buttons: jax.Array) -> EnvState:
        """`RomSettings::step` after the console's frame (not on SELECT
        frames), and the frame counted."""
        reward, terminal, lives, vars_ = self.rules.step(
            rules_ram(machine, self.rules.ram_size).astype(jnp.int32),
            state.vars)
        stepped = state.replace(vars=vars_, reward=reward, terminal=terminal,
                                lives=lives)
        # ALE's pressSelect does not run RomSettings::step on SELECT frames.
        state = jax.tree.map(lambda a, b: jnp.where(buttons == 2, a, b),
                             state, stepped)
        return state.replace(machine=machine, paddles=paddles,
                             episode_frame=state.episode_frame + 1)

    # ------------------------------------------------------------------ reset
    def initial_state(self) -> EnvState:
        """The console just built (`power_on`), before any reset."""
        return EnvState(machine=console.power_on(self.board),
                        vars=self.rules.reset_vars(),
                        paddles=paddle_centre(self.controls),
                        action=jnp.int32(0), reward=jnp.int32(0),
                        terminal=jnp.asarray(False), lives=jnp.int32(0),
                        episode_frame=jnp.int32(0))

    def boot(self, mode: int | None = None,
             difficulty: int | None = None) -> list[EnvState]:
        """`loadROM()` then consecutive `reset_game()` calls, on the host.

        `loadROM` ends with a reset in the game's default mode at difficulty
        0. For those settings the states are that reset and the ones after
        it; for other settings they are the resets after `setMode` /
        `setDifficulty`, as ALE (and Gymnasium's `AtariEnv`) would play
        them: loadROM's reset first, then the new settings from the next
        frame on.

        A process boots each `boot_key` once; the states are also kept on
        disk (`jaxatari.boot_cache`), so later processes load them.

        Args:
            mode: ALE's `setMode` value (default: the env's).
            difficulty: ALE's `setDifficulty` value (default: the env's).
        """
        mode, difficulty = self._settings(mode, difficulty)
        key = self.boot_key(mode, difficulty)
        if key not in _BOOTED:  # the boot may refit the board (PAL)
            _BOOTED[key] = boot_cache.cached_boot(self, mode, difficulty,
                                                  self._boot)
        states, self.board = _BOOTED[key]
        return list(states)

    def boot_key(self, mode: int, difficulty: int) -> tuple:
        """What `boot`'s states depend on: equal keys, equal states (the
        boot is deterministic, so a process boots each key once)."""
        return (self.rules, self.cart.md5, mode, difficulty,
                self.num_reset_states, self.random_seed)

    def _boot(self, mode: int, difficulty: int) -> list[EnvState]:
        defaults = (self.rules.default_mode, 0)
        driver = _EnvDriver(self, self.initial_state(), defaults[1])
        load_rom(driver)
        states, k = [], 0
        if (mode, difficulty) != defaults:
            reset_game(self.rules, defaults[0], driver, k)
            driver.difficulty, k = jnp.int32(difficulty), 1
        while len(states) < self.num_reset_states:
            reset_game(self.rules, mode, driver, k)
            states.append(driver.episode_start())
            k += 1
        return states

    def _reset_scripts(self, mode: int, difficulty: int,
                       states: list[EnvState]
                       ) -> reset_carry.ResetScript | None:
        """The booted resets' scripts, stacked, if the reset depends on
        the console it resets (`reset_carry`), else None; a warning
        where it does but cannot be replayed."""
        first = int((mode, difficulty) != (self.rules.default_mode, 0))
        recorders = []

        def reset(state: EnvState) -> EnvState:
            recorders.append(reset_carry.ScriptRecorder())
            return self._reset_game(state, first, mode, difficulty,
                                    recorders[-1])
        if not reset_carry.depends_on_console(states[0], reset):
            return None
        pal = self.display_format == "PAL"
        try:
            reset_carry.select_test(self.rules, mode)   # raises if not JAX
            return boot_cache.stack([recorders[0].script(
                system_rng.reset_inputs(3 + first + k, self.cart.has_ram,
                                        pal)) for k in range(len(states))])
        except reset_carry.NotReplayable as error:
            warnings.warn(
                f"jaxatari: {self.rules.rom_id} (mode {mode}): ALE's "
                "reset depends on the RAM the console holds, so after play "
                f"it may differ from a fresh one; {error}, so this env's "
                "resets after play are those of a console just loaded",
                stacklevel=3)
            return None

    def _reset_game(self, state: EnvState, resets: int,
                    mode: int | None = None, difficulty: int | None = None,
                    recorder: reset_carry.ScriptRecorder | None = None
                    ) -> EnvState:
        """`StellaEnvironment::reset` from `state`, as the `resets`-th
        `reset_game()` since `loadROM()` (0 is the one loadROM ends with),
        in `mode` at `difficulty` (default: the env's), its frames told
        to `recorder` if given."""
        mode, difficulty = self._settings(mode, difficulty)
        driver = _EnvDriver(self, state, difficulty, recorder)
        reset_game(self.rules, mode, driver, resets)
        return driver.episode_start()

    def _settings(self, mode: int | None,
                  difficulty: int | None) -> tuple[int, int]:
        """(mode, difficulty), defaulting to the env's, checked on the host."""
        mode = self.mode if mode is None else mode
        difficulty = self.difficulty if difficulty is None else difficulty
        _check_choice("mode", mode, self.rules.modes, self.rules.rom_id)
        # ALE starts every game at difficulty 0, listed or not (Backgammon
        # lists only 3); setDifficulty accepts the listed ones.
        _check_choice("difficulty", difficulty,
                      set(self.rules.difficulties)
                      | {self.rules.default_difficulty}, self.rules.rom_id)
        return mode, difficulty

    def make_params(self, mode: int | None = None,
                    difficulty: int | None = None, **fields) -> EnvParams:
        """Parameters for a mode and difficulty, with their resets booted.

        Args:
            mode: one of `rules.modes` (default: the env's mode).
            difficulty: one of `rules.difficulties` (default: the env's).
            **fields: other `EnvParams` fields (frameskip, obs_type, ...).

        Raises:
            ValueError: a mode or difficulty the game lacks (the message
                lists the ones it has), or a field out of range
                (`settings.check_settings`), raised before any emulation.
            TypeError: a field `EnvParams` lacks, also before it.
        """
        mode, difficulty = self._settings(mode, difficulty)
        check_settings(fields)
        params = EnvParams(mode=mode, difficulty=difficulty,
                           reset_states_for=(mode, difficulty), **fields)
        states = self.boot(mode, difficulty)
        return params.replace(
            reset_states=boot_cache.stack(states),
            reset_scripts=boot_cache.cached_scripts(
                self, mode, difficulty,
                lambda: self._reset_scripts(mode, difficulty, states)))

    def default_params(self) -> EnvParams:
        """`make_params()` for the env's mode and difficulty."""
        return self.make_params()

    @property
    def name(self) -> str:
        """The game's id (`jaxatari.make`'s)."""
        return self.rules.rom_id

    @property
    def num_actions(self) -> int:
        """How many actions `step` takes: `len(action_set)`."""
        return len(self.action_set)

    def action_space(self, params: EnvParams | None = None
                     ) -> spaces.Discrete:
        """gymnax's `Discrete` over the indices of `action_set`."""
        del params
        return spaces.action_space(self)

    def observation_space(self, params: EnvParams) -> spaces.Box:
        """gymnax's `Box` of the observation for `params.obs_type`."""
        return spaces.observation_space(self, params)

    # ------------------------------------------------------------------ API
    def observation(self, state: EnvState, params: EnvParams) -> jax.Array:
        """The observation of `params.obs_type` for the current frame."""
        if params.obs_type == "ram":
            return console.ram(state.machine)
        screen = console.screen(state.machine)
        if params.obs_type == "grayscale":
            return palette.to_grayscale(screen, self.display_format)
        return palette.to_rgb(screen, self.display_format)

    def reset(self, key: jax.Array, params: EnvParams):
        """Pick one of the cached post-reset states (a copy, no emulation),
        uniformly among all that `params.reset_states` holds: ALE's reset
        of a console just loaded (a seeded Gymnasium `reset`)."""
        _check_params(params)
        state = _pick(params.reset_states, _reset_index(key, params))
        return self.observation(state, params), state

    def reset_after(self, key: jax.Array, played: EnvState,
                    params: EnvParams, done: jax.Array | bool = True):
        """The reset that follows an episode ending in `played`: ALE's
        `reset_game()` of that console, the auto-reset of `step`.

        For most games this is `reset` (a cached state). A game whose
        reset keeps some of the console's RAM (`params.reset_scripts`,
        `reset_carry`) replays its reset from `played` where `done`:
        about 70 frames, on the CPU for the done consoles of a batch
        only, on an accelerator for the whole batch when any is done.
        `params.replace(reset_scripts=None)` makes it `reset`'s copy, a
        console just loaded: faster, but not ALE's reset after play.

        Returns:
            (obs, state), as `reset`.
        """
        _check_params(params)
        index = _reset_index(key, params)
        state = _pick(params.reset_states, index)
        if params.reset_scripts is not None:
            state = reset_carry.replay_where(
                self, jnp.asarray(done), played,
                _pick(params.reset_scripts, index), state, params.mode,
                params.difficulty)
        return self.observation(state, params), state

    def step(self, key: jax.Array, state: EnvState, action: jax.Array,
             params: EnvParams):
        """`frameskip` ALE frames of `action`; auto-reset when done.

        `action` indexes `env.action_set`. An index out of range is played
        as NOOP, as ALE plays an illegal action; `checked_step` raises for
        it instead. Called outside `jit`, it checks `params` on the host
        first (under an outer `jit` only their static fields).

        Returns:
            (obs, state, reward, done, info) with info = {"lives",
            "episode_frame_number", "terminated", "truncated",
            "applied_actions"}; `applied_actions` is int32[frameskip], the
            ALE action id each emulated frame got after sticky actions.

        Raises:
            ValueError: params out of range (a frameskip below 1, a repeat
                probability outside [0, 1], ...: `settings.check_settings`),
                or booted for other settings.
        """
        _check_params(params)
        return self._step(key, state, action, params)

    @functools.partial(jax.jit, static_argnums=(0,))
    def _step(self, key: jax.Array, state: EnvState, action: jax.Array,
              params: EnvParams):
        step_key, reset_key = jax.random.split(key)
        obs, state, total, done, info = self.step_env(step_key, state,
                                                      action, params)
        reset_obs, reset_state = self.reset_after(reset_key, state, params,
                                                  done)
        state = jax.tree.map(lambda a, b: jnp.where(done, a, b), reset_state,
                             state)
        obs = jnp.where(done, reset_obs, obs)
        return obs, state, total, done, info

    def step_env(self, key: jax.Array, state: EnvState, action: jax.Array,
                 params: EnvParams, pooled: int = 1):
        """`step` without the auto-reset (gymnax's `step_env`).

        Args:
            key, state, action, params: as `step`.
            pooled: the observation is the elementwise maximum of the
                observations after the last `pooled` frames (1 or 2; 2 is
                the max-pooling of Gymnasium's `AtariPreprocessing`). Only
                those frames are drawn.

        Returns:
            As `step`; when done, the state and observation are the last
            frame's, not a reset's.
        """
        _check_params(params)
        if pooled not in (1, 2) or pooled > params.frameskip:
            raise ValueError(f"pooled must be 1 or 2 and at most the "
                             f"frameskip ({params.frameskip}), got {pooled}")
        ale_action = to_ale_action(self.played_actions, action)
        applied_actions = sticky_actions(
            key, state.action, ale_action, params.repeat_action_probability,
            params.frameskip)
        (state, total), obs = self._frames(
            (state, jnp.int32(0)), applied_actions, params, pooled)
        terminated = state.terminal
        truncated = self._game_over(state, params) & ~terminated
        info = {"lives": state.lives,
                "episode_frame_number": state.episode_frame,
                "terminated": terminated, "truncated": truncated,
                "applied_actions": applied_actions}
        return obs, state, total, terminated | truncated, info

    def _frames(self, carry: tuple[EnvState, jax.Array],
                applied_actions: jax.Array, params: EnvParams,
                pooled: int):
        """A step's frames, as one frame program whether to draw a frame
        given as data; returns the carry and the elementwise maximum of
        the last `pooled` frames' observations.

        The frame loop is compiled once a step, not once for the drawn
        frames and once for the others: on the CPU a step of the preset
        compiles in a fifth less time and traces in two fifths less, for
        steps 0% to 3% slower (BENCHMARKS.md, "One frame program a step
        on the CPU too"); for an H100 it compiles in half the time ("One
        frame program a step"). An undrawn frame draws no pixels (the CPU's
        lowering chooses its writes' draws by the flag,
        `tia_gather.writer`; the accelerator's logs its TIA writes as a
        drawn frame does, and its render loop runs no step). Only the
        pooled frames' observations are computed on the CPU
        (`lowering.skipped_unless`); the maximum is carried
        (observations are unsigned: 0 is the least).
        """
        first_drawn = params.frameskip - pooled

        def frame(carry_and_pooled, index_and_action):
            carry, pooled_obs = carry_and_pooled
            index, applied = index_and_action
            drawn = index >= first_drawn
            carry = self._skip_frame(carry, applied, params, drawn)
            with_this = lowering.skipped_unless(drawn, lambda kept: (
                jnp.maximum(kept, self.observation(carry[0], params))),
                pooled_obs)
            return (carry, jnp.where(drawn, with_this, pooled_obs)), None
        shape = jax.eval_shape(self.observation, carry[0], params)
        (carry, obs), _ = jax.lax.scan(
            frame, (carry, jnp.zeros(shape.shape, shape.dtype)),
            (jnp.arange(params.frameskip), applied_actions))
        return carry, obs

    def _skip_frame(self, carry: tuple[EnvState, jax.Array],
                    applied: jax.Array, params: EnvParams,
                    render: bool | jax.Array) -> tuple[EnvState, jax.Array]:
        """One frame of a step: ALE emulates nothing once the game is over
        (or truncated), but the sticky action still changes."""
        state, total = carry
        state = state.replace(action=applied)
        over = self._game_over(state, params)
        stepped = self._frame(state, applied, jnp.int32(0),
                              jnp.int32(params.difficulty), render)
        state = jax.tree.map(lambda a, b: jnp.where(over, a, b), state,
                             stepped)
        return state, total + jnp.where(over, 0, state.reward)

    def checked_step(self, key: jax.Array, state: EnvState,
                     action: jax.Array, params: EnvParams):
        """`step`, but an action index out of range raises on the host.

        The check runs inside the compiled step (`jax.experimental.
        checkify`), so it costs one flag per call and no extra dispatch.

        Raises:
            jax.experimental.checkify.JaxRuntimeError: the action index is
                not in `range(len(env.action_set))`.
        """
        error, out = self._checked_step(key, state, action, params)
        error.throw()
        return out

    @functools.cached_property
    def _checked_step(self):
        def step(key, state, action, params):
            count = len(self.action_set)
            checkify.check(
                jnp.all((action >= 0) & (action < count)),
                f"action index {{action}} is out of range for "
                f"{self.rules.rom_id}: the action set has {count} actions "
                f"(ALE ids {self.action_set})", action=action)
            return self.step(key, state, action, params)

        return jax.jit(checkify.checkify(step))

    def _game_over(self, state: EnvState, params: EnvParams) -> jax.Array:
        limit = params.max_num_frames_per_episode
        return state.terminal | ((limit > 0) & (state.episode_frame >= limit))

    def ram(self, state: EnvState) -> jax.Array:
        """uint8[128], as ALE's `getRAM`."""
        return console.ram(state.machine)

    def screen(self, state: EnvState) -> jax.Array:
        """uint8[rows, 160] palette indices, as ALE's `getScreen`: 210 rows,
        250 for a PAL game, the game's own height for the few that set one
        (`GameRules.height`)."""
        return console.screen(state.machine)

    def screen_rgb(self, state: EnvState) -> jax.Array:
        """uint8[rows, 160, 3] (rows as `screen`), as `getScreenRGB`."""
        return palette.to_rgb(console.screen(state.machine),
                              self.display_format)

    @property
    def display_format(self) -> str:
        """"NTSC" or "PAL", as ALE detects it (the board's screen rows)."""
        return console.display_format(self.board)


class _EnvDriver(ConsoleDriver):
    """`ConsoleDriver` on one `EnvState`, frame by frame (`env._frame`)."""

    def __init__(self, env: AtariEnv, state: EnvState, difficulty: int,
                 recorder: reset_carry.ScriptRecorder | None = None):
        self.env, self.state = env, state
        self.difficulty = jnp.int32(difficulty)
        self.random_seed = env.random_seed
        self.recorder = recorder

    def frames(self, action: int, buttons: int, count: int) -> None:
        for _ in range(count):
            if self.recorder:
                self.recorder.frame(action, buttons)
            self.state = self.env._frame(self.state, jnp.int32(action),
                                         jnp.int32(buttons), self.difficulty,
                                         True)

    def system_reset(self, resets: int, pal: bool | None = None) -> None:
        machine = self.state.machine
        pal = bool(console.is_pal(machine)) if pal is None else pal
        if resets >= 2:   # the format is known (reset 1 precedes detection)
            self._fit_board(pal)
        inputs = system_rng.reset_inputs(resets, self.env.cart.has_ram, pal)
        machine = console.system_reset(self.env.board, machine, inputs)
        self.state = self.state.replace(
            machine=machine, episode_frame=jnp.int32(0),
            paddles=paddle_centre(self.env.controls))

    def _fit_board(self, pal: bool) -> None:
        """Give the env a board of the detected format's screen rows if
        `cart.PAL_MD5S` guessed wrong (a ROM of your own): the frame
        program for those rows is compiled (or shared) then."""
        self.env.board = console.board_for_format(self.env.board, pal)

    def scanlines(self) -> int:
        return int(console.scanlines(self.state.machine))

    def select_loop(self, done, presses: int) -> None:
        """`games.core.select_until` starts a SELECT loop (recorded)."""
        del done
        if self.recorder:
            self.recorder.select_loop(presses)

    def begin_episode(self) -> None:
        if self.recorder:
            self.recorder.begin()
        self.state = self.state.replace(vars=self.env.rules.reset_vars())

    def ram(self) -> np.ndarray:
        return np.asarray(rules_ram(self.state.machine,
                                    self.env.rules.ram_size))

    def episode_start(self) -> EnvState:
        """The state an episode starts from: no action or reward yet; reset
        frames are not counted, except one per pressSelect call (as ALE)."""
        if self.recorder:
            self.recorder.start(self.counted_frames)
        return self.state.replace(action=jnp.int32(0), reward=jnp.int32(0),
                                  episode_frame=jnp.int32(
                                      self.counted_frames))


def _reset_index(key: jax.Array, params: EnvParams) -> jax.Array:
    """A uniform draw among `params.reset_states`."""
    count = jax.tree.leaves(params.reset_states)[0].shape[0]
    return jax.random.randint(key, (), 0, count)


def _pick(stacked: Any, index: jax.Array) -> Any:
    return jax.tree.map(lambda x: x[index], stacked)


def _check_params(params: EnvParams) -> None:
    """Refuses params out of range (hand-built ones too; traced fields are
    not checked) or whose cached resets were booted for other settings."""
    check_settings({name: getattr(params, name) for name in (
        "frameskip", "repeat_action_probability",
        "max_num_frames_per_episode", "obs_type")})
    if params.reset_states is None:
        raise ValueError("params have no reset states; build them with "
                         "env.default_params() or env.make_params(...)")
    if params.reset_states_for != (params.mode, params.difficulty):
        raise ValueError(
            f"params.mode/difficulty are {(params.mode, params.difficulty)}"
            f" but the cached reset states were booted for "
            f"{params.reset_states_for}; use env.make_params(mode=..., "
            "difficulty=...) to boot the resets for new settings")
    scripts = params.reset_scripts
    if scripts is not None and (jax.tree.leaves(scripts)[0].shape[0]
                                != jax.tree.leaves(params.reset_states)[0]
                                .shape[0]):
        raise ValueError("params.reset_scripts and params.reset_states "
                         "differ in length; replace both, or build them "
                         "with env.make_params(...)")


def _check_choice(what: str, value: int, allowed, game: str) -> None:
    if value not in allowed:
        raise ValueError(f"{what} {value} is not available for {game!r}; "
                         f"choose one of {sorted(allowed)}")


def make(game: str | games.GameRules,
         **overrides) -> tuple[AtariEnv, EnvParams]:
    """Make an environment and its default parameters (Gymnasium v5's).

    Args:
        game: ale-py's ROM id ("breakout") or an ALE/Gymnasium name
            ("Breakout", "ALE/Breakout-v5").
        **overrides: `full_action_space`, `num_reset_states`, `random_seed`
            (environment),
            `mode`, `difficulty` (ALE's, for the env and its params), and
            any other `EnvParams` field.

    Returns:
        (env, params).

    Raises:
        ValueError: an unknown game (the message suggests the nearest
            known names), a mode or difficulty the game lacks, or a
            setting out of range (`settings.check_settings`: a frameskip
            below 1,
            a repeat_action_probability outside [0, 1]).
        TypeError: an unknown setting. All before any emulation.
    """
    env_keys = {"full_action_space", "mode", "difficulty", "num_reset_states",
                "rom", "random_seed"}
    fields = ({f.name for f in dataclasses.fields(EnvParams)}
              - {"reset_states", "reset_scripts", "reset_states_for"})
    unknown = set(overrides) - env_keys - fields
    if unknown:   # checked before the (slow) boot
        raise TypeError(f"unknown settings {sorted(unknown)}; known: "
                        f"{sorted(env_keys | fields)}")
    check_settings(overrides)
    env = AtariEnv(game, **{k: v for k, v in overrides.items()
                            if k in env_keys})
    params = env.default_params()
    return env, params.replace(**{k: v for k, v in overrides.items()
                                  if k in fields - {"mode", "difficulty"}})


def rules_for_rom(path: str | os.PathLike, *, ystart: int = 34,
                  hmove_blanks: bool = True, paddles: bool = False,
                  swap_paddles: bool = False) -> games.GameRules:
    """`GameRules` for a ROM ALE has no settings for: no reward, no end.

    Every frame gives reward 0, the game never ends by itself and reports
    0 lives; all 18 actions, one mode (0) and the four difficulty switch
    settings (0-3). The display and controller properties are Stella's
    defaults unless given.
    """
    def step(ram: jax.Array, vars_: jax.Array) -> games.StepResult:
        zero = jnp.zeros(jnp.shape(ram)[:-1], jnp.int32)
        return games.core.result(zero, False, zero, zero, zero, zero)

    return games.core.make_rules(
        pathlib.Path(path).stem, pathlib.Path(path).stem, step,
        difficulties=(0, 1, 2, 3), ystart=ystart, hmove_blanks=hmove_blanks,
        paddles=paddles, swap_paddles=swap_paddles)


def make_from_rom(path: str | os.PathLike, *, ystart: int = 34,
                  hmove_blanks: bool = True, paddles: bool = False,
                  swap_paddles: bool = False,
                  **overrides) -> tuple[AtariEnv, EnvParams]:
    """An environment for a ROM file of your own, without game rules.

    The file need not be one of ale-py's: its bank-switching scheme is
    detected as Stella does, and the console boots and resets exactly as
    ALE would boot it. With no `RomSettings` for it, the reward is always
    0 and no episode ends except by `max_num_frames_per_episode`; a
    warning says so.

    Args:
        path: the ROM file (.bin / .a26).
        ystart, hmove_blanks, paddles, swap_paddles: the display and
            controller properties (Stella's `Display.YStart`,
            `Emulation.HmoveBlanks`, `Controller.Left == PADDLES`,
            `Controller.SwapPaddles`); Stella's defaults otherwise.
        **overrides: as for `make` (`frameskip`, `difficulty`, ...).

    Returns:
        (env, params).

    Raises:
        FileNotFoundError: no such file.
        cart.NotARomError: the file is not a 2600 ROM image.
        cart.UnsupportedCartridgeError: a scheme jaxatari cannot run.
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no ROM file at {path}")
    rules = rules_for_rom(path, ystart=ystart, hmove_blanks=hmove_blanks,
                          paddles=paddles, swap_paddles=swap_paddles)
    cartridge.load_cartridge(path)   # a bad image fails before the warning
    warnings.warn(
        f"{path.name}: jaxatari has no game rules for this ROM, so every "
        "reward is 0 and episodes end only at max_num_frames_per_episode "
        "(lives are reported as 0)", stacklevel=2)
    return make(rules, rom=path, **overrides)
