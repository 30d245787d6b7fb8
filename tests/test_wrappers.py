"""`jaxatari.wrappers` against OpenCV and Gymnasium's `AtariPreprocessing`
over ale-py, on the same action streams, without sticky actions."""
import pathlib
import re

import cv2
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ale_py
import ale_py.vector_env
import jaxatari
import jaxatari.gym
from jaxatari import environment, lowering, wrappers

gymnasium.register_envs(ale_py)


def test_area_resize_is_opencvs_inter_area():
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, (16, 210, 160), dtype=np.uint8)
    # Flat regions and sharp edges make the x.5 ties that only OpenCV's
    # float32 sums decide.
    frames[8:] = (frames[8:] // 64) * 85
    ours = np.asarray(jax.jit(lambda f: wrappers.area_resize(f, 84, 84))(
        frames))
    for frame, mine in zip(frames, ours):
        want = cv2.resize(frame, (84, 84), interpolation=cv2.INTER_AREA)
        np.testing.assert_array_equal(mine, want)


def test_area_resize_keeps_rgb_channels():
    rng = np.random.default_rng(1)
    frame = rng.integers(0, 256, (210, 160, 3), dtype=np.uint8)
    want = cv2.resize(frame, (64, 100), interpolation=cv2.INTER_AREA)
    np.testing.assert_array_equal(
        np.asarray(wrappers.area_resize(jnp.asarray(frame), 100, 64)), want)


def test_area_resize_refuses_integer_factors():
    with pytest.raises(ValueError, match="integer factors"):
        wrappers.area_resize(jnp.zeros((210, 160), jnp.uint8), 105, 80)


GAMES = {"breakout": "Breakout", "pong": "Pong", "seaquest": "Seaquest"}
NOOP_MAX = 30
# The README's settings, so that its snippets reuse these tests' programs.
SETTINGS = dict(noop_max=NOOP_MAX, repeat_action_probability=0.0)


@pytest.fixture(scope="module")
def preprocessed():
    """game -> (AtariPreprocessing, params), made once per game."""
    made = {}

    def make(game):
        if game not in made:
            env = wrappers.AtariPreprocessing(environment.AtariEnv(game))
            made[game] = env, env.make_params(**SETTINGS)
        return made[game]
    return make


def _ale_start_index(params, episode_frame: int) -> int:
    """The index of the NOOP start that ALE reached (the one with its
    episode frame number). ale-py's `reset(seed=...)` reloads the ROM (a
    reset) and then resets, so its first episode begins at the second reset
    since loadROM: the second block of starts. Their RAM is the same as
    the first block's, not their timing: Breakout's serve after a lost life
    differs."""
    block = np.asarray(params.reset_states.episode_frame)[
        NOOP_MAX:2 * NOOP_MAX]
    (index,) = np.flatnonzero(block == episode_frame)
    return NOOP_MAX + int(index)


def _start_like_ale(params, episode_frame: int):
    """The NOOP start that ALE reached (`_ale_start_index`)."""
    index = _ale_start_index(params, episode_frame)
    return jax.tree.map(lambda x: x[index], params.reset_states)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_observations_equal_gymnasium_atari_preprocessing(game, preprocessed):
    # With these actions Breakout loses its 5 lives by step 142 (game over)
    # and Seaquest its first at step 138.
    steps = 150
    reference = gymnasium.wrappers.AtariPreprocessing(
        gymnasium.make(f"ALE/{GAMES[game]}-v5", frameskip=1,
                       repeat_action_probability=0.0),
        noop_max=NOOP_MAX, frame_skip=4)
    obs_ref, _ = reference.reset(seed=0)
    env, params = preprocessed(game)
    first = _start_like_ale(
        params, reference.unwrapped.ale.getEpisodeFrameNumber())
    obs = env.observation(env.env.observation(first, params))
    state = wrappers.PreprocessedState(env_state=first, lives=first.lives)
    np.testing.assert_array_equal(np.asarray(obs), obs_ref)
    rng = np.random.default_rng(7)
    count = len(env.env.action_set)
    for t in range(steps):
        action = int(rng.integers(count))
        obs_ref, reward_ref, term, trunc, _ = reference.step(action)
        # a Python int, as the README's snippet passes it (a weakly typed
        # scalar): the snippet's test then reuses this program
        obs, state, reward, done, info = env.step(jax.random.key(t), state,
                                                  action, params)
        assert float(reward) == reward_ref, t
        assert bool(done) == (term or trunc), t
        if term or trunc:
            break
        np.testing.assert_array_equal(np.asarray(obs), obs_ref,
                                      err_msg=f"step {t}")


def test_noop_starts_are_gymnasiums(preprocessed):
    """Gymnasium's reset plays 1..noop_max NOOPs; the start with the same
    episode frame number in the second reset's block is ALE's state."""
    env, params = preprocessed("breakout")
    frames = np.asarray(params.reset_states.episode_frame)
    assert frames.shape == (4 * NOOP_MAX,)
    assert (np.diff(frames[:NOOP_MAX]) == 1).all()
    seen = set()
    for seed in range(4):
        reference = gymnasium.wrappers.AtariPreprocessing(
            gymnasium.make("ALE/Breakout-v5", frameskip=1,
                           repeat_action_probability=0.0),
            noop_max=NOOP_MAX, frame_skip=4)
        obs_ref, _ = reference.reset(seed=seed)
        frame = reference.unwrapped.ale.getEpisodeFrameNumber()
        seen.add(frame)
        state = _start_like_ale(params, frame)
        obs = env.observation(env.env.observation(state, params))
        np.testing.assert_array_equal(np.asarray(obs), obs_ref)
        ram = reference.unwrapped.ale.getRAM()
        np.testing.assert_array_equal(np.asarray(env.env.ram(state)), ram)
    assert len(seen) > 1
    # reset draws among all the starts
    drawn = {int(env.reset(jax.random.key(k), params)[1].env_state
                 .episode_frame) for k in range(40)}
    assert len(drawn) > NOOP_MAX // 2


def test_preset_equals_ale_py_atari_vector_env_with_life_loss_info():
    """The README's EnvPool-style env (Breakout, 4 envs, the preset through
    the Gymnasium adapter) against ale-py's AtariVectorEnv with its
    defaults (FIRE and NOOP starts, clipped rewards, a stack of 4), both
    with `life_loss_info`: a lost life is terminal but play goes on, so
    the runs stay comparable across it, up to the first game over, whose
    terminal step is compared for the difference the module docstring
    describes. Each env starts where ale-py's did (the start with its
    episode frame number)."""
    num_envs = 4
    reference = ale_py.vector_env.AtariVectorEnv("breakout", num_envs,
                                                 life_loss_info=True)
    obs_ref, info_ref = reference.reset(seed=0)
    envs = jaxatari.gym.make_vec("breakout", num_envs, preprocess=True,
                                 life_loss_info=True)
    params, stack = envs._params, envs._env.env.env  # > ClipReward > stack
    index = [_ale_start_index(params, f)
             for f in info_ref["episode_frame_number"]]
    starts = jax.tree.map(lambda x: x[jnp.asarray(index)],
                          params.reset_states)
    pre = stack.env
    obs = jax.vmap(lambda s: stack._fresh(pre.observation(
        pre.env.observation(s, params))))(starts)
    envs._state = wrappers.StackedState(env_state=wrappers.PreprocessedState(
        env_state=starts, lives=starts.lives), frames=obs)
    envs._lives = np.asarray(starts.lives)
    np.testing.assert_array_equal(np.asarray(obs), obs_ref)
    rng, lost, ended, previous_ref = np.random.default_rng(3), 0, False, None
    for t in range(300):
        actions = rng.integers(envs.single_action_space.n, size=num_envs)
        obs_ref, reward_ref, term_ref, trunc_ref, info_ref = \
            reference.step(actions)
        obs, reward, term, trunc, info = envs.step(actions)
        np.testing.assert_array_equal(reward, reward_ref)
        np.testing.assert_array_equal(term, term_ref, err_msg=f"step {t}")
        np.testing.assert_array_equal(trunc, trunc_ref)
        np.testing.assert_array_equal(info["lives"], info_ref["lives"])
        lost += int((term & (info["lives"] > 0)).sum())
        over = np.asarray(envs._needs_reset)   # game over or truncated
        np.testing.assert_array_equal(obs[~over], obs_ref[~over],
                                      err_msg=f"step {t}")
        if over.any():
            # ale-py's frame loop stops at the game over, before it
            # captures a frame: its newest frame repeats the last step's.
            # Here the newest frame is the game-over screen. The older
            # frames of the stack agree. After this, each side's reset
            # draws its own random start.
            np.testing.assert_array_equal(obs_ref[over, -1],
                                          previous_ref[over, -1])
            np.testing.assert_array_equal(obs[over, :-1], obs_ref[over, :-1])
            ended = True
            break
        previous_ref = obs_ref
    assert lost > 0 and ended, "no life lost or no game over: test more steps"
    reference.close()


def test_frame_stack_pads_and_pushes():
    class Counter:
        """obs = state = the steps since reset, from 1; done at 3."""
        def reset(self, key, params):
            return jnp.full((2,), 1), jnp.int32(1)

        def step_env(self, key, state, action, params):
            state = state + 1
            return jnp.full((2,), state), state, 0, state == 3, {}

    key = jax.random.key(0)
    for padding, first in (("zero", [0, 0, 1]), ("reset", [1, 1, 1])):
        env = wrappers.FrameStack(Counter(), 3, padding)
        obs, state = env.reset(key, None)
        assert np.asarray(obs)[:, 0].tolist() == first
        obs, state, *_ = env.step(key, state, 0, None)
        assert np.asarray(obs)[:, 0].tolist() == first[1:] + [2]
        terminal, _, _, done, _ = env.step_env(key, state, 0, None)
        assert np.asarray(terminal)[:, 0].tolist() == first[2:] + [2, 3]
        obs, state, _, done, _ = env.step(key, state, 0, None)
        assert bool(done) and np.asarray(obs)[:, 0].tolist() == first


class _Keyed:
    """An env whose reset draws from its key: obs = state = [steps, drawn];
    done after 2 to 9 steps, by the drawn number."""
    def reset(self, key, params):
        drawn = jax.random.randint(key, (), 0, 1000)
        return jnp.stack([jnp.int32(0), drawn]), jnp.stack([jnp.int32(0),
                                                            drawn])

    def step_env(self, key, state, action, params):
        state = state.at[0].add(1)
        done = state[0] > 1 + state[1] % 8
        return state, state, jnp.int32(action) - 1, done, {"t": state[0]}


@pytest.mark.parametrize("variant", ["cpu", "accelerator"])
def test_vec_env_resets_as_each_env_would(variant):
    """`VecEnv.step` makes a jaxatari auto-reset for the batch apart from
    its steps (the CPU's lowering: the done envs alone, a chunk at a
    time); the bits are each env's own `step`'s, including its reset
    key, on steps with no env done and with more done than a chunk."""
    env = wrappers.VecEnv(wrappers.ClipReward(_Keyed()), 8)
    assert env.reset_chunk == 1
    each = jax.jit(lambda key, *args: jax.vmap(
        env.env.step, in_axes=(0, 0, 0, None))(jax.random.split(key, 8),
                                               *args))
    _, state = env.reset(jax.random.key(0), None)
    counts = set()
    with lowering.forced(variant):
        step = jax.jit(env.step)
        for t in range(16):
            actions = jnp.asarray(np.random.default_rng(t).integers(
                0, 2, 8), jnp.int32)
            got = step(jax.random.key(t), state, actions, None)
            want = each(jax.random.key(t), state, actions, None)
            for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
                np.testing.assert_array_equal(a, b, err_msg=f"step {t}")
            counts.add(int(got[3].sum()))
            state = got[1]
    assert 0 in counts and max(counts) > 1, counts


def test_vec_env_steps_an_env_with_its_own_step_as_it_is():
    class OwnStep(_Keyed):
        def step(self, key, state, action, params):
            return state, state, jnp.int32(7), jnp.asarray(True), {}

    env = wrappers.VecEnv(OwnStep(), 3)
    _, state = env.reset(jax.random.key(0), None)
    _, after, reward, done, _ = env.step(jax.random.key(1), state,
                                         jnp.zeros(3, jnp.int32), None)
    np.testing.assert_array_equal(after, state)
    assert reward.tolist() == [7, 7, 7] and bool(done.all())


def test_clip_reward_keeps_the_unclipped_one():
    class Rewarding:
        def reset(self, key, params):
            return jnp.int32(0), jnp.int32(0)

        def step_env(self, key, state, action, params):
            return state, state, jnp.int32(action), jnp.asarray(False), {}

    env = wrappers.ClipReward(Rewarding())
    for reward, clipped in ((7, 1), (-3, -1), (0, 0), (1, 1)):
        _, _, r, _, info = env.step(jax.random.key(0), jnp.int32(0), reward,
                                    None)
        assert int(r) == clipped and int(info["unclipped_reward"]) == reward


def test_fire_reset_refuses_sticky_actions():
    env = wrappers.AtariPreprocessing(environment.AtariEnv("breakout"))
    with pytest.raises(ValueError, match="repeat_action_probability"):
        env.make_params(fire_reset=True, repeat_action_probability=0.25)


@pytest.mark.parametrize("settings, message", [
    ({"frameskip": 0}, "frameskip must be an integer >= 1 .* got 0"),
    ({"frameskip": 3.5}, "frameskip must be an integer >= 1 .* got 3.5"),
    ({"repeat_action_probability": 1.5},
     r"repeat_action_probability must be a number in \[0, 1\] .* got 1.5"),
    ({"repeat_action_probability": -1},
     r"repeat_action_probability must be a number in \[0, 1\] .* got -1")])
def test_bad_settings_raise_before_booting(monkeypatch, settings, message):
    """make_atari and AtariPreprocessing.make_params refuse them as
    jaxatari.make does, before any boot."""
    def boot(self, *args, **kwargs):
        raise AssertionError("the game was booted before the error")
    monkeypatch.setattr(environment.AtariEnv, "boot", boot)
    with pytest.raises(ValueError, match=message):
        wrappers.make_atari("breakout", 2, **settings)
    env = wrappers.AtariPreprocessing(environment.AtariEnv("breakout"))
    with pytest.raises(ValueError, match=message):
        env.make_params(fire_reset=True, **settings)


@pytest.mark.parametrize("settings, message", [
    ({"num_envs": 0}, "num_envs must be an integer >= 1 .* got 0"),
    ({"num_envs": 2.0}, "num_envs must be an integer >= 1 .* got 2.0"),
    ({"stack_num": 0}, "stack_num must be an integer >= 1 .* 1 for none"),
    ({"screen_size": -84}, "screen_size must be an integer >= 1"),
    ({"noop_max": -1}, "noop_max must be an integer >= 0 .* 0 for none"),
    ({"max_num_frames_per_episode": -5},
     r"max_num_frames_per_episode must be an integer >= 0 .* 0 for no "
     r"limit\), got -5"),
    ({"max_num_frames_per_episode": True},
     "max_num_frames_per_episode must be an integer")])
def test_make_atari_refuses_bad_sizes_before_booting(monkeypatch, settings,
                                                      message):
    """Found by trying them as a new user would: num_envs 0 failed only
    after the boot, stack_num 0 silently stacked nothing and a negative
    frame limit silently turned truncation off."""
    def boot(self, *args, **kwargs):
        raise AssertionError("the game was booted before the error")
    monkeypatch.setattr(environment.AtariEnv, "boot", boot)
    settings = {"num_envs": 2, **settings}
    with pytest.raises(ValueError, match=message):
        wrappers.make_atari("breakout", **settings)


def test_make_atari_suggests_the_nearest_game():
    with pytest.raises(ValueError, match="Did you mean 'SpaceInvaders'"):
        wrappers.make_atari("SpaceInvader")


def _readme_code(heading: str) -> list[str]:
    text = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
    section = text.split(heading)[1].split("\n## ")[0]
    return re.findall(r"```\n(.*?)```", section, re.S)


def test_readme_preprocessing_example_runs():
    """Here rather than in test_readme.py: its program is the one the
    Gymnasium comparison compiled (same game and settings)."""
    (single,) = _readme_code("## Preprocessing")
    scope = {}
    exec(compile(single, "README.md", "exec"), scope)
    assert scope["obs"].shape == (84, 84)
    assert str(scope["obs"].dtype) == "uint8"


def test_readme_like_envpool_example_runs():
    """The README's "like EnvPool" snippet: the program of the
    AtariVectorEnv comparison above."""
    like_envpool = _readme_code("## Use it like")[1]
    scope = {}
    exec(compile(like_envpool, "README.md", "exec"), scope)
    assert scope["obs"].shape == (4, 4, 84, 84)
    assert scope["reward"].shape == (4,) and scope["terminated"].shape == (4,)
