"""Test-wide setup: one XLA host device per core, JAX's persistent
compilation cache, and hypothesis."""

import os

# Before JAX starts: lock-step batches split over the cores (the user's
# XLA_FLAGS win).
if "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = (
        f"--xla_force_host_platform_device_count={os.cpu_count() or 1}")

# The plain kernel (`lowering.PLAIN_KERNEL_MODES`) runs on a CUDA GPU
# alone; on this CPU its default mode traces it only to prune it, about
# 1.4 s a trace of the accelerator's frame. The tests that need it say
# so (`tests/test_plain_kernel.py`, the CUDA lowering in
# `tests/test_lowering.py`).
os.environ.setdefault("JAXATARI_PLAIN_KERNEL", "off")


def _pin_worker_to_a_core() -> None:
    """Under xdist with a worker per core, each worker keeps to one core.

    The workers keep every core busy anyway, and a process that sees one
    core has XLA:CPU split no fusion over threads: with two, it split 39
    of the frame loop's fusions when each console has its own board (the
    lock-step parity batch, the mixed-game batches), and their fork and
    join doubled a frame at 32 consoles (BENCHMARKS.md, "Why: XLA:CPU
    splits those fusions over threads")."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if not worker.startswith("gw") or not hasattr(os, "sched_setaffinity"):
        return
    cores = sorted(os.sched_getaffinity(0))
    if count >= len(cores) > 1:
        os.sched_setaffinity(0, {cores[int(worker[2:]) % len(cores)]})


_pin_worker_to_a_core()

# One lowering of the frame loop, the CPU's, traced instead of both
# (`jaxatari.lowering`; subprocesses inherit it). A CPU process does so
# by default (`lowering.cpu_alone`); forced, it holds inside
# `lowering.every_backend` too. tests/test_lowering.py lowers both, and
# the per-backend choice, explicitly.
os.environ.setdefault("JAXATARI_LOWERING", "cpu")

import hypothesis  # noqa: E402
import pytest  # noqa: E402

from jaxatari import _config  # noqa: E402

_config.enable_compilation_cache()

hypothesis.settings.register_profile(
    "jaxatari", deadline=None, print_blob=True,
    suppress_health_check=[hypothesis.HealthCheck.too_slow])
# CI replays the same examples every run (.ci/run selects it): a red CI is
# then reproducible; local runs keep exploring new examples.
hypothesis.settings.register_profile(
    "ci", parent=hypothesis.settings.get_profile("jaxatari"),
    derandomize=True)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE",
                                                "jaxatari"))

# The files that take longest from a cold cache, longest first (seconds of
# setup and calls on 2 cores, empty caches, 2026-11-26: 433, 268, 257,
# 214, 182, 159, 116, 114, 112). `--dist loadfile` runs a file whole on
# one worker, and xdist would order files by their number of tests, so a
# long file with few tests started last and the other worker idled to the
# end. Run first, they leave the many short files to even out the tail
# (longest-processing-time-first scheduling; pyproject's addopts pass
# `--no-loadscope-reorder` so xdist keeps this order).
LONGEST_FIRST = (
    "tests/test_reset_carry.py",
    "tests/test_lowering.py",
    "tests/test_step_frames.py",
    "tests/console/test_parity_short.py",
    "tests/agents/test_atari.py",
    "tests/console/test_frame_vmap.py",
    "tests/test_wrappers.py",
    "tests/console/test_carts_parity.py",
    "tests/test_vmap_parity.py",
    "tests/test_env_vs_ale.py",
    # 2026-11-27, from the cold runs' `--durations` (about 40 to 80 s
    # each): started last in collection order, they had one worker
    # finish about a minute after the other.
    "tests/population/test_sweep.py",
    "tests/test_plain_kernel.py",
    "tests/population/test_distributed.py",
    "tests/agents/test_learning.py",
    "tests/test_tia_gather.py",
    "tests/test_readme_gymnax.py",
    "tests/test_tia.py",
    "tests/test_cli.py",
    "tests/console/test_cosmic_ark.py",
    "tests/test_tia_log.py",
    "tests/agents/test_run.py",
)


def pytest_collection_modifyitems(config, items):
    """The files of `LONGEST_FIRST` first, in its order; the rest, and the
    tests within each file, as collected."""
    missing = [path for path in LONGEST_FIRST
               if not (config.rootpath / path).is_file()]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py's LONGEST_FIRST names "
                                f"files that do not exist: {missing}")
    rank = {path: k for k, path in enumerate(LONGEST_FIRST)}

    def file_rank(indexed):
        index, item = indexed
        return rank.get(item.nodeid.split("::")[0], len(rank)), index
    items[:] = [item for _, item in sorted(enumerate(items), key=file_rank)]
