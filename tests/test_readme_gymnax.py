"""The README's "like gymnax" snippet: a jitted `lax.scan` rollout of the
`make_atari` preset (a program of its own, so a file of its own: the
workers run files in parallel)."""
import pathlib
import re

import numpy as np

from jaxatari import wrappers


def test_readme_like_gymnax_example_runs():
    text = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
    section = text.split("## Use it like")[1].split("\n## ")[0]
    code = re.findall(r"```\n(.*?)```", section, re.S)[2]
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)
    rewards = np.asarray(scope["rewards"])
    assert rewards.shape == (16, 8) and rewards.dtype == np.int32
    assert set(np.unique(rewards)) <= {-1.0, 0.0, 1.0}   # clipped
    frame = np.asarray(wrappers.inner_state(scope["state"]).episode_frame)
    assert (frame >= 16 * 4).all()        # 16 steps of 4 frames, no reset
