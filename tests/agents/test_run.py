"""`jaxatari train` (jaxatari.agents.run): what a run writes, resume after
a kill, refusals, and a NaN stopping the run with its last good
checkpoint. On gymnax's CartPole, small enough for a CPU."""
from __future__ import annotations

import json
import subprocess
import sys

import jax
import numpy as np
import pytest

from jaxatari.agents import run
from tests import processes

CARTPOLE = ["gymnax:CartPole-v1", "--algo", "a2c", "--num-envs", "8",
            "--frames", "8000", "--checkpoint-every", "50"]
"""200 A2C updates of 8 envs x 5 steps, a checkpoint every 50."""


def _train(out, *extra):
    return run.main([*CARTPOLE, "--out", str(out), *extra])


def _leaves(state):
    state = state.replace(key=jax.random.key_data(state.key))
    return [np.asarray(x) for x in jax.tree.leaves(state)]


def test_train_writes_its_record_metrics_curve_and_checkpoints(tmp_path,
                                                               capsys):
    assert _train(tmp_path / "run") == 0
    out = tmp_path / "run"
    record = json.loads((out / "record.json").read_text())
    assert record["status"] == "finished"
    assert record["env_id"] == "gymnax:CartPole-v1"
    assert record["algo"] == "a2c" and record["seed"] == 0
    assert record["config"]["algo_config"] == "A2CConfig"
    assert record["config"]["num_envs"] == 8
    assert record["config"]["total_steps"] == 8000
    assert {"jax", "flax", "optax", "gymnax"} <= set(record["packages"])
    assert record["devices"] and record["backend"] == "cpu"
    assert "git_sha" in record and record["seconds"] > 0
    lines = [json.loads(x) for x in
             (out / "metrics.jsonl").read_text().splitlines()]
    assert [x["update"] for x in lines] == list(range(1, 201))
    assert [x["frames"] for x in lines] == [40 * u for u in range(1, 201)]
    assert record["final"]["frames"] == 8000
    assert record["final"]["last"] == lines[-1]
    assert (out / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    events = list((out / "tensorboard").glob("events.out.tfevents.*"))
    assert events and b"episode_return" in events[0].read_bytes()
    assert sorted(int(p.name) for p in (out / "checkpoints").iterdir()
                  if p.name.isdigit()) == [100, 150, 200]
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["status"] == "finished" and summary["updates"] == 200


def test_a_run_again_with_the_same_seed_is_the_same_run(tmp_path):
    _train(tmp_path / "a", "--no-progress")
    _train(tmp_path / "b", "--no-progress")
    assert ((tmp_path / "a" / "metrics.jsonl").read_text()
            == (tmp_path / "b" / "metrics.jsonl").read_text())


@pytest.mark.slow
def test_resume_after_a_kill_is_bit_identical(tmp_path):
    """A run killed (SIGKILL) after its first checkpoint and resumed in a
    new process ends with the same state, bit for bit, and the same
    metrics, as the run that was not interrupted."""
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    command = [sys.executable, "-m", "jaxatari.agents.run", *CARTPOLE,
               "--no-progress", "--checkpoint-every", "20",
               "--frames", "40000"]
    subprocess.run([*command, "--out", str(whole)], check=True,
                   capture_output=True, timeout=600)
    processes.kill_at_checkpoint([*command, "--out", str(killed)],
                                 killed / "checkpoints" / "20")
    record = json.loads((killed / "record.json").read_text())
    assert record["status"] == "running"          # it was cut short
    subprocess.run([*command, "--out", str(killed), "--resume"],
                   check=True, capture_output=True, timeout=600)
    _, state_whole, _ = run.load_trained(whole)
    _, state_resumed, record = run.load_trained(killed)
    assert record["status"] == "finished" and record["resumed"]
    for a, b in zip(_leaves(state_whole), _leaves(state_resumed),
                    strict=True):
        np.testing.assert_array_equal(a, b)
    assert ((whole / "metrics.jsonl").read_text()
            == (killed / "metrics.jsonl").read_text())


def test_resume_refuses_another_config_and_a_new_run_an_old_dir(tmp_path):
    out = tmp_path / "run"
    _train(out, "--no-progress", "--frames", "400")
    with pytest.raises(SystemExit, match="config.learning_rate"):
        _train(out, "--no-progress", "--frames", "400", "--resume",
               "--set", "learning_rate=0.01")
    with pytest.raises(SystemExit, match="already holds a run.*--resume"):
        _train(out, "--no-progress", "--frames", "400")
    with pytest.raises(SystemExit, match="no record.json"):
        _train(tmp_path / "empty", "--resume", "--no-progress")


def test_nan_stops_the_run_at_its_update_and_keeps_the_last_checkpoint(
        tmp_path):
    out = tmp_path / "run"
    with pytest.raises(SystemExit, match=r"NaN or infinite at update \d+"):
        _train(out, "--no-progress", "--checkpoint-every", "1",
               "--set", "learning_rate=1e30", "--set", "max_grad_norm=0")
    record = json.loads((out / "record.json").read_text())
    assert record["status"] == "diverged"
    bad = record["diverged_at_update"]
    assert record["last_good_checkpoint"] == (bad - 1 if bad > 1 else None)
    lines = [json.loads(x) for x in
             (out / "metrics.jsonl").read_text().splitlines()]
    assert [x["update"] for x in lines] == list(range(1, bad))
    assert all(x["finite"] for x in lines)


@pytest.mark.parametrize("argv, message", [
    (["gymnax:CartPole-v1", "--set", "gamma=1.5"], "config.gamma"),
    (["gymnax:CartPole-v1", "--set", "num_envs=0"], "config.num_envs"),
    (["gymnax:CartPole-v1", "--set", "warp=9"], "unknown ppo config fields"),
    (["gymnax:CartPole-v1", "--frames", "10"], "config.total_steps"),
    (["gymnax:CartPol-v1"], "Did you mean gymnax:CartPole-v1"),
    (["breakot"], "gymnax:<id>"),
])
def test_bad_input_is_a_clear_error_before_training(tmp_path, argv,
                                                    message):
    with pytest.raises(SystemExit, match=message):
        run.main([*argv, "--out", str(tmp_path / "run"), "--no-progress"])
    assert not (tmp_path / "run").exists()


def test_an_unknown_algorithm_lists_the_choices(capsys):
    with pytest.raises(SystemExit):
        run.main(["gymnax:CartPole-v1", "--algo", "dqn"])
    assert "choose from 'a2c', 'ga3c', 'ppo'" in capsys.readouterr().err


def test_a_gymnax_env_with_an_action_set_trains_without_a_gif(tmp_path):
    """MinAtar envs have an `action_set` too: the run must not take them
    for Atari envs (no GIF; the record says so)."""
    out = tmp_path / "run"
    run.main(["gymnax:Breakout-MinAtar", "--num-envs", "4", "--frames",
              "1024", "--set", "num_steps=16", "--set", "num_minibatches=2",
              "--out", str(out), "--no-progress"])
    record = json.loads((out / "record.json").read_text())
    assert record["status"] == "finished" and record["gif"] is None
    assert not (out / "agent.gif").exists()


def test_the_jaxatari_command_forwards_train(tmp_path):
    from jaxatari import cli
    out = tmp_path / "run"
    assert cli.main(["train", *CARTPOLE, "--frames", "400", "--out",
                     str(out), "--no-progress"]) == 0
    assert json.loads((out / "record.json").read_text())["status"] == \
        "finished"
