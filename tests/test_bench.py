"""`jaxatari.bench` (benchmarks/env_throughput.py): the CPU systems'
harness on a tiny workload, the batch sweep's skip rule, and the report
(table, BENCHMARKS.md section, plot). jaxatari's own rollout program
(`bench.rollout_program`, which `benchmarks/emulator.py` shares) is
compiled and timed by the benchmarks, not here."""
import argparse

import pytest

from jaxatari import bench


def _args(systems, **kwargs) -> argparse.Namespace:
    args = bench.parse(["--games", "pong", "--systems", *systems,
                        "--cpu-batches", "2", "--cpu-steps", "3",
                        "--repeats", "2", "--budget", "5"])
    return argparse.Namespace(**{**vars(args), **kwargs})


def test_cpu_systems_run_the_workload():
    results = bench.run_systems(_args(["ale-py", "gymnasium", "envpool"]))
    by_system = {r["system"]: r for r in results}
    for system in ("ale-py AtariVectorEnv", "Gymnasium sync"):
        result = by_system[system]
        assert result["batch"] == 2 and result["steps_per_call"] == 3
        assert result["steps_per_s"] * 4 == pytest.approx(
            result["frames_per_s"])
    envpool = by_system.get("envpool") or by_system["EnvPool"]
    assert "skipped" in envpool or envpool["steps_per_s"] > 0


def test_sweep_skips_batches_predicted_too_slow():
    def measure(batch):
        return dict(system="s", game="g", batch=batch, seconds_per_call=
                    batch / 100, steps_per_s=100.0, frames_per_s=400.0)
    results = bench.sweep(measure, [1000, 100, 10000], max_call=50)
    assert [r["batch"] for r in results] == [100, 1000, 10000]
    assert "skipped" not in results[1]
    assert "about 100 s" in results[2]["skipped"]


def test_report_table_section_and_plot(tmp_path):
    rows = [dict(system=system, game="pong", batch=batch, steps_per_call=1,
                 timed_calls=1, seconds_per_call=1.0, steps_per_s=speed,
                 frames_per_s=4 * speed)
            for system, batch, speed in (("jaxatari", 64, 50.0),
                                         ("EnvPool", 8, 4000.0),
                                         ("jaxatari: layer", 64, 80.0))]
    rows.append(dict(rows[0], batch=256, skipped="too slow"))
    text = bench.markdown(rows, "jaxatari bench")
    assert "| jaxatari | 64 | 50 | 200 | 0.0125 |" in text
    assert "| EnvPool | 8 | 4,000 | 16,000 | 1 |" in text
    assert "skipped: too slow" in text
    page = tmp_path / "BENCHMARKS.md"
    page.write_text("# Benchmarks\n")
    bench.write_section(page, "first\n")
    bench.write_section(page, "second\n")
    assert page.read_text().count(bench.MARKER) == 2
    assert "second" in page.read_text() and "first" not in page.read_text()
    bench.plot(rows, tmp_path / "plot.png")
    assert (tmp_path / "plot.png").read_bytes()[:4] == b"\x89PNG"
