"""The agents on jaxatari's Atari preset (`make_atari`): two updates of
PPO and GA3C on Pong, and the README's A2C snippet (one update of 16 envs
x 5 steps, the SB3 zoo's settings), run, give finite metrics and count
their agent steps and frames (4 per agent step). One module, one game and one env, so
the emulator boots once; tiny configs, since the emulator is slow on CPU.
"""
import jax
import numpy as np
import pytest

import jaxatari
from jaxatari.agents import a2c, ga3c, networks, ppo

pytestmark = pytest.mark.slow

NUM_ENVS, NUM_STEPS, UPDATES = 2, 4, 2
TOTAL = UPDATES * NUM_ENVS * NUM_STEPS
SMALL = dict(num_envs=NUM_ENVS, num_steps=NUM_STEPS, total_steps=TOTAL)

CONFIGS = {
    "ppo": (ppo, ppo.PPOConfig(num_minibatches=2, update_epochs=1, **SMALL)),
    "ga3c": (ga3c, ga3c.GA3CConfig(**SMALL)),
}


@pytest.fixture(scope="module")
def pong():
    return jaxatari.make_atari("pong", NUM_ENVS)


@pytest.mark.parametrize("algo", sorted(CONFIGS))
def test_updates_on_pong(algo, pong):
    module, config = CONFIGS[algo]
    env, env_params = pong
    agent = module.make(config, env, env_params)
    assert agent.env.obs_shape == (4, 84, 84)
    assert agent.env.obs_dtype == np.uint8
    assert agent.env.frameskip == 4
    assert isinstance(agent.network, networks.NatureCNN)
    assert agent.network.channels_first
    assert config.num_updates == UPDATES
    state, metrics = jax.jit(module.make_train(config, env, env_params))(
        jax.random.key(0))
    metrics = jax.tree.map(np.asarray, metrics)
    assert metrics["loss"].shape == (UPDATES,)
    assert metrics["finite"].all()
    for name in ("loss", "policy_loss", "value_loss", "entropy",
                 "grad_norm", "learning_rate"):
        assert np.isfinite(metrics[name]).all(), name
    for name, value in metrics.items():   # NaN only where no episode ended
        if not name.startswith("episode_"):
            assert np.isfinite(value).all(), name
    # Pong's 6 actions, a near-uniform policy at init
    assert np.all(metrics["entropy"] > 0.9 * np.log(6))
    steps = NUM_ENVS * NUM_STEPS * np.arange(1, UPDATES + 1)
    np.testing.assert_array_equal(metrics["env_steps"], steps)
    np.testing.assert_array_equal(metrics["frames"], 4 * steps)
    np.testing.assert_array_equal(metrics["update"], np.arange(1, UPDATES + 1))
    assert int(state.env_steps) == TOTAL
    assert state.obs.shape == (NUM_ENVS, 4, 84, 84)


def test_the_readmes_atari_snippet_runs_an_a2c_update():
    """The README's "On Atari" snippet (A2C's own program: one emulator
    compile for A2C, as the other two algorithms have theirs)."""
    import pathlib
    import re
    readme = (pathlib.Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("## Training agents")[1].split("\n## ")[0]
    code = re.findall(r"```\n(.*?)```", section, re.S)[2]
    scope: dict = {"jax": jax}
    exec(compile(code, "README.md", "exec"), scope)
    state, metrics = scope["state"], scope["metrics"]
    assert isinstance(scope["agent"].config, a2c.A2CConfig)
    assert bool(metrics["finite"])
    assert int(metrics["env_steps"]) == 16 * 5
    assert int(metrics["frames"]) == 4 * 16 * 5
    assert state.obs.shape == (16, 4, 84, 84)


def test_jaxatari_train_on_pong_leaves_a_gif_and_play_replays_it(tmp_path):
    """`jaxatari train pong` (a tiny run) writes agent.gif, the trained
    agent playing, and `jaxatari play pong --policy DIR` plays the same
    checkpoint; both GIFs hold the full-colour screen."""
    import json
    from PIL import Image
    from jaxatari import cli
    out = tmp_path / "run"
    assert cli.main(["train", "pong", "--algo", "a2c", "--num-envs", "2",
                     "--frames", "64", "--set", "num_steps=4",
                     "--gif-steps", "8", "--no-progress",
                     "--out", str(out)]) == 0
    record = json.loads((out / "record.json").read_text())
    assert record["status"] == "finished"
    assert record["frameskip"] == 4 and record["final"]["frames"] == 64
    with Image.open(out / "agent.gif") as gif:
        assert gif.size == (160, 210)
    played = tmp_path / "played.gif"
    assert cli.main(["play", "pong", "--policy", str(out), "--steps", "8",
                     "--out", str(played)]) == 0
    with Image.open(played) as gif:
        assert gif.size == (160, 210)
    import pytest as _pytest
    with _pytest.raises(SystemExit, match="trained on 'pong'"):
        cli.main(["play", "breakout", "--policy", str(out), "--steps", "8",
                  "--out", str(tmp_path / "x.gif")])
