"""`jaxatari train --init-from`: a new run starting from the agent another
run trained (its parameters and optimiser state, not its envs), as a
long run is trained in pieces across machines. On gymnax's CartPole."""
from __future__ import annotations

import json
import shutil
import sys

import jax
import numpy as np
import pytest

from jaxatari.agents import checkpoints, core, run
from tests import processes

CARTPOLE = ["gymnax:CartPole-v1", "--algo", "a2c", "--num-envs", "8",
            "--no-progress"]


def _train(out, frames, *extra):
    return run.main([*CARTPOLE, "--frames", str(frames), "--out", str(out),
                     *extra])


def _leaves(tree):
    return [np.asarray(x) for x in jax.tree.leaves(tree)]


def _assert_same(a, b):
    for x, y in zip(_leaves(a), _leaves(b), strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    """A finished run of 50 A2C updates (2,000 frames)."""
    out = tmp_path_factory.mktemp("init") / "first"
    _train(out, 2000)
    return out


def test_a_run_from_another_continues_its_agent_with_fresh_envs(
        first, tmp_path):
    """The second run is its own fresh start (its seed's envs and key)
    with the first run's parameters and optimiser state, exactly: its
    final state equals that start trained in this process."""
    second = tmp_path / "second"
    _train(second, 400, "--seed", "7", "--init-from", str(first),
           "--checkpoint-every", "10")
    agent, trained, record = run.load_trained(second)
    _, before, _ = run.load_trained(first)
    fresh = jax.jit(agent.init)(jax.random.key(7),
                                agent.config.hparams())
    start = checkpoints.with_learned(fresh,
                                     checkpoints.learned_arrays(before))
    _assert_same(start.params, before.params)
    _assert_same(start.env_state, fresh.env_state)
    expected, _ = jax.jit(lambda s: core.scan_updates(agent, s, 10))(start)
    _assert_same(trained.replace(key=jax.random.key_data(trained.key)),
                 expected.replace(key=jax.random.key_data(expected.key)))
    assert record["init_from"] == str(first)
    assert record["init_from_agent"]["frames"] == 2000
    assert record["init_from_agent"]["update"] == 50
    assert record["final"]["frames"] == 400
    assert record["final"]["total_frames"] == 2400
    saved = json.loads((second / "agent" / "learned.json").read_text())
    assert saved["total_frames"] == 2400 and saved["update"] == 10


def test_a_run_without_its_agent_gives_its_latest_checkpoint(first,
                                                             tmp_path):
    """A run without `agent/` (killed between its checkpoint's two saves,
    or from before `agent/` was written): `--init-from` reads its latest
    checkpoint, and `export_learned` writes the same agent."""
    killed = tmp_path / "killed"
    shutil.copytree(first, killed)
    shutil.rmtree(killed / "agent")
    agent, latest, _ = run.load_trained(killed)
    fresh = jax.jit(agent.init)(jax.random.key(3), agent.config.hparams())
    state, meta = run.learned_from(killed, fresh)
    _assert_same(state.params, latest.params)
    _assert_same(state.opt_state, latest.opt_state)
    assert meta["update"] == 50 and meta["total_frames"] == 2000
    exported = run.export_learned(killed)
    again, again_meta = run.learned_from(exported, fresh)
    _assert_same(again.params, latest.params)
    assert again_meta == meta


@pytest.mark.parametrize("argv, message", [
    (["gymnax:CartPole-v1", "--algo", "ppo", "--set", "num_steps=8",
      "--set", "num_minibatches=2"], r"opt_state.*structure"),
    (["gymnax:Acrobot-v1", "--algo", "a2c"],
     r"params\['params'\].*saved float32\[4, 64\], this run's "
     r"float32\[6, 64\]"),
    (["gymnax:CartPole-v1", "--algo", "ga3c", "--set", "policy_lag=1"],
     r"extra: the saved agent has none"),
])
def test_an_agent_that_does_not_fit_is_refused_before_training(
        first, tmp_path, argv, message):
    with pytest.raises(SystemExit, match=message):
        run.main([*argv, "--num-envs", "8", "--frames", "400",
                  "--init-from", str(first), "--out", str(tmp_path / "r"),
                  "--no-progress"])
    assert not (tmp_path / "r").exists()


def test_init_from_nothing_trained_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="neither a jaxatari train "
                       "directory nor a saved agent"):
        _train(tmp_path / "r", 400, "--init-from", str(tmp_path))
    assert not (tmp_path / "r").exists()


def test_a_killed_run_leaves_the_agent_of_a_checkpoint(tmp_path):
    """`agent/` is written after each checkpoint, so a run killed (SIGKILL)
    leaves one: that of its latest checkpoint, or of the one before if the
    kill fell between the two saves."""
    killed = tmp_path / "killed"
    processes.kill_at_checkpoint(
        [sys.executable, "-m", "jaxatari.agents.run", *CARTPOLE,
         "--frames", "40000", "--checkpoint-every", "20", "--out",
         str(killed)], killed / "agent" / "learned.json")
    meta = json.loads((killed / "agent" / "learned.json").read_text())
    saved = checkpoints.Checkpoints(killed / "checkpoints")
    latest = saved.latest()
    assert meta["update"] in (latest, latest - 20)
    agent, _, _ = run.load_trained(killed)
    fresh = jax.jit(agent.init)(jax.random.key(0), agent.config.hparams())
    at_update, _ = saved.restore(meta["update"], fresh)
    saved.close()
    state, _ = run.learned_from(killed, fresh)
    _assert_same(state.params, at_update.params)
    _assert_same(state.opt_state, at_update.opt_state)
