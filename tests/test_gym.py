"""The Gymnasium adapters: Gymnasium's env checker, `gymnasium.make_vec` on
a registered id, numpy in and out, and NEXT_STEP auto-reset.

The tests run Pong with one env and the same settings, so they share one
compiled program."""
import pathlib
import re

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import jaxatari.gym

FRAMES = 40  # episodes truncated after 10 agent steps


def test_env_passes_gymnasiums_checker():
    env = jaxatari.gym.JaxAtariEnv("pong", max_num_frames_per_episode=FRAMES)
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=3)
    assert obs.shape == (210, 160, 3) and obs.dtype == np.uint8
    assert env.render().shape == (210, 160, 3)


def test_make_vec_finds_the_id_and_autoresets_next_step():
    assert jaxatari.gym.env_name("space_invaders") == "SpaceInvaders"
    envs = gymnasium.make_vec("jaxatari/Pong-v5", num_envs=1,
                              max_num_frames_per_episode=FRAMES)
    assert isinstance(envs, jaxatari.gym.JaxAtariVectorEnv)
    obs, _ = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)
    envs.action_space.seed(0)
    ends = []
    for t in range(12):
        obs, reward, terminated, truncated, info = envs.step(
            envs.action_space.sample())
        assert envs.observation_space.contains(obs)
        assert reward.dtype == np.float64 and terminated.dtype == bool
        ends.append(bool(truncated[0] or terminated[0]))
        if t == 9:    # truncated after FRAMES frames
            assert info["episode_frame_number"][0] == FRAMES
        if t == 10:  # the step after the end: a reset, reward 0, and an
            # info that describes the reset (v5: no NOOP starts)
            assert reward[0] == 0 and not ends[-1]
            assert info["episode_frame_number"][0] == 0
            assert not info["applied_actions"].any()
    assert ends[9] and ends.count(True) == 1
    with pytest.raises(ValueError, match="actions must be"):
        envs.step(np.asarray([99]))
    envs.close()


def test_readme_gymnasium_example_runs():
    """Here rather than in test_readme.py: it shares this file's program."""
    text = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
    section = text.split("## Gymnasium")[1].split("\n## ")[0]
    code = re.search(r"```\n(.*?)```", section, re.S).group(1)
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert scope["obs"].shape == (1, 210, 160, 3)
    assert scope["reward"].shape == (1,)


def test_readme_like_ale_py_example_runs():
    """The README's "like ale-py" snippet: `gymnasium.make` of a
    registered id, the checker's program (params are data)."""
    text = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
    section = text.split("## Use it like")[1].split("\n## ")[0]
    code = re.findall(r"```\n(.*?)```", section, re.S)[0]
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert scope["obs"].shape == (210, 160, 3)
    assert isinstance(scope["reward"], float)
