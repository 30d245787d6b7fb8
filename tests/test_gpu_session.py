"""`benchmarks/gpu_session.py`: the plan a lent GPU runs. Its stages are
measurements (run at toy sizes by hand, `run --tiny`); here, that the
carried wheels cover what the device image lacks, and that the runner
gives each stage its time and survives one that hangs."""
from __future__ import annotations

import importlib.util
import json
import pathlib
import re
import shutil
import subprocess
import sys
import time
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "gpu_session", ROOT / "benchmarks" / "gpu_session.py")
gpu_session = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_session)


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()


def test_wheels_cover_what_the_device_image_lacks():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    needed = {_name(r) for r in project["project"]["dependencies"]}
    carried = {w.lower() for w in gpu_session.WHEELS}
    missing = needed - carried - gpu_session.DEVICE_IMAGE
    assert not missing, (f"add {sorted(missing)} to gpu_session.WHEELS, or "
                         f"to DEVICE_IMAGE if the device image has them")


def test_runner_ends_a_hung_stage_and_runs_the_next(tmp_path):
    hung, next_ = "gathers", "main"
    def command(stage, seconds):
        code = "import time; time.sleep(600)" if stage == hung \
            else "print('measured')"
        return [sys.executable, "-c", code]
    shares = gpu_session.SHARES
    given = 18 * shares[hung] / (shares[hung] + shares[next_])
    outcomes = gpu_session.run_stages([hung, next_], 0.3, tmp_path,
                                      command, {})
    assert "timed_out_after_s" in outcomes[0]
    assert outcomes[0]["seconds"] < given + 3
    assert outcomes[1]["exit_code"] == 0
    rows = [json.loads(line) for line in
            (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [r["stage"] for r in rows] == [hung, next_]
    assert "measured" in (tmp_path / "log.txt").read_text()


def test_a_stage_without_time_is_skipped(tmp_path):
    outcomes = gpu_session.run_stages(["smoke"], 0.01, tmp_path,
                                      lambda s, t: ["false"], {})
    assert outcomes == [{"stage": "smoke", "skipped": "no time left"}]
    assert json.loads((tmp_path / "results.jsonl").read_text()) == \
        outcomes[0]


def test_a_timed_out_stage_loses_its_children_too(tmp_path):
    marker = tmp_path / "child_alive"
    child = (f"import time, pathlib; time.sleep(8); "
             f"pathlib.Path({str(marker)!r}).write_text('yes')")
    parent = (f"import subprocess, sys, time; subprocess.Popen([sys."
              f"executable, '-c', {child!r}]); time.sleep(600)")
    outcomes = gpu_session.run_stages(
        ["smoke"], 0.1, tmp_path,
        lambda s, t: [sys.executable, "-c", parent], {})
    assert "timed_out_after_s" in outcomes[0]
    time.sleep(6)
    assert not marker.exists()


def test_fastest_shape_is_taken_at_the_nearest_batch_measured(tmp_path):
    """As on the second H200 loan: `packed` won at 4K, `loop` at 64K."""
    path = tmp_path / "results.jsonl"
    rows = [(4096, "loop", 2616.0), (4096, "packed", 5314.1),
            (65536, "packed", 12562.8), (65536, "loop", 16104.5),
            (262144, "packed", 1.0)]   # one shape only: not a comparison
    path.write_text("".join(json.dumps(
        {"stage": "frames", "variant": "accelerator", "render": False,
         "batch": b, "loop_shape": shape, "frames_per_s": fps}) + "\n"
        for b, shape, fps in rows))
    fastest = lambda batch: gpu_session._fastest_shape(path, batch)
    assert [fastest(b) for b in (1024, 4096, 8192, 32768, 262144)] == [
        "packed", "packed", "packed", "loop", "loop"]
    from jaxatari import lowering
    assert gpu_session._fastest_shape(tmp_path / "none.jsonl", 4096) == \
        lowering.DEFAULT_LOOP_SHAPE


def test_a_flag_that_xla_refuses_is_left_out(tmp_path):
    """An unknown XLA flag aborts every process, so the runner adds its
    flag only after a probe process accepted it."""
    import os
    env = {**os.environ, "XLA_FLAGS": ""}
    assert gpu_session._with_flag(env, "--xla_no_such_flag_zz=true",
                                  tmp_path) == env
    kept = gpu_session._with_flag(env, gpu_session.FUSION_AUTOTUNER_OFF,
                                  tmp_path)
    assert kept["XLA_FLAGS"] == gpu_session.FUSION_AUTOTUNER_OFF
    rows = [json.loads(line) for line in
            (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [row["accepted"] for row in rows] == [False, True]


def test_a_pong_piece_brought_back_becomes_the_next_ones_start(
        tmp_path, monkeypatch):
    """`keep-pong`: the files a loan's `pong` stage brought back are the
    next loan's `--init-from` agent, and the piece is logged; a piece
    missing a file is refused before anything is replaced."""
    monkeypatch.setattr(gpu_session, "PONG_PIECE", tmp_path / "piece")
    monkeypatch.setattr(gpu_session, "PONG_LOG", tmp_path / "pieces.jsonl")
    back = tmp_path / "files" / "pong"
    back.mkdir(parents=True)
    with pytest.raises(ValueError, match="lacks.*record.json"):
        gpu_session.keep_pong(tmp_path / "files")
    assert not (tmp_path / "piece").exists()
    (back / "agent").mkdir()
    meta = {"seed": 0, "frames": 400, "total_frames": 400}
    (back / "agent" / "learned.json").write_text(json.dumps(meta))
    (back / "agent" / "params.npz").write_bytes(b"params")
    (back / "agent" / "opt_state.npz").write_bytes(b"opt")
    (back / "record.json").write_text(json.dumps({"devices": ["gpu:0"]}))
    (back / "metrics.jsonl").write_text('{"update": 1}\n{"update": 2}\n')
    assert gpu_session.keep_pong(tmp_path / "files") == meta
    for name in gpu_session.PONG_FILES:
        assert ((tmp_path / "piece" / name).read_bytes()
                == (back / name).read_bytes())
    line = json.loads((tmp_path / "pieces.jsonl").read_text())
    assert line["agent"] == meta and line["devices"] == ["gpu:0"]
    assert [m["update"] for m in line["metrics"]] == [1, 2]


def test_the_pong_piece_waits_where_a_fresh_clone_has_it():
    """The next loan is another session's, on a fresh clone: the piece
    must wait in a folder of the repository that git does not ignore
    (it once waited in the ignored `.device/`, and would have been lost)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    piece = gpu_session.PONG_PIECE
    assert piece.is_relative_to(gpu_session.ROOT)
    for name in gpu_session.PONG_FILES:
        ignored = subprocess.run(
            ["git", "check-ignore", "-q", str(piece / name)],
            cwd=gpu_session.ROOT)
        assert ignored.returncode == 1, f"git ignores {piece / name}"
