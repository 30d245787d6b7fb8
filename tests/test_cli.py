"""The `jaxatari` command line: `list`, `play` writing a GIF and an MP4
with the expected frames, the policy loader, and clear errors."""
import json

import cv2
import jax
import numpy as np
import pytest
from PIL import Image

import jaxatari
from jaxatari import cli, games

STEPS = 30


def test_list_shows_every_game_with_its_parity(capsys):
    assert cli.main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["game"] for row in rows] == games.list_games()
    pong = next(row for row in rows if row["game"] == "pong")
    assert pong["cart"] == "2K" and pong["atari57"]
    assert pong["parity"].startswith("identical")
    assert sum(row["atari57"] for row in rows) == 57


def _played(capsys, path) -> dict:
    assert cli.main(["play", "pong", "--steps", str(STEPS), "--out",
                     str(path), "--seed", "1"]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_play_writes_a_gif_and_an_mp4_of_every_step(tmp_path, capsys):
    summary = _played(capsys, tmp_path / "pong.gif")
    assert summary["frames"] == STEPS + 1 and summary["steps"] == STEPS
    image = Image.open(tmp_path / "pong.gif")
    durations = []
    for k in range(image.n_frames):
        image.seek(k)
        durations.append(image.info["duration"])
        if k == 0:
            first = np.asarray(image.convert("RGB"))
    # Runs of identical frames are stored once, shown as long: the GIF
    # plays STEPS + 1 frames of 70 ms (15 fps rounded to 10 ms).
    assert image.n_frames <= STEPS + 1 and sum(durations) == 70 * (STEPS + 1)
    env, params = jaxatari.make("pong")
    start = jax.tree.map(lambda x: x[0], params.reset_states)
    np.testing.assert_array_equal(first, np.asarray(env.screen_rgb(start)))
    _played(capsys, tmp_path / "pong.mp4")
    capture, count = cv2.VideoCapture(str(tmp_path / "pong.mp4")), 0
    while capture.read()[0]:
        count += 1
    assert count == STEPS + 1


def test_policy_file_is_loaded(tmp_path):
    path = tmp_path / "policy.py"
    path.write_text("import jax.numpy as jnp\n\n"
                    "def policy(key, obs):\n    return jnp.int32(3)\n")
    policy = cli.load_policy(str(path), 6)
    assert int(policy(jax.random.key(0), None)) == 3
    draws = cli.load_policy("random", 6, (64,))(jax.random.key(0), None)
    assert draws.shape == (64,) and set(np.unique(draws)) <= set(range(6))
    (tmp_path / "empty.py").write_text("x = 1\n")
    with pytest.raises(SystemExit, match="defines no policy"):
        cli.load_policy(str(tmp_path / "empty.py"), 6)
    with pytest.raises(SystemExit, match="neither 'random', a file.*"
                       "nor a .jaxatari train. directory"):
        cli.load_policy(str(tmp_path / "missing.py"), 6)


@pytest.mark.parametrize("argv, match", [
    (["play", "pongg", "--steps", "2"], "unknown"),
    (["play", "pong", "--out", "x.png"], ".gif or .mp4"),
    (["play", "pong", "--steps", "0"], "at least 1"),
])
def test_bad_arguments_are_clear_errors(argv, match):
    with pytest.raises(SystemExit, match=match):
        cli.main(argv)
