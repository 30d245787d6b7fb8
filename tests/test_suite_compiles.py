"""`benchmarks/suite_compiles.py`: JAX's tracing and compile seconds per
test and per file. A pytest run of a two-test file with the plugin, in a
subprocess, then the report's sums against that run's own counts."""
from __future__ import annotations

import collections
import json
import os
import pathlib
import subprocess
import sys

import pytest

from benchmarks import suite_compiles

ROOT = pathlib.Path(__file__).resolve().parent.parent

TESTS = '''
import jax
import numpy as np


def test_compiles_two_programs():   # numpy inputs: no eager op compiles
    jax.jit(lambda x: x + 1)(np.arange(3))
    jax.jit(lambda x: x * 2)(np.arange(4))


def test_compiles_nothing():
    assert 1 + 1 == 2
'''


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> pathlib.Path:
    folder = tmp_path_factory.mktemp("suite")
    (folder / "pytest.ini").write_text("[pytest]\n")
    (folder / "test_tiny.py").write_text(TESTS)
    env = {**os.environ, suite_compiles.REPORT_DIR: str(folder / "report"),
           "PYTHONPATH": str(ROOT), "JAX_ENABLE_COMPILATION_CACHE": "false"}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0",
                    "-p", "no:cacheprovider", "-p", "benchmarks.suite_compiles",
                    "-c", str(folder / "pytest.ini"), str(folder)],
                   cwd=folder, env=env, check=True, capture_output=True)
    return folder / "report"


def test_each_test_gets_its_own_programs(report):
    (written,) = report.glob("compiles_*.json")
    per_test = json.loads(written.read_text())
    two = next(v for k, v in per_test.items()
               if k.endswith("test_compiles_two_programs"))
    assert two["compile_count"] == 2 and two["compile_s"] > 0
    assert two["trace_count"] >= 2
    assert not any(k.endswith("test_compiles_nothing") for k in per_test)


def test_the_report_sums_a_file(report, capsys):
    per_test = suite_compiles.load(report)
    (row,) = [r for r in suite_compiles.per_file(per_test)
              if r["file"].endswith("test_tiny.py")]
    tests = [v for k, v in per_test.items() if "test_tiny.py" in k]
    assert row["programs_compiled"] == sum(v.get("compile_count", 0)
                                           for v in tests) == 2
    assert row["jax_s"] == pytest.approx(
        row["trace_s"] + row["lower_s"] + row["compile_s"], abs=0.02)
    suite_compiles.main(["--dir", str(report), "--top", "5"])
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[-1]["file"] == "(all)"
    assert lines[-1]["programs_compiled"] >= 2


def test_the_report_says_what_to_run_when_there_is_nothing(tmp_path):
    with pytest.raises(SystemExit, match="-p benchmarks.suite_compiles"):
        suite_compiles.load(tmp_path)
    with pytest.raises(SystemExit, match="no programs_"):
        suite_compiles.main(["--dir", str(tmp_path), "--programs", "5"])


def test_programs_are_summed_by_name(tmp_path, capsys):
    """`--programs`: compiles of a second or more, by function name."""
    kept = [{"test": "tests/a.py::t", "seconds": 2.0, "name": "jit(step)"},
            {"test": "tests/b.py::u", "seconds": 3.5, "name": "jit(step)"},
            {"test": "tests/a.py::v", "seconds": 4.0, "name": "jit(boot)"}]
    (tmp_path / "programs_gw0.json").write_text(json.dumps(kept[:2]))
    (tmp_path / "programs_gw1.json").write_text(json.dumps(kept[2:]))
    suite_compiles.main(["--dir", str(tmp_path), "--programs", "5"])
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert rows == [
        {"name": "jit(step)", "compiles": 2, "seconds": 5.5, "files": 2},
        {"name": "jit(boot)", "compiles": 1, "seconds": 4.0, "files": 1}]


def test_a_long_compile_is_kept_with_its_name(monkeypatch):
    monkeypatch.setattr(suite_compiles, "_programs", [])
    monkeypatch.setattr(suite_compiles, "_seconds", collections.defaultdict(
        collections.Counter))   # the plugin's own, if it is loaded
    monkeypatch.setattr(suite_compiles, "_running", ["tests/a.py::t"])
    event = "/jax/core/compile/backend_compile_duration"
    suite_compiles._listen(event, 0.2, fun_name="jit(short)")
    suite_compiles._listen(event, 1.5, fun_name="jit(long)")
    assert suite_compiles._programs == [
        {"test": "tests/a.py::t", "seconds": 1.5, "name": "jit(long)"}]
