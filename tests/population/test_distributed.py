"""`jaxatari sweep` across processes (`jax.distributed`): two processes on
localhost, each with one CPU device and gloo collectives, started by the
test, against the same sweep in one process."""
from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys

import numpy as np
import pytest

from jaxatari.population import sweep
from tests.population.test_sweep import PBT, _final_state

TIMEOUT = 300
"""Seconds a sweep process may run before the test kills it."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def _env(devices: int) -> dict[str, str]:
    return {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS":
            f"--xla_force_host_platform_device_count={devices}"}


def _command(out, *extra) -> list[str]:
    return [sys.executable, "-m", "jaxatari.population.sweep", *PBT,
            "--method", "pbt", "--out", str(out), *extra]


def _single(out, devices: int) -> None:
    subprocess.run(_command(out), env=_env(devices), check=True,
                   capture_output=True, timeout=TIMEOUT)


def _two_processes(out, *extra) -> list[tuple[int, str]]:
    """Runs the sweep as 2 processes of 1 device; returns each one's exit
    status and stderr (both killed, and the test failed, past
    `TIMEOUT`)."""
    coordinator = f"localhost:{_free_port()}"
    logs = [out.parent / f"{out.name}.process{i}.log" for i in (0, 1)]
    processes = []
    for i, log in enumerate(logs):
        with log.open("w") as file:
            processes.append(subprocess.Popen(
                _command(out, *extra, "--coordinator", coordinator,
                         "--num-processes", "2", "--process-id", str(i)),
                env=_env(1), stdout=file, stderr=subprocess.STDOUT))
    try:
        for process in processes:
            process.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        for process in processes:
            process.kill()
            process.wait()
        pytest.fail(f"the 2-process sweep ran past {TIMEOUT} s:\n"
                    + "\n".join(log.read_text()[-2000:] for log in logs))
    return [(p.returncode, log.read_text()) for p, log in
            zip(processes, logs)]


def _listing(out) -> list[str]:
    """The directory's files and folders, down to the checkpoints'
    steps (their insides are orbax's, per process)."""
    names = {path.name for path in out.iterdir()}
    steps = {f"checkpoints/{path.name}" for path in
             (out / "checkpoints").iterdir()}
    return sorted(names | steps)


@pytest.mark.slow
def test_two_processes_agree_with_one(tmp_path):
    """8 PBT members split over 2 processes (4 each, gloo collectives for
    the exploit step's gathers) write the same directory as one process:
    the same members.jsonl, byte for byte, as one process with 1 device
    or with 2, and a final state (saved by both processes, loaded in
    this one) bit-identical to both."""
    two, one, pair = (tmp_path / name for name in ("two", "one", "pair"))
    results = _two_processes(two)
    for status, log in results:
        assert status == 0, log[-3000:]
    _single(one, devices=1)
    _single(pair, devices=2)
    assert _listing(two) == _listing(one)
    record = json.loads((two / "record.json").read_text())
    assert record["status"] == "finished"
    assert record["mesh"]["processes"] == 2
    assert len(record["mesh"]["devices"]) == 2
    single = json.loads((one / "record.json").read_text())
    assert record["summary"] == single["summary"]
    lines = (two / "members.jsonl").read_text()
    assert lines == (one / "members.jsonl").read_text()
    assert lines == (pair / "members.jsonl").read_text()
    for other in (pair, one):
        for a, b in zip(_final_state(two), _final_state(other), strict=True):
            np.testing.assert_array_equal(a, b)


def test_across_processes_the_members_must_split_evenly(tmp_path):
    out = tmp_path / "odd"
    results = _two_processes(out, "--members", "5")
    for status, log in results:
        assert status != 0
        assert "--members 5 must be a multiple of the 2 devices" in log
        assert "choose --members 6" in log


@pytest.mark.parametrize("coordinator, count, index, message", [
    ("localhost:1234", 2, None, "go together"),
    (None, 2, 0, "go together"),
    ("localhost", 2, 0, "HOST:PORT"),
    ("localhost:1234", 2, 2, "--process-id must be in 0..1"),
])
def test_bad_process_options_are_clear_errors(coordinator, count, index,
                                              message):
    with pytest.raises(ValueError, match=message):
        sweep.init_distributed(coordinator, count, index)


def test_no_process_options_start_nothing():
    sweep.init_distributed(None, None, None)
    import jax
    assert jax.process_count() == 1


def test_the_readmes_sweep_commands_parse():
    readme = (pathlib.Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("## Population sweeps")[1].split("\n## ")[0]
    commands = [line.rstrip(" &").split() for line in section.splitlines()
                if line.startswith("jaxatari sweep")]
    assert any("--coordinator" in command for command in commands)
    for command in commands:
        sweep.parser().parse_args(command[2:])
