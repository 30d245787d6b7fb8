"""Where the test suite spends its time in JAX: tracing, lowering to MLIR
and XLA's compiles, per test and per file.

The suite's cold start (empty compilation and boot caches) is mostly
compiling: run it with this plugin, then print the report:

    XDG_CACHE_HOME=$(mktemp -d) python -m pytest -p benchmarks.suite_compiles
    python benchmarks/suite_compiles.py --top 20

The plugin listens to JAX's monitoring events (`jax.monitoring`): the
seconds of every `/jax/core/compile/...` event and every persistent-cache
retrieval, added to the test running when it fired. Each pytest process
(each xdist worker) writes `compiles_<worker>.json` into the report
directory (`$JAXATARI_COMPILE_REPORT`, default `.compile_report`). The
report prints one JSON line per test file, costliest first: seconds of
tracing, lowering and compiling, and how many programs XLA compiled.
With `--programs N` it prints the N costliest programs by name instead
(every backend compile of a second or more is kept with its function's
name and test, in `programs_<worker>.json`): how often each was
compiled, in how many files, and its seconds. With `--repeats N` it
prints the N costliest programs XLA compiled more than once under the
same persistent-cache key (JAX's cache-miss log names the key before each
compile): the same program, compiled again because the other worker was
still compiling it or because its entry was never written.
"""
from __future__ import annotations

import argparse
import collections
import json
import logging
import os
import pathlib
from typing import Any

REPORT_DIR = "JAXATARI_COMPILE_REPORT"
PHASES = {"jaxpr_trace_duration": "trace_s",
          "jaxpr_to_mlir_module_duration": "lower_s",
          "backend_compile_duration": "compile_s",
          "cache_retrieval_time_sec": "cache_read_s"}

PROGRAM_MIN_S = 1.0
"""The backend compiles kept one by one (`--programs`): a second or more."""

_running = ["<outside tests>"]
_seconds: dict[str, collections.Counter] = collections.defaultdict(
    collections.Counter)
_programs: list[dict] = []
_missed_key = [None]


class _CacheMisses(logging.Handler):
    """Keeps the key of JAX's last persistent-cache miss, which it logs
    just before it compiles the program (`compiler.py`)."""

    def emit(self, record: logging.LogRecord) -> None:
        if str(record.msg).startswith("PERSISTENT COMPILATION CACHE MISS"):
            _missed_key[0] = str(record.args[1])


def report_dir() -> pathlib.Path:
    """Where the plugin writes and the report reads."""
    return pathlib.Path(os.environ.get(REPORT_DIR, ".compile_report"))


def _listen(event: str, duration: float, **details: Any) -> None:
    phase = PHASES.get(event.rsplit("/", 1)[-1])
    if phase is not None:
        _seconds[_running[0]][phase] += duration
        _seconds[_running[0]][phase.replace("_s", "_count")] += 1
    if phase == "compile_s" and duration >= PROGRAM_MIN_S:
        _programs.append({"test": _running[0], "seconds": round(duration, 2),
                          "name": str(details.get("fun_name", "?")),
                          "key": _missed_key[0]})
    if phase == "compile_s":
        _missed_key[0] = None


def pytest_configure(config) -> None:
    """Registers the listener (pytest calls this when loading the plugin)."""
    del config
    import jax.monitoring
    jax.monitoring.register_event_duration_secs_listener(_listen)
    compiler_log = logging.getLogger("jax._src.compiler")
    compiler_log.setLevel(logging.DEBUG)
    compiler_log.addHandler(_CacheMisses(logging.DEBUG))


def pytest_runtest_protocol(item, nextitem) -> None:
    """Charges the events that follow to `item`."""
    del nextitem
    _running[0] = item.nodeid


def pytest_sessionfinish(session, exitstatus) -> None:
    """Writes this process's seconds per test."""
    del session, exitstatus
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    folder = report_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"compiles_{worker}.json").write_text(json.dumps(
        {test: dict(counts) for test, counts in _seconds.items()}))
    (folder / f"programs_{worker}.json").write_text(json.dumps(_programs))


def per_program(programs: list[dict]) -> list[dict]:
    """The kept compiles summed by function name, costliest first."""
    rows: dict[str, dict] = {}
    for program in programs:
        row = rows.setdefault(program["name"], {
            "name": program["name"], "compiles": 0, "seconds": 0.0,
            "files": set()})
        row["compiles"] += 1
        row["seconds"] += program["seconds"]
        row["files"].add(program["test"].split("::")[0])
    return sorted(({**row, "seconds": round(row["seconds"], 1),
                    "files": len(row["files"])} for row in rows.values()),
                  key=lambda row: -row["seconds"])


def repeated(programs: list[dict]) -> list[dict]:
    """The kept compiles whose cache key was compiled more than once,
    summed by key, most seconds spent on the repeats first."""
    by_key: dict[str, list[dict]] = collections.defaultdict(list)
    for program in programs:
        if program.get("key"):
            by_key[program["key"]].append(program)
    rows = [{"name": runs[0]["name"], "compiles": len(runs),
             "repeat_s": round(sum(r["seconds"] for r in runs[1:]), 1),
             "tests": sorted({r["test"] for r in runs})}
            for runs in by_key.values() if len(runs) > 1]
    return sorted(rows, key=lambda row: -row["repeat_s"])


def per_file(per_test: dict[str, dict[str, float]]) -> list[dict]:
    """Sums the tests of each file: one row a file, costliest first (the
    seconds of tracing, lowering and compiling together)."""
    files: dict[str, collections.Counter] = collections.defaultdict(
        collections.Counter)
    for test, counts in per_test.items():
        files[test.split("::")[0]].update(counts)
    rows = []
    for path, counts in files.items():
        row = {"file": path}
        row.update({phase: round(counts.get(phase, 0.0), 2)
                    for phase in PHASES.values()})
        row["programs_compiled"] = int(counts.get("compile_count", 0))
        row["jax_s"] = round(row["trace_s"] + row["lower_s"]
                             + row["compile_s"], 2)
        rows.append(row)
    return sorted(rows, key=lambda row: -row["jax_s"])


def _written(folder: pathlib.Path, kind: str) -> list:
    """Every process's `{kind}_<worker>.json`, read."""
    return [json.loads(path.read_text())
            for path in sorted(folder.glob(f"{kind}_*.json"))]


def _nothing_in(folder: pathlib.Path, kind: str) -> SystemExit:
    return SystemExit(f"no {kind}_*.json in {folder}: run pytest with "
                      f"-p benchmarks.suite_compiles first")


def load(folder: pathlib.Path) -> dict[str, dict[str, float]]:
    """Every process's seconds per test, merged."""
    merged: dict[str, dict[str, float]] = {}
    for per_test in _written(folder, "compiles"):
        merged.update(per_test)
    if not merged:
        raise _nothing_in(folder, "compiles")
    return merged


def load_programs(folder: pathlib.Path) -> list[dict]:
    """Every process's kept compiles (`PROGRAM_MIN_S`), in one list."""
    written = _written(folder, "programs")
    if not written:
        raise _nothing_in(folder, "programs")
    return [program for programs in written for program in programs]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=pathlib.Path, default=None,
                        help=f"the report directory (default: ${REPORT_DIR}"
                             f" or .compile_report)")
    parser.add_argument("--top", type=int, default=20,
                        help="how many files to print")
    parser.add_argument("--programs", type=int, default=0,
                        help="print this many programs by name instead")
    parser.add_argument("--repeats", type=int, default=0,
                        help="print this many programs compiled more than "
                             "once under one cache key instead")
    args = parser.parse_args(argv)
    for count, rows_of in ((args.repeats, repeated),
                           (args.programs, per_program)):
        if count:
            programs = load_programs(args.dir or report_dir())
            for row in rows_of(programs)[:count]:
                print(json.dumps(row))
            return
    rows = per_file(load(args.dir or report_dir()))
    total = {"file": "(all)", "jax_s": round(sum(r["jax_s"] for r in rows),
                                              1),
             "programs_compiled": sum(r["programs_compiled"] for r in rows)}
    for row in rows[:args.top] + [total]:
        print(json.dumps(row))


if __name__ == "__main__":
    main()
