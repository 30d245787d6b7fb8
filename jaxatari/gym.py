"""Gymnasium adapters: jaxatari behind the `gymnasium.Env` and
`gymnasium.vector.VectorEnv` APIs, numpy in and numpy out.

    import gymnasium, jaxatari.gym
    envs = gymnasium.make_vec("jaxatari/Breakout-v5", num_envs=8)
    obs, info = envs.reset(seed=0)
    obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())

Importing this module registers one id per game, `jaxatari/<Name>-v5`
(`Name` as ale-py spells it: `Breakout`, `SpaceInvaders`, ...), with
ale-py's `ALE/<Name>-v5` settings: frameskip 4, sticky actions 0.25, RGB
observations, the minimal action set. Keyword arguments change them:
`gymnasium.make_vec(id, num_envs, preprocess=True)` gives `make_atari`'s
preset (84x84 gray, a stack of 4, ...), and any `jaxatari.make` or
`make_atari` argument passes through.

The vector env auto-resets as Gymnasium's default (`AutoresetMode.
NEXT_STEP`): the step that ends an episode returns its last observation,
and the next `step` resets that env (its action is ignored, its reward is
0). One jitted program runs the whole batch on the device.
`life_loss_info=True` reports a lost life as `terminated` without a reset,
as ale-py's `AtariVectorEnv` option of that name does.
"""
from __future__ import annotations

import functools
from typing import Any

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from jaxatari import environment, games, wrappers


def env_name(rom_id: str) -> str:
    """ale-py's name of a game: `space_invaders` -> `SpaceInvaders`."""
    return "".join(part.capitalize() for part in rom_id.split("_"))


def _make_env(game: str, num_envs: int, preprocess: bool,
              **kwargs: Any) -> tuple[wrappers.VecEnv, Any]:
    """A batched jaxatari env and its params: ALE v5 settings, or the
    `make_atari` preset with `preprocess`."""
    if preprocess:
        return wrappers.make_atari(game, num_envs, **kwargs)
    base, params = environment.make(game, **kwargs)
    return wrappers.VecEnv(base, num_envs), params


def _observation_space(obs: np.ndarray) -> spaces.Box:
    if obs.dtype == np.uint8:
        return spaces.Box(0, 255, obs.shape, np.uint8)
    return spaces.Box(0.0, 1.0, obs.shape, obs.dtype)


def _to_numpy(info: dict) -> dict:
    return {key: np.asarray(value) for key, value in info.items()}


@functools.partial(jax.jit, static_argnums=(0,))
def _next_step(env: wrappers.VecEnv, key: jax.Array, state: Any,
               needs_reset: jax.Array, actions: jax.Array, params: Any):
    """Envs that ended last step reset; the others step (no reset)."""
    step_key, reset_key = jax.random.split(key)
    obs, stepped, reward, done, info = env.step_env(step_key, state,
                                                    actions, params)
    reset_obs, reset_state = env.reset_after(reset_key, state, params,
                                             needs_reset)

    def pick(fresh, old):
        mask = needs_reset.reshape(needs_reset.shape + (1,) * (old.ndim - 1))
        return jnp.where(mask, fresh, old)

    state = jax.tree.map(pick, reset_state, stepped)
    terminated = info["terminated"] & ~needs_reset
    truncated = info["truncated"] & ~needs_reset
    # A reset env's info describes its reset: its lives and frame number,
    # zeros for what no step made (the discarded step's actions, rewards).
    start = wrappers.inner_state(state)
    info = {key: pick(jnp.zeros_like(value), value)
            for key, value in info.items()
            if key not in ("terminated", "truncated")}
    info.update(lives=start.lives, episode_frame_number=start.episode_frame)
    return (pick(reset_obs, obs), state, jnp.where(needs_reset, 0, reward),
            terminated, truncated, done & ~needs_reset, info)


class JaxAtariVectorEnv(gymnasium.vector.VectorEnv):
    """`num_envs` jaxatari envs as one Gymnasium `VectorEnv`.

    Args:
        game: a ROM id (`jaxatari.list_games()`).
        num_envs: the batch size.
        preprocess: `make_atari`'s preset instead of ALE v5's settings.
        life_loss_info: ale-py's option: a lost life (the count falls to
            one above 0) is reported as `terminated`, but the env plays on
            (it resets when the game is over). For a reset on a lost life
            (ale-py's `episodic_life`) pass `terminal_on_life_loss=True`
            with `preprocess`.
        **kwargs: `jaxatari.make` (or `make_atari`) arguments.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP,
                "render_modes": []}

    def __init__(self, game: str, num_envs: int = 1, preprocess: bool = False,
                 life_loss_info: bool = False, **kwargs: Any):
        self.game = game
        self.life_loss_info = life_loss_info
        self.num_envs = num_envs
        self._env, self._params = _make_env(game, num_envs, preprocess,
                                            **kwargs)
        self._reset = self._env.reset  # jitted, keyed on the (equal) env
        self._key = jax.random.key(0)
        obs, self._state = self._reset(self._split(), self._params)
        single = _observation_space(np.asarray(obs)[0])
        self.single_observation_space = single
        self.single_action_space = spaces.Discrete(
            len(self._env.action_set))
        self.observation_space = batch_space(single, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._needs_reset = jnp.zeros(num_envs, bool)
        self._lives = self._lives_now()

    def _lives_now(self) -> np.ndarray:
        return np.asarray(wrappers.inner_state(self._state).lives)

    def _split(self) -> jax.Array:
        self._key, key = jax.random.split(self._key)
        return key

    def reset(self, *, seed: int | None = None,
              options: dict | None = None):
        """Reset every env. `seed` seeds the run's key.

        As ale-py's `AtariEnv.reset`: with a seed, each game starts as
        a console just loaded; without one, each console that played is
        reset (`reset_game()`, which some games' RAM outlives:
        `AtariEnv.reset_after`).
        """
        del options
        if seed is not None:
            self._key = jax.random.key(seed)
            obs, self._state = self._reset(self._split(), self._params)
        else:
            obs, self._state = self._env.reset_after(
                self._split(), self._state, self._params)
        self._needs_reset = jnp.zeros(self.num_envs, bool)
        self._lives = self._lives_now()
        return np.asarray(obs), {}

    def step(self, actions):
        """Step every env; numpy in, numpy out."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not self.action_space.contains(
                actions.astype(np.int64)):
            raise ValueError(
                f"actions must be {self.num_envs} ints in "
                f"[0, {self.single_action_space.n}), got {actions!r}")
        resetting = np.asarray(self._needs_reset)
        obs, self._state, reward, terminated, truncated, done, info = \
            _next_step(self._env, self._split(), self._state,
                       self._needs_reset, jnp.asarray(actions, jnp.int32),
                       self._params)
        self._needs_reset = done
        terminated, info = np.asarray(terminated), _to_numpy(info)
        if self.life_loss_info:   # info["lives"]: after the step or reset
            terminated = terminated | (
                wrappers.life_lost(self._lives, info["lives"]) & ~resetting)
        self._lives = info["lives"]
        return (np.asarray(obs), np.asarray(reward, np.float64), terminated,
                np.asarray(truncated), info)


class JaxAtariEnv(gymnasium.Env):
    """One jaxatari env as a Gymnasium `Env` (no auto-reset: call `reset`
    after an episode ends, as with any Gymnasium env)."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, game: str, preprocess: bool = False,
                 render_mode: str | None = None, **kwargs: Any):
        self._vector = JaxAtariVectorEnv(game, 1, preprocess, **kwargs)
        self.observation_space = self._vector.single_observation_space
        self.action_space = self._vector.single_action_space
        self.render_mode = render_mode

    def reset(self, *, seed: int | None = None,
              options: dict | None = None):
        super().reset(seed=seed)
        obs, info = self._vector.reset(seed=seed, options=options)
        return obs[0], info

    def step(self, action):
        obs, reward, terminated, truncated, info = self._vector.step(
            np.asarray([action]))
        return (obs[0], float(reward[0]), bool(terminated[0]),
                bool(truncated[0]), {k: v[0] for k, v in info.items()})

    def render(self):
        """The current screen as RGB (`render_mode="rgb_array"`)."""
        inner = self._vector
        state = jax.tree.map(lambda x: x[0], inner._state)
        return np.asarray(wrappers.unwrapped(inner._env).screen_rgb(
            wrappers.inner_state(state)))


def make_vec(game: str, num_envs: int = 1, **kwargs: Any
             ) -> JaxAtariVectorEnv:
    """`JaxAtariVectorEnv(game, num_envs, **kwargs)` (the registered ids'
    vector entry point)."""
    return JaxAtariVectorEnv(game, num_envs, **kwargs)


def register_envs() -> None:
    """Register `jaxatari/<Name>-v5` for every game (done on import)."""
    for rom_id in games.list_games():
        env_id = f"jaxatari/{env_name(rom_id)}-v5"
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(env_id, entry_point="jaxatari.gym:JaxAtariEnv",
                           vector_entry_point="jaxatari.gym:make_vec",
                           kwargs={"game": rom_id})


register_envs()
