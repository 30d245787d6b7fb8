"""`jaxatari sweep` (jaxatari.population.sweep): what a sweep writes, the
methods end to end, resume after a kill, 1 against 2 devices, refusals.
On gymnax's CartPole, small enough for a CPU."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import jax
import numpy as np
import pytest

from jaxatari.population import sweep
from tests import processes

PBT = ["gymnax:CartPole-v1", "--members", "8", "--num-envs", "4",
       "--frames", "160000", "--generations", "4"]
"""8 A2C members of 4 envs, 250 updates each, 4 generations."""


def _sweep(out, *argv):
    return sweep.main([*argv, "--out", str(out)])


def _lines(out):
    return [json.loads(x) for x in
            (out / "members.jsonl").read_text().splitlines()]


def _final_state(out):
    state, _ = sweep.load(out)
    return [np.asarray(jax.random.key_data(x)
                       if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)
                       else x) for x in jax.tree.leaves(state)]


@pytest.fixture(scope="module")
def pbt_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("pbt") / "sweep"
    assert _sweep(out, *PBT, "--method", "pbt") == 0
    return out


def test_a_pbt_sweep_documents_itself(pbt_sweep):
    record = json.loads((pbt_sweep / "record.json").read_text())
    assert record["status"] == "finished" and record["method"] == "pbt"
    assert record["configs"]["pbt"]["members"] == 8
    assert record["configs"]["agent"]["algo_config"] == "A2CConfig"
    assert set(record["space"]) == {"learning_rate", "ent_coef"}
    assert record["mesh"]["axis"] == "members"
    assert {"jax", "optax", "gymnax"} <= set(record["packages"])
    assert "git_sha" in record and record["seed"] == 0
    lines = _lines(pbt_sweep)
    assert len(lines) == 8 * 4
    assert sorted({x["generation"] for x in lines}) == [1, 2, 3, 4]
    for line in lines:
        assert 0 <= line["parent"] < 8
        assert line["replaced"] == (line["parent"] != line["member"])
    copies = json.loads((pbt_sweep / "lineage.json").read_text())["copies"]
    assert copies == [{"generation": x["generation"], "member": x["member"],
                       "parent": x["parent"]} for x in lines
                      if x["replaced"]]
    # one of 8 (truncation 0.2) a generation, none at the last
    assert len(copies) == 3
    assert all(x["generation"] < 4 for x in copies)
    for name in ("returns.png", "hparams.png", "lineage.png"):
        assert (pbt_sweep / name).read_bytes()[:4] == b"\x89PNG"
    events = list((pbt_sweep / "tensorboard").glob("events.*"))
    assert events and b"member_007/score" in events[0].read_bytes()
    summary = record["summary"]
    last = [x for x in lines if x["generation"] == 4]
    assert summary["best_score"] == max(x["score"] for x in last)


def test_a_copied_member_trains_with_its_parents_hparams_perturbed(
        pbt_sweep):
    lines = {(x["generation"], x["member"]): x for x in _lines(pbt_sweep)}
    for (generation, member), line in lines.items():
        if generation == 4:
            continue
        after = lines[(generation + 1, member)]["hparams"]
        assert after == line["next_hparams"]
        if not line["replaced"]:
            assert line["next_hparams"] == line["hparams"]
            continue
        parent = lines[(generation, line["parent"])]["hparams"]
        for name in ("learning_rate", "ent_coef"):
            ratio = line["next_hparams"][name] / parent[name]
            # x0.8, x1.2, or resampled from the prior (then anything)
            assert (np.isclose(ratio, 0.8, rtol=1e-5)
                    or np.isclose(ratio, 1.2, rtol=1e-5)
                    or not np.isclose(ratio, 1.0)), (name, ratio)


def test_random_search_never_changes_a_members_hparams(tmp_path):
    out = tmp_path / "random"
    _sweep(out, *PBT, "--method", "random", "--generations", "2")
    lines = _lines(out)
    assert not any(x["replaced"] for x in lines)
    first = {x["member"]: x["hparams"] for x in lines
             if x["generation"] == 1}
    assert all(x["hparams"] == first[x["member"]] for x in lines)
    assert json.loads((out / "lineage.json").read_text())["copies"] == []


def test_a_hypertrick_sweep_reports_what_eviction_saves(tmp_path):
    out = tmp_path / "hypertrick"
    _sweep(out, "gymnax:CartPole-v1", "--method", "hypertrick",
           "--members", "4", "--budget", "8", "--phases", "3",
           "--num-envs", "4", "--frames", "96000")
    record = json.loads((out / "record.json").read_text())
    summary = record["summary"]
    assert summary["budget"] == 8
    assert summary["frames_spent"] + summary["frames_saved"] == \
        summary["frames_full_training"]
    assert summary["evicted"] >= 1 and summary["finished"] >= 1
    lines = _lines(out)
    spent = sum(x["frames"] for x in lines)
    assert spent == summary["frames_spent"]


def test_an_es_sweep_logs_every_generation(tmp_path):
    out = tmp_path / "es"
    _sweep(out, "gymnax:CartPole-v1", "--method", "es", "--members", "8",
           "--num-envs", "2", "--frames", "40000",
           "--set", "rollout_steps=500")
    lines = _lines(out)
    assert [x["generation"] for x in lines] == list(range(1, 6))
    assert all(x["centre_return"] is not None for x in lines)
    record = json.loads((out / "record.json").read_text())
    assert record["summary"]["generations"] == 5


def _command(out, *extra):
    return [sys.executable, "-m", "jaxatari.population.sweep", *PBT,
            "--method", "pbt", "--out", str(out), *extra]


@pytest.mark.slow
def test_one_device_and_two_agree(tmp_path):
    """The member axis split over 2 host devices (4 members each) gives
    the same members.jsonl (scores, parents, hyperparameters, frames) and
    the same final state, bit for bit, as 1 device. (It took one fix:
    `core.apply_gradients` scales the clipped gradients by one scalar;
    `g / norm * max` compiled to `g * (1/norm)` in one program only.)"""
    for count in (1, 2):
        env = {**os.environ, "XLA_FLAGS":
               f"--xla_force_host_platform_device_count={count}"}
        subprocess.run(_command(tmp_path / str(count)), env=env,
                       check=True, capture_output=True, timeout=600)
    meshes = [json.loads((tmp_path / c / "record.json").read_text())["mesh"]
              for c in ("1", "2")]
    assert [len(m["devices"]) for m in meshes] == [1, 2]
    assert ((tmp_path / "1" / "members.jsonl").read_text()
            == (tmp_path / "2" / "members.jsonl").read_text())
    for a, b in zip(_final_state(tmp_path / "1"),
                    _final_state(tmp_path / "2"), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.slow
def test_a_killed_sweep_resumes_bit_for_bit(tmp_path):
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    subprocess.run(_command(whole), check=True, capture_output=True,
                   timeout=600)
    processes.kill_at_checkpoint(_command(killed),
                                 killed / "checkpoints" / "1")
    subprocess.run(_command(killed, "--resume"), check=True,
                   capture_output=True, timeout=600)
    assert json.loads((killed / "record.json").read_text())["resumed"]
    assert ((whole / "members.jsonl").read_text()
            == (killed / "members.jsonl").read_text())
    for a, b in zip(_final_state(whole), _final_state(killed), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("argv, message", [
    (["--members", "4"], "population too small for the truncation"),
    (["--frames", "100"], "raise --frames"),
    (["--generations", "5000"], "fewer than --generations"),
    (["--set", "gamma=2"], "gamma"),
])
def test_bad_input_is_a_clear_error_before_the_sweep(tmp_path, argv,
                                                     message):
    with pytest.raises(SystemExit, match=message):
        _sweep(tmp_path / "s", "gymnax:CartPole-v1", "--num-envs", "4",
               "--frames", "160000", *argv)
    assert not (tmp_path / "s").exists()


def test_resume_refuses_another_config(pbt_sweep):
    with pytest.raises(SystemExit, match="other settings.*seed"):
        _sweep(pbt_sweep, *PBT, "--method", "pbt", "--seed", "1",
               "--resume")
    with pytest.raises(SystemExit, match="already holds a sweep"):
        _sweep(pbt_sweep, *PBT, "--method", "pbt")
