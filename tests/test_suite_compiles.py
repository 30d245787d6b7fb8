"""`benchmarks/suite_compiles.py`: JAX's tracing and compile seconds per
test and per file. A pytest run of a two-test file with the plugin, in a
subprocess, then the report's sums against that run's own counts."""
from __future__ import annotations

import collections
import json
import logging
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
        {"test": "tests/a.py::t", "seconds": 1.5, "name": "jit(long)",
         "key": None}]


def test_a_compile_keeps_the_cache_key_jax_logged_before_it(monkeypatch):
    monkeypatch.setattr(suite_compiles, "_programs", [])
    monkeypatch.setattr(suite_compiles, "_seconds", collections.defaultdict(
        collections.Counter))
    monkeypatch.setattr(suite_compiles, "_running", ["tests/a.py::t"])
    monkeypatch.setattr(suite_compiles, "_missed_key", [None])
    event = "/jax/core/compile/backend_compile_duration"
    handler = suite_compiles._CacheMisses()
    handler.handle(logging.LogRecord(
        "jax._src.compiler", logging.DEBUG, "compiler.py", 135,
        "PERSISTENT COMPILATION CACHE MISS for '%s' with key %r",
        ("jit_step", "jit_step-abc123"), None))
    suite_compiles._listen(event, 2.0, fun_name="jit(step)")
    suite_compiles._listen(event, 1.5, fun_name="jit(boot)")   # no miss log
    assert [p["key"] for p in suite_compiles._programs] == [
        "jit_step-abc123", None]


def test_jax_logs_the_key_of_a_cache_miss_as_the_handler_reads_it(tmp_path):
    """The handler against JAX itself: a fresh program, cache on."""
    script = f'''
import logging, jax
from benchmarks import suite_compiles
jax.config.update("jax_compilation_cache_dir", {str(tmp_path)!r})
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
log = logging.getLogger("jax._src.compiler")
log.setLevel(logging.DEBUG)
log.addHandler(suite_compiles._CacheMisses())
jax.jit(lambda x: x * 3 + 1)(1.0).block_until_ready()
print(suite_compiles._missed_key[0])
'''
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "JAX_ENABLE_COMPILATION_CACHE": "true"}
    out = subprocess.run([sys.executable, "-c", script], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    assert out[-1].startswith("jit__lambda") and len(out[-1]) > 40


def test_repeats_sum_the_compiles_after_the_first_of_one_key(
        tmp_path, capsys):
    """`--repeats`: one key compiled three times costs its last two."""
    kept = [{"test": "tests/a.py::t", "seconds": 2.0, "name": "jit(step)",
             "key": "k1"},
            {"test": "tests/b.py::u", "seconds": 3.0, "name": "jit(step)",
             "key": "k1"},
            {"test": "tests/b.py::w", "seconds": 1.5, "name": "jit(step)",
             "key": "k1"},
            {"test": "tests/a.py::v", "seconds": 4.0, "name": "jit(boot)",
             "key": "k2"},
            {"test": "tests/a.py::x", "seconds": 9.0, "name": "jit(old)"}]
    (tmp_path / "programs_gw0.json").write_text(json.dumps(kept[:2]))
    (tmp_path / "programs_gw1.json").write_text(json.dumps(kept[2:]))
    suite_compiles.main(["--dir", str(tmp_path), "--repeats", "5"])
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert rows == [{"name": "jit(step)", "compiles": 3, "repeat_s": 4.5,
                     "tests": ["tests/a.py::t", "tests/b.py::u",
                               "tests/b.py::w"]}]
