"""The standard Atari preprocessing, on the device, as pure jittable wrappers.

Gymnasium's `AtariPreprocessing` (over an ale-py env with frameskip 1) does,
per agent step:

* repeat the action `frame_skip` times, summing the rewards, and stop early
  when the episode ends;
* take ALE's grayscale screen (`getScreenGrayscale`: the palette's gray) after
  the last two of those frames and keep their elementwise maximum;
* shrink it to 84x84 with OpenCV's `INTER_AREA`;
* at reset, play 1 to `noop_max` NOOP frames (uniformly drawn);
* with `terminal_on_life_loss`, end the episode when a life is lost.

`info["life_lost"]` always says when a life was lost, so the episodic-life
variants need no other program: ale-py's `episodic_life` is
`terminal_on_life_loss` (a reset on a lost life), its `life_loss_info` (a
terminal signal without a reset) is `info["terminated"] |
info["life_lost"]`, as `jaxatari.gym`'s `life_loss_info=True` reports it.

`AtariPreprocessing` here does the same around an `AtariEnv`, in the gymnax
convention (`reset(key, params)`, `step(key, state, action, params)`), with
`EnvParams.frameskip` as the frame skip. Only the two pooled frames are drawn
(`AtariEnv.step_env(..., pooled=2)`). The NOOP starts cost nothing at run
time: NOOP frames after a reset are deterministic (the sticky action at a
reset is NOOP, so stickiness cannot change them), so `make_params` plays
them on the host once (and keeps them on disk: `jaxatari.boot_cache`) and
the reset draws among the resulting states.

On the step that ends an episode the observations differ from
Gymnasium's and ale-py's, by design. Their frame loops stop at the game
over, before the frame captures, so their two buffers still hold frames
from before: Gymnasium's the previous step's (or none of this one's),
ale-py's `AtariVectorEnv` repeats the previous step's newest frame
(`tests/test_wrappers.py` checks that). Here `step_env` (and the
Gymnasium adapter's terminal step) shows the game-over screen, and `step`
auto-resets (the gymnax convention) and returns the next episode's first
observation.

`area_resize` is OpenCV's `INTER_AREA` for a shrink by a non-integer factor,
to the bit: each output pixel is the area-weighted mean of the input pixels
its cell covers, with OpenCV's float32 weights, summed in its order (along
a row first, then down the rows) and rounded half to even. The exact
rational mean differs from OpenCV's only where it is a tie (x.5), and there
only the float32 sums decide, so each product must be rounded before its
add (fused into one multiply-add, which rounds once, some ties flip).
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxatari import (boot_cache, environment, lowering, reset_carry,
                      settings, spaces)

_CV_EPSILON = 1e-3  # OpenCV drops partial cells narrower than this
FIRE = 1  # ALE's PLAYER_A_FIRE
# The states after each reset's start frames, by (boot key, reset, frames,
# FIRE): deterministic, so a process plays each once.
_STARTS: dict[tuple, list] = {}


def area_table(size_in: int, size_out: int) -> tuple[np.ndarray, np.ndarray]:
    """OpenCV's `INTER_AREA` taps for one axis of a shrink.

    Returns:
        (sources int32[size_out, 3], weights float32[size_out, 3]): for
        each output pixel, the input pixels its cell covers, in order, and
        their weights (overlap / cell width, rounded to float32). Unused
        taps have weight 0.
    """
    if size_out > size_in:
        raise ValueError(f"area_resize only shrinks: {size_in} -> {size_out}")
    scale = size_in / size_out
    taps = max(1, math.ceil(scale) + 1)
    sources = np.zeros((size_out, taps), np.int32)
    weights = np.zeros((size_out, taps), np.float32)
    for out in range(size_out):
        start, end = out * scale, (out + 1) * scale
        cell = min(scale, size_in - start)
        first = min(math.ceil(start), size_in - 1)
        last = min(math.floor(end), size_in - 1)
        first = min(first, last)
        row = []
        if first - start > _CV_EPSILON:
            row.append((first - 1, (first - start) / cell))
        row += [(source, 1.0 / cell) for source in range(first, last)]
        if end - last > _CV_EPSILON:
            row.append((last, min(min(end - last, 1.0), cell) / cell))
        for tap, (source, weight) in enumerate(row):
            sources[out, tap], weights[out, tap] = source, weight
    return sources, weights


def _weighted_sum(values: jax.Array, sources: np.ndarray,
                  weights: np.ndarray, axis: int) -> jax.Array:
    """sum_k values[sources[:, k]] * weights[:, k] along `axis`, one float32
    product and add at a time, in tap order, each rounded."""
    total = jnp.zeros((), jnp.float32)
    for tap in range(sources.shape[1]):
        picked = jnp.take(values, jnp.asarray(sources[:, tap]), axis=axis)
        shape = [1] * values.ndim
        shape[axis] = sources.shape[0]
        product = picked * jnp.asarray(weights[:, tap]).reshape(shape)
        # Rounded to float32 before the add, as OpenCV rounds it. A
        # multiply that feeds an add straight is fused into one
        # multiply-add (one rounding) by the compiler; the `where` (a
        # no-op: products are >= 0) stands between them.
        total = total + jnp.where(product >= 0, product, 0.0)
    return total


def area_resize(frames: jax.Array, height: int, width: int) -> jax.Array:
    """OpenCV's `cv2.resize(frame, (width, height), interpolation=
    cv2.INTER_AREA)` for uint8 frames, shrinking by non-integer factors.

    Args:
        frames: uint8[..., H, W] (gray) or uint8[..., H, W, C].
        height, width: the output size.

    Returns:
        uint8[..., height, width(, C)].
    """
    gray = frames.ndim >= 2 and frames.shape[-1] != 3
    row_axis = frames.ndim - (2 if gray else 3)
    size_in = frames.shape[row_axis], frames.shape[row_axis + 1]
    size_out = (height, width)
    if size_in != size_out and all(n % m == 0 for n, m in zip(size_in,
                                                               size_out)):
        raise ValueError(f"{size_in} -> {size_out}: integer factors take "
                         "OpenCV's other area path, not written here")
    values = frames.astype(jnp.float32)
    across = _weighted_sum(values, *area_table(size_in[1], width),
                           axis=row_axis + 1)
    down = _weighted_sum(across, *area_table(size_in[0], height),
                         axis=row_axis)
    return jnp.clip(jnp.round(down), 0, 255).astype(jnp.uint8)


def life_lost(lives_before: Any, lives_after: Any) -> Any:
    """ALE's rule (ale-py's vector env): a life is lost when the count drops
    and is not 0 (the last one ends the game anyway). For jax or numpy
    arrays."""
    return (lives_after < lives_before) & (lives_after > 0)


def unwrapped(env: Any) -> environment.AtariEnv:
    """The `AtariEnv` inside any stack of wrappers."""
    while not isinstance(env, environment.AtariEnv):
        env = env.env
    return env


def inner_state(state: Any) -> environment.EnvState:
    """The `EnvState` inside any wrapper's state (batched if it is)."""
    while not isinstance(state, environment.EnvState):
        state = state.env_state
    return state


def reset_after(env: Any, key: jax.Array, played: Any, params: Any,
                done: jax.Array | bool = True):
    """`env.reset_after` (the auto-reset after an episode ending in
    `played`: `AtariEnv.reset_after`), or `env.reset` for an env without
    one (gymnax's, whose reset does not depend on the last episode)."""
    if hasattr(env, "reset_after"):
        return env.reset_after(key, played, params, done)
    return env.reset(key, params)


class _Wrapper:
    """Passes what it does not define (params, action sets, ...) on to the
    env it wraps."""

    def __init__(self, env: Any, *settings: Any):
        self.env = env
        self._settings = settings

    def __getattr__(self, name: str) -> Any:
        if name in ("env", "_settings"):  # not set yet (copy, pickle)
            raise AttributeError(name)
        return getattr(self.env, name)

    # Equal wrappers of equal envs share their traces (`jit` with the
    # wrapper static), so making one again costs no tracing.
    def __eq__(self, other: object) -> bool:
        return (type(other) is type(self) and other.env == self.env
                and other._settings == self._settings)

    def __hash__(self) -> int:
        return hash((type(self), self.env, self._settings))

    def reset_after(self, key: jax.Array, played: Any, params: Any,
                    done: jax.Array | bool = True):
        """The auto-reset after an episode ending in `played`; a wrapper
        whose state is not its env's own passes on the env's part."""
        return reset_after(self.env, key, played, params, done)

    def observation_space(self, params: Any) -> spaces.Box:
        """gymnax's `Box` of this wrapper's observation (its `reset`'s)."""
        return spaces.observation_space(self, params)

    @functools.partial(jax.jit, static_argnums=(0,))
    def step(self, key: jax.Array, state: Any, action: jax.Array,
             params: Any):
        """`step_env`, then a reset where done (gymnax's auto-reset): the
        observation and state returned are then the new episode's.

        Returns:
            (obs, state, reward, done, info).
        """
        step_key, reset_key = jax.random.split(key)
        obs, stepped, reward, done, info = self.step_env(step_key, state,
                                                         action, params)
        reset_obs, reset_state = self.reset_after(reset_key, stepped, params,
                                                  done)
        state = jax.tree.map(lambda a, b: jnp.where(done, a, b), reset_state,
                             stepped)
        return jnp.where(done, reset_obs, obs), state, reward, done, info


@struct.dataclass
class PreprocessedState:
    """The wrapped env's state and the lives it had at the last step."""
    env_state: environment.EnvState
    lives: jax.Array


class AtariPreprocessing(_Wrapper):
    """Gymnasium's `AtariPreprocessing` over a jaxatari `AtariEnv`.

    Its defaults are Gymnasium's: 84x84, grayscale, no life-loss terminal,
    uint8 observations. The frame skip is `params.frameskip`; `noop_max`
    goes to `make_params`. `step` auto-resets, as `AtariEnv.step` does.
    """

    def __init__(self, env: environment.AtariEnv,
                 screen_size: int | tuple[int, int] = 84,
                 terminal_on_life_loss: bool = False,
                 grayscale_obs: bool = True, scale_obs: bool = False):
        width, height = ((screen_size, screen_size)
                         if isinstance(screen_size, int) else screen_size)
        super().__init__(env, (width, height), terminal_on_life_loss,
                         grayscale_obs, scale_obs)
        self.screen_size = (width, height)
        self.terminal_on_life_loss = terminal_on_life_loss
        self.grayscale_obs = grayscale_obs
        self.scale_obs = scale_obs

    def make_params(self, noop_max: int = 30, noop_min: int = 1,
                    fire_reset: bool = False, **fields: Any
                    ) -> environment.EnvParams:
        """The env's params with its resets followed by the start frames.

        Each reset state is followed by one start per draw d in `noop_min`
        ..`noop_max` (so `reset` draws d uniformly): FIRE for one frame if
        `fire_reset` (and the game has FIRE), then d NOOP frames, one
        fewer after a FIRE. Gymnasium's `AtariPreprocessing`: d in
        1..noop_max, no FIRE (the defaults). ale-py's `AtariVectorEnv`:
        d in 0..noop_max - 1 and FIRE (`make_atari`). `noop_max` 0: the
        resets themselves.

        Args:
            noop_max, noop_min: the range of the draw.
            fire_reset: press FIRE for a frame first, where the game's
                action set has it.
            **fields: `AtariEnv.make_params` arguments (mode, difficulty,
                frameskip, repeat_action_probability, ...); `obs_type` is
                set by the wrapper.

        Raises:
            ValueError: a bad range, a field out of range
                (`settings.check_settings`), or FIRE starts with sticky
                actions (the frames after FIRE would then be random); all
                before any emulation.
        """
        settings.check_settings(fields)
        if noop_min < 0 or (noop_max and not noop_min <= noop_max):
            raise ValueError(f"need 0 <= noop_min <= noop_max, got "
                             f"{noop_min}..{noop_max}")
        fire = fire_reset and FIRE in self.env.action_set
        if fire and fields.get("repeat_action_probability", 0.25) > 0:
            raise ValueError("fire_reset needs repeat_action_probability=0:"
                             " with sticky actions the NOOPs after FIRE may"
                             " repeat it")
        obs_type = "grayscale" if self.grayscale_obs else "rgb"
        params = self.env.make_params(obs_type=obs_type, **fields)
        if noop_max == 0 and not fire:
            return params
        draws = range(noop_min, noop_max + 1) if noop_max else (0,)
        played = {"draws": list(draws), "fire": fire,
                  "max_num_frames_per_episode":
                      params.max_num_frames_per_episode}
        starts = boot_cache.cached_starts(
            self.env, params.mode, params.difficulty, played,
            lambda: self._starts(params, draws, fire))
        return params.replace(reset_states=starts, reset_scripts=(
            self._start_scripts(params, starts, draws, fire)))

    def _start_scripts(self, params: environment.EnvParams,
                       starts: environment.EnvState, draws: range | tuple,
                       fire: bool) -> reset_carry.ResetScript | None:
        """The scripts of the start states (`reset_carry.followed_by`),
        for a game that replays its resets; None otherwise, and with a
        warning where a start frame ended the game (`_start_frames` then
        starts over: no script)."""
        if params.reset_scripts is None:
            return None
        count = len(jax.tree.leaves(params.reset_scripts)[0])
        played = [[FIRE] * fire + [0] * max(d - fire, 0) for d in draws]
        scripts, length = [], (len(params.reset_scripts.actions[0])
                               + max(map(len, played)))
        for k in range(count):
            script = jax.tree.map(lambda x, k=k: x[k], params.reset_scripts)
            scripts += [reset_carry.followed_by(script, frames, length)
                        for frames in played]
        frames = np.asarray(starts.episode_frame)
        first = np.repeat(np.asarray(
            params.reset_states.episode_frame), len(played))
        if not np.array_equal(frames, first + np.tile(
                [len(p) for p in played], count)):
            warnings.warn(
                f"jaxatari: a start frame of {self.env.rules.rom_id} ended "
                "the game; its resets after play are those of an unplayed "
                "console", stacklevel=3)
            return None
        return boot_cache.stack(scripts)

    def _starts(self, params: environment.EnvParams, draws: range | tuple,
                fire: bool) -> list[environment.EnvState]:
        """The states after each reset's start frames, one per reset and
        draw (`make_params`), played once a process (`_STARTS`)."""
        count = len(jax.tree.leaves(params.reset_states)[0])
        states = []
        for k in range(count):
            key = (self.env.boot_key(params.mode, params.difficulty), k,
                   max(max(draws), fire), fire,
                   params.max_num_frames_per_episode)
            if key not in _STARTS:
                start = jax.tree.map(lambda x, k=k: x[k], params.reset_states)
                _STARTS[key] = self._start_frames(start, key[2], fire, params)
            states += [_STARTS[key][max(d - fire, 0) + fire] for d in draws]
        return states

    def _start_frames(self, start: environment.EnvState, count: int,
                      fire: bool, params: environment.EnvParams):
        """`start`, then the states after each of `count` frames: FIRE
        first if `fire`, then NOOPs. A frame that ends the game starts
        over from `start`, as Gymnasium and ale-py reset then."""
        state, states = start, [start]
        for frame in range(count):
            action = jnp.int32(FIRE if fire and frame == 0 else 0)
            state = self.env._frame(state.replace(action=action), action,
                                    jnp.int32(0),
                                    jnp.int32(params.difficulty), True)
            if bool(self.env._game_over(state, params)):
                state = start
            states.append(state)
        return states

    def observation(self, frames: jax.Array) -> jax.Array:
        """Pooled gray (or RGB) frames resized, scaled if asked."""
        width, height = self.screen_size
        obs = area_resize(frames, height, width)
        return obs.astype(jnp.float32) / 255.0 if self.scale_obs else obs

    @functools.partial(jax.jit, static_argnums=(0,))
    def reset(self, key: jax.Array, params: environment.EnvParams):
        """A reset (after its NOOP frames): (obs, state)."""
        return self._started(*self.env.reset(key, params))

    def reset_after(self, key: jax.Array, played: PreprocessedState,
                    params: environment.EnvParams,
                    done: jax.Array | bool = True):
        """The auto-reset after an episode ending in `played`
        (`AtariEnv.reset_after`, then the NOOP frames): (obs, state)."""
        return self._started(*self.env.reset_after(key, played.env_state,
                                                   params, done))

    def _started(self, frames: jax.Array, env_state: environment.EnvState):
        return self.observation(frames), PreprocessedState(
            env_state=env_state, lives=env_state.lives)

    def step_env(self, key: jax.Array, state: PreprocessedState,
                 action: jax.Array, params: environment.EnvParams):
        """One agent step, no reset (`step` adds the auto-reset).

        Returns:
            (obs, state, reward, done, info) as `AtariEnv.step_env`, and
            `info["life_lost"]`: the lives fell, to a count above 0. With
            `terminal_on_life_loss` a lost life also sets `done` and
            `info["terminated"]` (the episode ends and `step` resets the
            game: ale-py's `episodic_life`). Without it the game plays on;
            ale-py's `life_loss_info` (and SB3's `EpisodicLifeEnv`, for the
            value target) is `info["terminated"] | info["life_lost"]`.
        """
        pooled = 2 if params.frameskip > 1 else 1
        frames, env_state, reward, done, info = self.env.step_env(
            key, state.env_state, action, params, pooled)
        lost = life_lost(state.lives, env_state.lives)
        info = {**info, "life_lost": lost}
        if self.terminal_on_life_loss:
            info["terminated"] = info["terminated"] | lost
            done = done | lost
        return self.observation(frames), PreprocessedState(
            env_state=env_state, lives=env_state.lives), reward, done, info


@struct.dataclass
class StackedState:
    """The wrapped env's state and the last `num_stack` observations."""
    env_state: Any
    frames: jax.Array


class FrameStack(_Wrapper):
    """The last `num_stack` observations, oldest first, on a new leading
    axis. After a reset the stack holds the reset observation last and
    zeros before it (`padding="zero"`, ale-py's `AtariVectorEnv`) or the
    reset observation throughout (`"reset"`, Gymnasium's
    `FrameStackObservation`)."""

    def __init__(self, env: Any, num_stack: int = 4, padding: str = "zero"):
        super().__init__(env, num_stack, padding)
        if num_stack < 1 or padding not in ("zero", "reset"):
            raise ValueError(f"num_stack >= 1 and padding 'zero' or "
                             f"'reset', got {num_stack}, {padding!r}")
        self.num_stack, self.padding = num_stack, padding

    def _fresh(self, obs: jax.Array) -> jax.Array:
        frames = jnp.repeat(obs[None], self.num_stack, axis=0)
        if self.padding == "zero":
            frames = frames.at[:-1].set(0)
        return frames

    def reset(self, key: jax.Array, params: Any):
        return self._started(*self.env.reset(key, params))

    def reset_after(self, key: jax.Array, played: StackedState, params: Any,
                    done: jax.Array | bool = True):
        """The auto-reset after an episode ending in `played`."""
        return self._started(*reset_after(self.env, key, played.env_state,
                                          params, done))

    def _started(self, obs: jax.Array, state: Any):
        frames = self._fresh(obs)
        return frames, StackedState(env_state=state, frames=frames)

    def step_env(self, key: jax.Array, state: StackedState,
                 action: jax.Array, params: Any):
        obs, env_state, reward, done, info = self.env.step_env(
            key, state.env_state, action, params)
        frames = jnp.concatenate([state.frames[1:], obs[None]])
        return frames, StackedState(env_state=env_state, frames=frames), \
            reward, done, info


class ClipReward(_Wrapper):
    """Rewards clipped to [-1, 1] (ale-py's `reward_clipping`); the
    unclipped reward is `info["unclipped_reward"]`."""

    def reset(self, key: jax.Array, params: Any):
        return self.env.reset(key, params)

    def step_env(self, key: jax.Array, state: Any, action: jax.Array,
                 params: Any):
        obs, state, reward, done, info = self.env.step_env(key, state,
                                                           action, params)
        info = {**info, "unclipped_reward": reward}
        return obs, state, jnp.clip(reward, -1, 1), done, info


class VecEnv(_Wrapper):
    """`num_envs` copies of an env as one: `reset(key, params)` and
    `step(key, state, actions, params)` take one key and return a leading
    batch axis of `num_envs` (each copy gets its own split of the key)."""

    def __init__(self, env: Any, num_envs: int):
        super().__init__(env, num_envs)
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.num_envs = num_envs

    def observation_space(self, params: Any) -> spaces.Box:
        """One env's observation space (gymnax's and PureJaxRL's vector
        wrappers give the single env's, as `action_space` does here)."""
        return self.env.observation_space(params)

    @functools.partial(jax.jit, static_argnums=(0,))
    def reset(self, key: jax.Array, params: Any):
        keys = jax.random.split(key, self.num_envs)
        return jax.vmap(self.env.reset, in_axes=(0, None))(keys, params)

    @functools.partial(jax.jit, static_argnums=(0,))
    def reset_after(self, key: jax.Array, played: Any, params: Any,
                    done: jax.Array | bool = True):
        """Each env's `reset_after` (the envs where `done`, a bool or one
        per env; the others get a plain `reset`'s state)."""
        keys = jax.random.split(key, self.num_envs)
        done = jnp.broadcast_to(jnp.asarray(done), (self.num_envs,))
        return self._resets(keys, played, params, done)

    def _resets(self, keys: jax.Array, played: Any, params: Any,
                done: jax.Array) -> tuple:
        """The module's `reset_after` of each env of `played`, with its
        key and done flag."""
        return jax.vmap(functools.partial(reset_after, self.env),
                        in_axes=(0, 0, None, 0))(keys, played, params, done)

    @functools.partial(jax.jit, static_argnums=(0,))
    def step(self, key: jax.Array, state: Any, actions: jax.Array,
             params: Any):
        """Each env's `step` (with its own auto-reset), each env with its
        split of `key` (`step_each`)."""
        return self.step_each(jax.random.split(key, self.num_envs), state,
                              actions, params)

    def step_each(self, keys: jax.Array, state: Any, actions: jax.Array,
                  params: Any):
        """`jax.vmap(env.step)` over the batch, `keys` one per env: the
        same bits, made faster on the CPU.

        For a jaxatari env or wrapper, whose `step` is `step_env`, then
        `reset_after` and a select where done, the CPU's lowering makes
        the batch's resets apart from its steps, for the done envs alone
        (`_reset_done`): a step where none is done makes no reset. Each
        env's own `step` resets every env, masked: a reset draws, grays
        and resizes a start screen, which for a batch of 256 was a tenth
        to a sixth of the preset's step on the CPU (BENCHMARKS.md, "The
        auto-reset for the done envs alone"). The accelerator's lowering,
        and any other env, vmap each env's `step` as it is (no loop, no
        cond)."""
        def each():
            return self._each(self.env.step, keys, state, actions, params)
        if not _resets_as_jaxatari(self.env):
            return each()
        return lowering.per_backend(
            cpu=lambda: self._step_resetting_done(keys, state, actions,
                                                  params),
            accelerator=each)

    def _step_resetting_done(self, keys: jax.Array, state: Any,
                             actions: jax.Array, params: Any):
        """`step_each` of a jaxatari env, its resets for the done envs
        alone: each env's key split as its own `step` splits it."""
        halves = jax.vmap(jax.random.split)(keys)
        obs, stepped, reward, done, info = self._each(
            self.env.step_env, halves[:, 0], state, actions, params)
        obs, state = self._reset_done(halves[:, 1], params, done,
                                      (obs, stepped))
        return obs, state, reward, done, info

    @property
    def reset_chunk(self) -> int:
        """How many done envs the CPU's `step` resets at once: a 32nd of
        the batch (about 1 env in 200 to 900 ends a random-play episode
        at a step on Pong, Breakout and Ms. Pac-Man)."""
        return -(-self.num_envs // 32)

    def _reset_done(self, keys: jax.Array, params: Any, done: jax.Array,
                    kept: tuple) -> tuple:
        """(obs, state) `kept` with the envs `done` reset (`reset_after`
        with their `keys`), `reset_chunk` at a time: each chunk gathered,
        reset and put back at its rows, until none is left; no trip where
        none is done."""
        def chunk(carry):
            kept, todo = carry
            index = jnp.nonzero(todo, size=self.reset_chunk,
                                fill_value=self.num_envs)[0]
            take = lambda x: x.at[index].get(mode="clip")   # noqa: E731
            reset = self._resets(take(keys), jax.tree.map(take, kept[1]),
                                 params, index < self.num_envs)
            kept = jax.tree.map(
                lambda old, new: old.at[index].set(new, mode="drop"), kept,
                reset)
            return kept, todo.at[index].set(False, mode="drop")
        kept, _ = jax.lax.while_loop(lambda carry: jnp.any(carry[1]), chunk,
                                     (kept, done))
        return kept

    def step_env(self, key: jax.Array, state: Any, actions: jax.Array,
                 params: Any):
        """Each env's `step_env` (no reset)."""
        return self._each(self.env.step_env,
                          jax.random.split(key, self.num_envs), state,
                          actions, params)

    @staticmethod
    def _each(step, keys, state, actions, params):
        """`step` of each env, with its key and action."""
        return jax.vmap(step, in_axes=(0, 0, 0, None))(keys, state, actions,
                                                        params)


def _resets_as_jaxatari(env: Any) -> bool:
    """Whether `env.step` is jaxatari's auto-reset (`_Wrapper.step`,
    `AtariEnv.step`), which `VecEnv.step` may make for the batch at once."""
    step = getattr(type(env), "step", None)
    return step in (_Wrapper.step, environment.AtariEnv.step)


def make_atari(game: str, num_envs: int = 1, *, frameskip: int = 4,
               screen_size: int = 84, stack_num: int = 4,
               noop_max: int = 30, fire_reset: bool = True,
               reward_clipping: bool = True,
               repeat_action_probability: float = 0.0,
               terminal_on_life_loss: bool = False, grayscale: bool = True,
               max_num_frames_per_episode: int = 108_000,
               **env_kwargs: Any) -> tuple[VecEnv, environment.EnvParams]:
    """The batched, preprocessed Atari env most papers use, with ale-py's
    `AtariVectorEnv` defaults: frameskip 4, max-pool of the last two
    frames, 84x84 gray, a stack of 4 (zeros before the reset frame),
    FIRE then up to 29 NOOP frames at reset, rewards clipped to [-1, 1],
    no sticky actions.

    Args:
        game: a ROM id (`jaxatari.list_games()`).
        num_envs: the batch size.
        noop_max: the NOOP draw is uniform in 0..noop_max - 1, one fewer
            NOOP after a FIRE (ale-py's rule); 0 for none.
        **env_kwargs: `AtariEnv` arguments (mode, difficulty,
            full_action_space, ...).

    Returns:
        (env, params): `env.reset(key, params)` and `env.step(key, state,
        actions, params)` work on all `num_envs` at once and jit whole.

    Raises:
        ValueError: an unknown game, or a setting out of range (a
            frameskip, num_envs, stack_num or screen_size below 1, a
            negative noop_max or episode frame limit, a
            repeat_action_probability outside [0, 1]), before any boot.
    """
    settings.check_settings(
        {"frameskip": frameskip, "num_envs": num_envs,
         "stack_num": stack_num, "screen_size": screen_size,
         "noop_max": noop_max,
         "max_num_frames_per_episode": max_num_frames_per_episode,
         "repeat_action_probability": repeat_action_probability})
    base = AtariPreprocessing(environment.AtariEnv(game, **env_kwargs),
                              screen_size=screen_size,
                              terminal_on_life_loss=terminal_on_life_loss,
                              grayscale_obs=grayscale)
    params = base.make_params(
        noop_max=max(noop_max - 1, 0), noop_min=0, fire_reset=fire_reset,
        frameskip=frameskip,
        repeat_action_probability=repeat_action_probability,
        max_num_frames_per_episode=max_num_frames_per_episode)
    env = FrameStack(base, stack_num) if stack_num > 1 else base
    if reward_clipping:
        env = ClipReward(env)
    return VecEnv(env, num_envs), params
