"""ALE's environment on top of the console: actions, reset, rewards.

This is ALE's `StellaEnvironment` plus Gymnasium's `AtariEnv`, in the gymnax
convention:

    env, params = jaxatari.make("breakout")
    obs, state = env.reset(key, params)
    obs, state, reward, done, info = env.step(key, state, action, params)

* **Actions** index `env.action_set`: ALE action ids, the minimal set in
  `getMinimalActionSet()` order (or all 18 with `full_action_space=True`).
  Joystick games see them on SWCHA/INPT4; paddle games (Pong, Breakout) move
  the paddle by 23,000 ohms per frame and press its button.
* **Sticky actions**, ALE's semantics: before every emulated frame, with
  probability `repeat_action_probability` the previous frame's action is
  kept. The draws come from the JAX key, not from ALE's mt19937.
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
* **Rewards, game over and lives** are the game's `RomSettings`
  (`jaxatari.games`), evaluated after every frame. An episode also ends at
  `max_num_frames_per_episode` frames, as ALE truncates it. `step`
  auto-resets on done; the returned observation is then the reset one.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxatari import cart as cartridge
from jaxatari import console, games, palette

PADDLE_MIN, PADDLE_MAX, PADDLE_DELTA = 27450, 790196, 23000
PADDLE_CENTRE = (PADDLE_MIN + PADDLE_MAX) // 2
NUM_RESET_FRAMES = 4
RIGHT_ACTIONS = (3, 6, 8, 11, 14, 16)
LEFT_ACTIONS = (4, 7, 9, 12, 15, 17)
UP_ACTIONS = (2, 6, 7, 10, 14, 15)
DOWN_ACTIONS = (5, 8, 9, 13, 16, 17)
FIRE_ACTIONS = (1, 10, 11, 12, 13, 14, 15, 16, 17)
RESET_ACTION, SELECT = 40, -1


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
    """Settings of Gymnasium's `ALE/<Game>-v5`, plus the cached resets."""
    frameskip: int = struct.field(pytree_node=False, default=4)
    repeat_action_probability: float = 0.25
    max_num_frames_per_episode: int = 108_000
    obs_type: str = struct.field(pytree_node=False, default="rgb")
    reset_states: Any = None


def _in(action: jax.Array, group: tuple[int, ...]) -> jax.Array:
    return jnp.any(action == jnp.asarray(group))


def paddle_cycles(resistance: jax.Array) -> jax.Array:
    """Cycles after the dump release until INPT reads high (ALE's paddles).

    Stella computes `(uint32)(1.6 * r * 0.01e-6 * 1.19e6)` in double
    precision; that equals `r * 1904 // 100000` for every resistance ALE's
    discrete paddle moves reach (tested in tests/test_environment.py).
    """
    return (resistance * 1904) // 100000


def controller_inputs(paddle_game: jax.Array | bool,
                      swap_paddles: jax.Array | bool, action: jax.Array,
                      paddles: jax.Array, swchb: jax.Array) -> console.Inputs:
    """The console's input lines for one frame of `action` (player B idle).

    The controller type is data (`paddle_game`, `swap_paddles`), so consoles
    of different games can share one compiled program.
    """
    fire = _in(action, FIRE_ACTIONS)
    # Paddles: paddle 0's button is pin Four (0x80), or pin Three if swapped.
    pin_zero = jnp.where(swap_paddles, 0x40, 0x80)
    left, right = paddle_cycles(paddles[0]), paddle_cycles(paddles[1])
    far = jnp.where(swap_paddles, -1, -2)   # Pong has paddles on both ports
    paddle_needed = jnp.stack([jnp.where(swap_paddles, right, left),
                               jnp.where(swap_paddles, left, right), far, far])
    # Joystick: directions pull SWCHA pins low, fire is INPT4.
    pressed = (jnp.where(_in(action, UP_ACTIONS), 0x10, 0)
               | jnp.where(_in(action, DOWN_ACTIONS), 0x20, 0)
               | jnp.where(_in(action, LEFT_ACTIONS), 0x40, 0)
               | jnp.where(_in(action, RIGHT_ACTIONS), 0x80, 0))
    swcha = jnp.where(paddle_game, 0xFF & ~jnp.where(fire, pin_zero, 0),
                      0xFF & ~pressed)
    return console.Inputs(
        swcha=swcha.astype(jnp.int32), swchb=jnp.asarray(swchb, jnp.int32),
        fire=jnp.where(paddle_game, 0, jnp.stack([fire, False])
                       ).astype(jnp.int32),
        paddle_needed=jnp.where(paddle_game, paddle_needed, -2
                                ).astype(jnp.int32))


def move_paddle(paddle_game: jax.Array | bool, action: jax.Array,
                paddles: jax.Array) -> jax.Array:
    """ALE's per-frame paddle move for player A's action (data-driven)."""
    delta = jnp.where(_in(action, RIGHT_ACTIONS), -PADDLE_DELTA,
                      jnp.where(_in(action, LEFT_ACTIONS), PADDLE_DELTA, 0))
    delta = jnp.where(paddle_game, delta, 0)
    return paddles.at[0].set(jnp.clip(paddles[0] + delta, PADDLE_MIN,
                                      PADDLE_MAX))


class Controls(NamedTuple):
    """A game's controller and switches, as data (Python or array values)."""
    paddle_game: jax.Array | bool
    swap_paddles: jax.Array | bool
    difficulty: jax.Array | int


def console_frame(board: console.Board, controls: Controls,
                  machine: console.Console, paddles: jax.Array,
                  action: jax.Array, buttons: jax.Array,
                  render: bool | jax.Array):
    """One ALE frame of the console for player A's `action`, with RESET
    (`buttons` 1) or SELECT (2) held: returns (machine, paddles)."""
    paddles = move_paddle(controls.paddle_game, action, paddles)
    swchb = switches(controls.difficulty, buttons == 1, buttons == 2)
    inputs = controller_inputs(controls.paddle_game, controls.swap_paddles,
                               action, paddles, swchb)
    return console.frame(board, machine, inputs, render), paddles


def switches(difficulty: int, reset: jax.Array | bool = False,
             select: jax.Array | bool = False) -> jax.Array:
    """SWCHB: colour on, difficulty bits from ALE's mode value, buttons."""
    value = 0x3F | ((difficulty & 1) << 6) | (((difficulty >> 1) & 1) << 7)
    return (value & ~jnp.where(reset, 1, 0) & ~jnp.where(select, 2, 0)
            ).astype(jnp.int32)


class AtariEnv:
    """One Atari-57 game as a gymnax-style environment (see module doc)."""

    def __init__(self, game: str, full_action_space: bool = False,
                 mode: int | None = None, difficulty: int | None = None,
                 num_reset_states: int = 4):
        self.rules = games.lookup(game)
        self.cart = cartridge.load_cartridge(self.rules.rom_id)
        self.board = console.make_board(self.cart, self.rules.ystart,
                                        self.rules.hmove_blanks)
        self.mode = self.rules.default_mode if mode is None else mode
        self.difficulty = (self.rules.default_difficulty
                           if difficulty is None else difficulty)
        _check_choice("mode", self.mode, self.rules.modes, game)
        _check_choice("difficulty", self.difficulty, self.rules.difficulties,
                      game)
        self.controls = Controls(self.rules.paddles, self.rules.swap_paddles,
                                 self.difficulty)
        self.action_set = (tuple(range(18)) if full_action_space
                           else tuple(self.rules.minimal_actions))
        self.num_reset_states = num_reset_states
        self._frame = jax.jit(self._emulate_frame, static_argnums=(3,))

    # ------------------------------------------------------------------ frames
    def _emulate_frame(self, state: EnvState, action: jax.Array,
                       buttons: jax.Array, render: bool) -> EnvState:
        """One ALE frame: inputs, the console, then `RomSettings::step`.

        `buttons` is 0, 1 (RESET held) or 2 (SELECT held).
        """
        machine, paddles = console_frame(self.board, self.controls,
                                         state.machine, state.paddles,
                                         action, buttons, render)
        reward, terminal, lives, vars_ = self.rules.step(
            console.ram(machine).astype(jnp.int32), state.vars)
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
                        paddles=jnp.full((2,), PADDLE_CENTRE, jnp.int32),
                        action=jnp.int32(0), reward=jnp.int32(0),
                        terminal=jnp.asarray(False), lives=jnp.int32(0),
                        episode_frame=jnp.int32(0))

    def boot(self) -> list[EnvState]:
        """`loadROM()` then consecutive `reset_game()` calls, on the host."""
        driver = _EnvDriver(self, self.initial_state())
        load_rom(driver)
        states = []
        for k in range(self.num_reset_states):
            reset_game(self.rules, self.mode, driver, k)
            states.append(driver.episode_start())
        return states

    def _reset_game(self, state: EnvState, resets: int) -> EnvState:
        """`StellaEnvironment::reset` from `state`, as the `resets`-th
        `reset_game()` since `loadROM()` (0 is the one loadROM ends with)."""
        driver = _EnvDriver(self, state)
        reset_game(self.rules, self.mode, driver, resets)
        return driver.episode_start()

    def default_params(self) -> EnvParams:
        states = self.boot()
        stacked = jax.tree.map(lambda *xs: jnp.stack(xs), *states)
        return EnvParams(reset_states=stacked)

    # ------------------------------------------------------------------ API
    def observation(self, state: EnvState, params: EnvParams) -> jax.Array:
        """The observation of `params.obs_type` for the current frame."""
        if params.obs_type == "ram":
            return console.ram(state.machine)
        screen = console.screen(state.machine)
        if params.obs_type == "grayscale":
            return palette.to_grayscale(screen)
        return palette.to_rgb(screen)

    def reset(self, key: jax.Array, params: EnvParams):
        """Pick one of the cached post-reset states (a copy, no emulation)."""
        index = jax.random.randint(key, (), 0, self.num_reset_states)
        state = jax.tree.map(lambda x: x[index], params.reset_states)
        return self.observation(state, params), state

    @functools.partial(jax.jit, static_argnums=(0,))
    def step(self, key: jax.Array, state: EnvState, action: jax.Array,
             params: EnvParams):
        """`frameskip` ALE frames of `action`; auto-reset when done.

        Returns:
            (obs, state, reward, done, info) with info = {"lives",
            "episode_frame_number", "terminated", "truncated"}.
        """
        ale_action = jnp.asarray(self.action_set, jnp.int32)[action]
        sticky_key, reset_key = jax.random.split(key)
        draws = jax.random.uniform(sticky_key, (params.frameskip,))
        total = jnp.int32(0)
        for i in range(params.frameskip):
            applied = jnp.where(draws[i] >= params.repeat_action_probability,
                                ale_action, state.action)
            state = state.replace(action=applied)
            over = self._game_over(state, params)
            stepped = self._emulate_frame(state, applied, jnp.int32(0),
                                          i == params.frameskip - 1)
            state = jax.tree.map(lambda a, b: jnp.where(over, a, b), state,
                                 stepped)
            total = total + jnp.where(over, 0, state.reward)
        terminated = state.terminal
        truncated = self._game_over(state, params) & ~terminated
        done = terminated | truncated
        info = {"lives": state.lives,
                "episode_frame_number": state.episode_frame,
                "terminated": terminated, "truncated": truncated}
        obs = self.observation(state, params)
        reset_obs, reset_state = self.reset(reset_key, params)
        state = jax.tree.map(lambda a, b: jnp.where(done, a, b), reset_state,
                             state)
        obs = jnp.where(done, reset_obs, obs)
        return obs, state, total, done, info

    def _game_over(self, state: EnvState, params: EnvParams) -> jax.Array:
        limit = params.max_num_frames_per_episode
        return state.terminal | ((limit > 0) & (state.episode_frame >= limit))

    def ram(self, state: EnvState) -> jax.Array:
        """uint8[128], as ALE's `getRAM`."""
        return console.ram(state.machine)

    def screen(self, state: EnvState) -> jax.Array:
        """uint8[210, 160] palette indices, as ALE's `getScreen`."""
        return console.screen(state.machine)

    def screen_rgb(self, state: EnvState) -> jax.Array:
        """uint8[210, 160, 3], as ALE's `getScreenRGB`."""
        return palette.to_rgb(console.screen(state.machine))


class ConsoleDriver:
    """Drives one console through ALE's host-side sequences (`load_rom`,
    `reset_game`); it is the `games.ResetOps` that `setMode` uses.

    Subclasses provide the primitives: `frames` (emulate frames with an
    action and RESET/SELECT held, running `RomSettings::step` after each
    frame except SELECT frames), `system_reset`, `begin_episode` and `ram`.
    """

    selects = 0

    def frames(self, action: int, buttons: int, count: int) -> None:
        """`count` frames of `action`; `buttons` 0, 1 (RESET) or 2 (SELECT)."""
        raise NotImplementedError

    def system_reset(self, timer: int) -> None:
        """`System::reset` with this RIOT timer; paddles centred, episode
        frame count zeroed (`StellaEnvironment::reset`)."""
        raise NotImplementedError

    def begin_episode(self) -> None:
        """`RomSettings::reset`: the game's carried variables start over."""
        raise NotImplementedError

    def ram(self) -> np.ndarray:
        """The 128 RAM bytes now."""
        raise NotImplementedError

    def press_select(self, n: int = 1) -> None:
        """ALE's `pressSelect(n)`: SELECT for `n` frames, then a NOOP frame."""
        self.selects += 1
        self.frames(0, 2, n)
        self.frames(0, 0, 1)

    def soft_reset(self) -> None:
        """ALE's `softReset`: the RESET switch held for 4 frames."""
        self.frames(0, 1, NUM_RESET_FRAMES)

    def act(self, action: int) -> None:
        """One frame of an agent action, as `setMode` uses it."""
        self.frames(action, 0, 1)


def load_rom(driver: ConsoleDriver) -> None:
    """ALE's `loadROM` up to its closing `reset_game()`: a system reset, the
    60 frames of display autodetection, and another system reset (the
    console's first and second; construction was the zeroth)."""
    driver.system_reset(console.reset_timer(1))
    driver.frames(0, 0, 60)
    driver.system_reset(console.reset_timer(2))


def reset_game(rules: games.GameRules, mode: int, driver: ConsoleDriver,
               resets: int) -> None:
    """`StellaEnvironment::reset` (ale-facts §1.3) as the `resets`-th
    `reset_game()`: system reset, 60 NOOP frames, RESET, the game's
    `setMode`, RESET again, then its starting actions."""
    driver.system_reset(console.reset_timer(3 + resets))
    driver.selects = 0
    driver.frames(0, 0, 60)
    driver.soft_reset()
    driver.begin_episode()
    rules.set_mode(driver, mode)
    driver.soft_reset()
    for action in rules.starting_actions:
        driver.frames(action, 0, 1)


class _EnvDriver(ConsoleDriver):
    """`ConsoleDriver` on one `EnvState`, frame by frame (`env._frame`)."""

    def __init__(self, env: AtariEnv, state: EnvState):
        self.env, self.state = env, state

    def frames(self, action: int, buttons: int, count: int) -> None:
        for _ in range(count):
            self.state = self.env._frame(self.state, jnp.int32(action),
                                         jnp.int32(buttons), True)

    def system_reset(self, timer: int) -> None:
        machine = console.system_reset(self.env.board, self.state.machine,
                                       timer)
        self.state = self.state.replace(
            machine=machine, episode_frame=jnp.int32(0),
            paddles=jnp.full((2,), PADDLE_CENTRE, jnp.int32))

    def begin_episode(self) -> None:
        self.state = self.state.replace(vars=self.env.rules.reset_vars())

    def ram(self) -> np.ndarray:
        return np.asarray(console.ram(self.state.machine))

    def episode_start(self) -> EnvState:
        """The state an episode starts from: no action or reward yet; reset
        frames are not counted, except one per pressSelect call (as ALE)."""
        return self.state.replace(action=jnp.int32(0), reward=jnp.int32(0),
                                  episode_frame=jnp.int32(self.selects))


def _check_choice(what: str, value: int, allowed, game: str) -> None:
    if value not in allowed:
        raise ValueError(f"{what} {value} is not available for {game!r}; "
                         f"choose one of {sorted(allowed)}")


def make(game: str, **overrides) -> tuple[AtariEnv, EnvParams]:
    """Make an environment and its default parameters (Gymnasium v5's).

    Args:
        game: ale-py's ROM id ("breakout") or an ALE/Gymnasium name
            ("Breakout", "ALE/Breakout-v5").
        **overrides: `full_action_space`, `mode`, `difficulty`,
            `num_reset_states` (environment), and any `EnvParams` field.

    Returns:
        (env, params).
    """
    env_keys = {"full_action_space", "mode", "difficulty", "num_reset_states"}
    fields = {f.name for f in dataclasses.fields(EnvParams)}
    unknown = set(overrides) - env_keys - fields
    if unknown:   # checked before the (slow) boot
        raise TypeError(f"unknown settings {sorted(unknown)}; known: "
                        f"{sorted(env_keys | fields)}")
    env = AtariEnv(game, **{k: v for k, v in overrides.items()
                            if k in env_keys})
    params = env.default_params()
    params = params.replace(**{k: v for k, v in overrides.items()
                               if k in fields})
    return env, params
