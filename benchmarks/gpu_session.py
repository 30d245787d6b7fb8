"""A lent GPU's measurements for issues #18-#20, prepared to run at once.

A task lent a GPU gets about 15 minutes of device time in all, the
machine's start included, on a bare machine that reaches no package
registry. Its image has JAX with CUDA, flax, optax, chex and orbax, but
not ale-py (the ROMs), gymnax, evosax or tensorboardX. So the session
prepares here and runs one command there:

    python benchmarks/gpu_session.py prepare     # here: .device/wheels
    # device tool: run(command="python3 benchmarks/gpu_session.py run
    #     --minutes 6 --stages sweep", carry=[".device"], timeout_s=380)
    # then, at once on the warm machine (its idle release is 30 s):
    #     run --minutes 7.3 --stages pong (timeout_s=460)
    python benchmarks/gpu_session.py keep-pong FILES_AT   # here, after;
    git add benchmarks/results/pong_piece benchmarks/results/pong_pieces.jsonl

`run` installs the carried wheels into a folder of /tmp (no network),
adds `FUSION_AUTOTUNER_OFF` to XLA's flags where the device's XLA
accepts it (`--autotune` keeps XLA's default), then runs the stages
below in order, each in its own process with its own time limit (a
share of `--minutes`, never past the deadline), so a crash or a hang
costs one stage, not the session. Every stage appends
JSON lines to `$OUT/results.jsonl` (each tagged with its stage) as it
measures; the processes' output goes to `$OUT/log.txt`; HLO dumps and the
trace come back as `.tar.gz` files (the device tool returns at most 8
files from `$OUT`).

In order (`DEFAULT_STAGES`):

* `smoke`: versions, devices, Pong's preset booted on the host's CPU.
* `kernel`: undrawn Pong frames with the plain kernel in the
  accelerator's loop (`jaxatari.plain_kernel`, the GPU's default), TIA
  writes queued: 90K frames/s at 64K on the eighth loan (an H100), as the
  seventh loan's kernel that stopped at every TIA access did on an H200,
  and its 64K digest is the CPU lowering's (`lowering.py --cpu-digest`).
  Now the batches of `size["kernel_batches"]` (4K: launches bind the loop
  there, and queued writes cut a frame's launches 2.4x); with
  `kernel_against_xla`, XLA's loop alone at the first batch too (digests
  compared); then the kernel at the first batch with each of
  `size["kernel_applied"]` queued writes applied a trip instead of 4
  (`console.QUEUE_APPLIED`).
* `gathers`: raw undrawn Pong frames in XLA's accelerator loop alone
  (no plain kernel) at 4K, the TIA's draws for every console in place
  (off) against for gathered consoles (on, the default since 2026-11-27:
  `lowering.GATHER_SHARES`), back to back. The fifth loan measured 64K
  (1.28x gathered on an H200) and ran out of time at 4K, where the loop
  is launch-bound and gathering adds 2 launches an instruction.
* `throughput`: `jaxatari bench`'s jaxatari rows: the preset on Pong at
  4K and 32K, with the loop shape `frames` found fastest at the batch
  nearest, until a call passes 30 s or a batch fails (out of memory),
  with the GPU's peak memory.
By name only (`--stages`; the fifth loan gave `others`, `flags` and
`frames` too little time to compile, the fourth measured `triton` and
`saturation`):

* `profile`: one undrawn frame at 64K under `jax.profiler` (the plain
  kernel's loop, the default; the seventh loan's was drawn, by mistake): the kernels' summed time against the
  call's wall time (how busy the launches keep the GPU), the costliest
  kernels, the program's optimized HLO (for the kernels' names) and the
  trace in `$OUT/profile.tar.gz` when it is small enough to bring back.
* `others`: the preset on Breakout and Ms. Pac-Man at 4K (the second
  loan's), to compare with Pong's on an H100.
* `flags`: `frames` at 4K with `packed` only, once with CUDA-graph
  command buffers for while loops and conditionals (the first H200 run
  measured them on `loop` only: 0.92x) and once with XLA's while-loop
  double buffering (`FLAG_SETS`).
* `frames`: raw emulated frames/s of `console.frame` (a shared board,
  no preprocessing; CuLE's figure is of this kind) in the accelerator's
  lowering, undrawn, with its instruction loop shaped as `loop` and
  `packed` (the default) at 4K and 64K (`lowering.LOOP_SHAPES`; the
  second loan timed `unrolled` below `packed`); the 4K programs'
  optimized HLO (`$OUT/hlo.tar.gz`) and their kernel launches per
  emulated instruction (`benchmarks/hlo_launches.py`); then a drawn
  frame, and the CPU's lowering at 4K for the ratio.
* `triton`: `benchmarks/triton_rules.py --semantics`, Triton's integer
  arithmetic against XLA's on the GPU (negative `rem` and `div`, shifts
  by 32 and more, narrowing conversions), a few seconds: whether a
  one-kernel frame would need to guard them to stay bit-exact.
* `saturation`: undrawn frames at 256K consoles (128K if that runs out
  of memory): where frames/s saturates, and the peak memory per console.
* `main`: the README's main job (PPO on gymnax's Breakout-MinAtar, 64
  envs, 20 M steps; no emulator), as its command runs it: the wall time
  and its record (`$OUT/main_record.json`). The H100 ran it to its end.
* `pallas`: `benchmarks/pallas_probe.py`, a toy instruction loop (a
  table read, a RAM read and a RAM write a step, 6,784 steps) as one
  Pallas kernel against XLA's loop of kernels, at 4K and 64K: the
  ceiling on what one kernel a frame would save; then `cpu6502.step`
  itself on random programs both ways (1,000 instructions, 4K CPUs:
  64 KiB of random memory each, drawn on the host). Timed on the H100.
* `population`: 16 A2C members of 64 envs against one agent of 1,024 on
  the preset, #20's GPU cost; its two compiles need the second call
  (at once on the warm machine: the fourth loan's 54 s on a cold one and
  the fifth's 240 s on a warm one printed nothing; the seventh measured
  it in 162 s, 1.001x).
* `sweep`: `jaxatari sweep pong --method pbt --algo a2c`, 16 members of
  64 envs, 4 generations of 4 updates (#20's "a PBT sweep on Pong"), its
  members' lines and record brought back; resumed by a later call on the
  same machine. It compiles a program like `population`'s, so it needs a
  call of its own too: on the eighth loan 165 s ended before its first
  generation's lines (`run --minutes 6 --stages sweep` next).
* `ppo`: `jaxatari train pong --algo ppo`, resumable by a second call;
  not worth a loan at today's speed.
* `pong`: #19's PPO on Pong to +18, trained in pieces across loans (a
  loan's 15 minutes hold perhaps a third of it at the seventh loan's
  speed): 2,048 envs x 16 steps a rollout, 16 minibatches of 2,048, 4
  epochs, no annealing (each piece would anneal again), CleanRL's other
  settings. That is 64 gradient steps of 2,048 samples a 32,768-step
  rollout, near CuLE's recipe (1,200 envs x 20 steps in 20 batches: +18
  in 3.1 minutes, about 2 M steps). On Breakout-MinAtar it beat the
  README's 64 envs on 3 seeds (BENCHMARKS.md, "Large batches on
  Breakout-MinAtar"); on Pong it is untried: the first pieces' curves
  say whether it learns. It starts from the agent an earlier loan
  brought back (`benchmarks/results/pong_piece/`, committed,
  `--init-from`, the next seed), or afresh without one, and trains
  until its time is up (the eighth loan's first piece had 262 s: its
  boot, its compile
  and the first 20 updates did not fit, so it checkpoints every 5
  updates now). The run writes its agent after each checkpoint (`agent/`:
  parameters and Adam's state, about 20 MB in 2 files, without the
  2,048 consoles; `run.export_learned` writes it from the last checkpoint
  if a kill came between the two saves), and the stage brings back its
  record, metrics and agent (`$OUT/pong/`: 5 files; run it in a call of
  its own). After the call: `python benchmarks/gpu_session.py keep-pong
  FILES_AT` copies them to `benchmarks/results/pong_piece/` (commit it:
  the next loan is another session's, on a fresh clone) and appends
  the piece to `benchmarks/results/pong_pieces.jsonl`.
* `resets`: `benchmarks/reset_replay.py`, what replaying Kung Fu
  Master's reset after play costs against a step, and Pong's copy, at
  4K; on the GPU the replay is one conditional a step (BENCHMARKS.md,
  "Resets after play").

Compiled programs go to JAX's persistent cache (`~/.cache/jaxatari/xla`),
so a second call on the same warm machine skips their compiles.

`python benchmarks/gpu_session.py run --tiny` runs the same stages at toy
sizes on any backend (a CPU check of the plan before a GPU is lent).
"""
from __future__ import annotations

import argparse
import gzip
import importlib
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from typing import Any, Callable

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEVICE_DIR = ROOT / ".device"
WHEELS = ("ale-py", "gymnax", "evosax", "tensorboardX", "gymnasium",
          "farama-notifications", "dotmap")
"""What the device image lacks of jaxatari's runtime dependencies (and of
theirs: gymnax imports gymnasium, evosax dotmap)."""
DEVICE_IMAGE = frozenset({
    "jax", "flax", "optax", "chex", "numpy", "pillow", "six",
    "orbax-checkpoint", "tqdm", "matplotlib", "cloudpickle", "pyyaml"})
"""jaxatari's runtime dependencies that the device image holds (the
device tool's KINDS.md lists the image: JAX 0.11 with CUDA 13, Python
3.12)."""
DEVICE_PYTHON = "3.12"
COMMAND_BUFFERS = ("--xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN,"
                   "CUSTOM_CALL,CONDITIONAL,WHILE")
"""CUDA graphs with conditional nodes, so that loop and cond predicates
can stay on the device."""
FLAG_SETS = {
    "command_buffers": COMMAND_BUFFERS,
    "double_buffering": "--xla_gpu_enable_while_loop_double_buffering=true"}
"""What the `flags` stage times `packed` at 4K with, one set at a time.
Double buffering runs the instruction loop two trips a body: 59 launches
for two instructions instead of 64 for an H100 (`gpu_aot`), at 1.5x the
compile."""

FUSION_AUTOTUNER_OFF = "--xla_gpu_experimental_enable_fusion_autotuner=false"
"""What `run` adds to the stages' XLA flags unless `--autotune`. The sixth
loan's programs compiled in 30 to 140 s on the H200, against 21 to 29 s
for an H100's compile here, where XLA has no device to autotune on. XLA's
fusion autotuner (on by default) compiles a fusion with both of its
emitters and times them on the device; it is reported to multiply
compile times (tue-bmd/zea#599). Each row carries its `xla_flags`, so the
next loan's compiles compare with the sixth's (`first_call_s`)."""

TRACE_MB = 40
"""The largest trace `profile` brings back (its summary always comes)."""
STAGES = ("smoke", "gathers", "kernel", "triton", "frames", "main",
          "throughput", "profile", "saturation", "others", "flags", "pallas",
          "population", "sweep", "ppo", "resets", "pong")
DEFAULT_STAGES = ("smoke", "kernel", "throughput")
"""What `run` runs unless `--stages` says otherwise. On the device a
program compiled in 36 to 72 s on the seventh loan, and in 100 s or more
on the eighth (TIA writes queued in the kernel), so a call measures a few
programs: the plain kernel, then the preset on Pong, where the kernel
runs. The next loan's plan (BENCHMARKS.md, "The next loan") names its
stages instead: `sweep`, then `pong`, a call each. The rest run by
name."""
SHARES = {"smoke": 0.08, "gathers": 0.2, "kernel": 0.5, "triton": 0.04,
          "saturation": 0.25, "profile": 0.22, "throughput": 0.42,
          "frames": 0.17, "flags": 0.3, "main": 0.15, "pallas": 0.06,
          "others": 0.25, "population": 0.5, "ppo": 0.33, "resets": 0.2,
          "sweep": 0.3, "pong": 1.0}
"""Each stage's share of `--minutes` (a stage that ends early leaves its
time to the next)."""

SIZES = {
    "full": {"name": "full", "pong_batches": [4096, 32768],
             "other_batches": [4096], "steps": 1, "max_call": 30.0,
             "frame_batches": [4096, 65536], "frame_repeats": 2,
             "gather_batches": [4096], "kernel_batches": [4096],
             "kernel_against_xla": False, "kernel_applied": [],
             "saturation_batch": 262144, "saturation_floor": 131072,
             "cpu_lowering_batch": 4096, "profile_batch": 65536,
             "ppo_envs": 256, "ppo_frames": 20_000_000, "ppo_chunk": 5,
             "ppo_sets": ["num_minibatches=32"],
             "pong_envs": 2048, "pong_frames": 40_000_000,
             "pong_chunk": 5,
             "pong_sets": ["num_steps=16", "num_minibatches=16",
                           "anneal_lr=false"],
             "main_frames": 20_000_000,
             "members": 16, "envs_each": 64,
             "sweep_members": 16, "sweep_envs": 64,
             "sweep_frames": 16 * 20_480, "sweep_generations": 4,
             "probe_batches": [4096, 65536], "probe_steps": 6784,
             "cpu_probe_batches": [4096], "cpu_probe_steps": 1000,
             "reset_batch": 4096, "semantics_lanes": 4096},
    "tiny": {"name": "tiny", "pong_batches": [2, 4], "other_batches": [2],
             "steps": 1, "max_call": 20.0, "frame_batches": [2, 4],
             "gather_batches": [4], "kernel_batches": [8, 4],
             "kernel_against_xla": True,
             "kernel_applied": [8],
             "frame_repeats": 1, "saturation_batch": 8, "saturation_floor": 4,
             "cpu_lowering_batch": 2, "profile_batch": 2,
             "ppo_envs": 4, "ppo_frames": 4 * 4 * 128, "ppo_chunk": 1,
             "ppo_sets": [],
             "pong_envs": 2, "pong_frames": 2 * 8 * 4 * 6, "pong_chunk": 2,
             "pong_sets": ["num_steps=8", "num_minibatches=2",
                           "anneal_lr=false"],
             "main_frames": 64 * 128 * 2,
             "members": 2, "envs_each": 1,
             "sweep_members": 5, "sweep_envs": 1,
             "sweep_frames": 5 * 2 * 2 * 5 * 4, "sweep_generations": 2,
             "probe_batches": [128], "probe_steps": 20,
             "cpu_probe_batches": [128], "cpu_probe_steps": 10,
             "reset_batch": 2, "semantics_lanes": 256},
}


# --------------------------------------------------------------------------
# Here: the wheels the device lacks.
# --------------------------------------------------------------------------

def pinned(names: tuple[str, ...] = WHEELS) -> list[str]:
    """Each name at the version installed here (what the tests ran), or
    unpinned where it is not installed."""
    from importlib import metadata
    specs = []
    for name in names:
        try:
            specs.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            specs.append(name)
    return specs


def prepare(out: pathlib.Path = DEVICE_DIR) -> list[pathlib.Path]:
    """Downloads `WHEELS` for the device's Python into `out/wheels`
    (replacing what was there), at the versions installed here, no
    dependencies."""
    wheels = out / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir(parents=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
         "--only-binary=:all:", "--python-version", DEVICE_PYTHON,
         "--platform", "manylinux_2_28_x86_64", "-d", str(wheels),
         *pinned()], check=True)
    return sorted(wheels.glob("*.whl"))


def install(device_dir: pathlib.Path = DEVICE_DIR,
            site: pathlib.Path = pathlib.Path("/tmp/jaxatari-device-site")
            ) -> pathlib.Path | None:
    """Installs the carried wheels into `site` without the network (not
    again on a second call with the same wheels); None when there are
    none (a machine that has them)."""
    wheels = sorted((device_dir / "wheels").glob("*.whl"))
    if not wheels:
        return None
    done, names = site / ".installed", "\n".join(w.name for w in wheels)
    if done.exists() and done.read_text() == names:
        return site
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                    "--no-deps", "--no-index", "--upgrade", "--target",
                    str(site), *map(str, wheels)], check=True)
    done.write_text(names)
    return site


# --------------------------------------------------------------------------
# There: stages in processes of their own, each with a time limit.
# --------------------------------------------------------------------------

class Results:
    """Appends a stage's JSON lines to `results.jsonl` as they come."""

    def __init__(self, out: pathlib.Path, stage: str):
        self.path, self.stage = out / "results.jsonl", stage

    def add(self, row: dict[str, Any]) -> None:
        line = json.dumps({"stage": self.stage, **row}, default=str)
        with self.path.open("a") as file:
            file.write(line + "\n")
        print(line, flush=True)


def run_stages(stages: list[str], minutes: float, out: pathlib.Path,
               command: Callable[[str, float], list[str]],
               env: dict[str, str]) -> list[dict[str, Any]]:
    """Runs each stage's `command(stage, seconds)` with its share of the
    time, ending every stage by the deadline; returns one row per stage
    (its exit code, or that it ran out of time)."""
    deadline = time.monotonic() + minutes * 60
    total_share = sum(SHARES[s] for s in stages)
    outcomes, log = [], (out / "log.txt").open("a")
    for index, stage in enumerate(stages):
        left = deadline - time.monotonic()
        rest = sum(SHARES[s] for s in stages[index:])
        seconds = min(left, max(left * SHARES[stage] / rest,
                                minutes * 60 * SHARES[stage] / total_share))
        if seconds < 5:
            outcomes.append({"stage": stage, "skipped": "no time left"})
        else:
            log.write(f"\n===== {stage} ({seconds:.0f} s) =====\n")
            log.flush()
            begin = time.monotonic()
            outcome = _run_group(command(stage, seconds), seconds, log, env)
            outcomes.append({"stage": stage, **outcome,
                             "seconds": round(time.monotonic() - begin, 1)})
        Results(out, "runner").add(outcomes[-1])
    log.close()
    return outcomes


def _run_group(command: list[str], seconds: float, log: Any,
               env: dict[str, str]) -> dict[str, Any]:
    """Runs `command` in a process group of its own and kills the whole
    group (a stage's own children too) if it passes `seconds`."""
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                               env=env, start_new_session=True)
    try:
        return {"exit_code": process.wait(timeout=seconds)}
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return {"timed_out_after_s": round(seconds)}


def stage_environment(site: pathlib.Path | None) -> dict[str, str]:
    """The stages' environment: the repository and the carried site
    first on the path, output unbuffered."""
    paths = [str(ROOT)] + ([str(site)] if site else [])
    old = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join(paths + ([old] if old else []))}


def run(args: argparse.Namespace) -> None:
    """Installs the wheels, runs the stages, and leaves at most 8 files
    in `args.out`."""
    args.out.mkdir(parents=True, exist_ok=True)
    begin = time.monotonic()
    site = None if args.no_install else install()
    Results(args.out, "runner").add({"installed": str(site),
                                     "seconds": round(time.monotonic()
                                                      - begin, 1)})

    def command(stage: str, seconds: float) -> list[str]:
        return [sys.executable, str(pathlib.Path(__file__).resolve()),
                "stage", stage, "--out", str(args.out), "--seconds",
                str(int(seconds)), "--size", "tiny" if args.tiny else "full"]
    env = stage_environment(site)
    if not args.autotune:
        env = _with_flag(env, FUSION_AUTOTUNER_OFF, args.out)
    minutes = args.minutes - (time.monotonic() - begin) / 60
    run_stages(args.stages, minutes, args.out, command, env)


def _with_flag(env: dict[str, str], flag: str,
               out: pathlib.Path) -> dict[str, str]:
    """`env` with `flag` added to its XLA flags if this jaxlib's XLA
    accepts it (an unknown flag aborts every process), as a short probe
    process tells; the probe's answer is a runner row."""
    flags = f"{env.get('XLA_FLAGS', '')} {flag}".strip()
    probe = subprocess.run(
        [sys.executable, "-c", "import jax; jax.numpy.zeros(1).block_until_"
         "ready()"], env={**env, "XLA_FLAGS": flags}, capture_output=True,
        timeout=120)
    accepted = probe.returncode == 0
    Results(out, "runner").add({"xla_flag": flag, "accepted": accepted})
    return {**env, "XLA_FLAGS": flags} if accepted else env


# --------------------------------------------------------------------------
# The stages.
# --------------------------------------------------------------------------

def _memory() -> dict[str, Any]:
    """The first device's memory statistics (bytes), where it has them."""
    import jax
    stats = jax.devices()[0].memory_stats() or {}
    return {k: stats[k] for k in ("peak_bytes_in_use", "bytes_in_use",
                                  "bytes_limit") if k in stats}


def stage_smoke(results: Results, size: dict[str, Any],
                seconds: float) -> None:
    """Versions, devices, and Pong's preset booted on the host's CPU (as
    `jaxatari bench` boots; it fills the boot cache for later stages).
    The first step's compile is `throughput`'s `compile_seconds`."""
    import platform
    import jax
    from jaxatari import bench
    results.add({"python": platform.python_version(), "jax": jax.__version__,
                 "backend": jax.default_backend(),
                 "devices": [str(d) for d in jax.devices()],
                 "xla_flags": os.environ.get("XLA_FLAGS", "")})
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,"
                              "driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        results.add({"nvidia_smi": smi.stdout.strip()})
    except (OSError, subprocess.TimeoutExpired) as error:
        results.add({"nvidia_smi": f"unavailable: {error}"})
    begin = time.perf_counter()
    bench.jaxatari_workload("pong")
    results.add({"make_atari_pong_s": round(time.perf_counter() - begin, 1)})


def _sweep(results: Results, game: str, batches: list[int],
           size: dict[str, Any], shape_for: Callable[[int], str]) -> None:
    """`jaxatari bench`'s jaxatari rows for one game, with memory, the
    accelerator's instruction loop shaped as `shape_for(batch)`."""
    from jaxatari import bench, lowering
    env, params = bench.jaxatari_workload(game)

    def measure(batch: int) -> dict:
        shape = shape_for(batch)
        try:
            with lowering.loop_shape(shape):
                row = bench.measure_jaxatari(env, params, game, batch,
                                             size["steps"], 3, 10.0)
        except Exception as error:   # out of memory, most likely; an
            # infinite time makes `sweep` skip the larger batches
            row = {"game": game, "batch": batch, "seconds_per_call":
                   float("inf"), "error": f"{type(error).__name__}: "
                   f"{str(error)[:400]}"}
        row.update(loop_shape=shape, **_memory())
        results.add(row)
        return row
    bench.sweep(measure, batches, size["max_call"])


def _fastest_shape(path: pathlib.Path, batch: int) -> str:
    """The accelerator's loop shape whose undrawn frames were fastest at
    the batch nearest `batch` (in ratio) that `frames` measured more than
    one shape at (the default when it measured none). The second loan
    found the fastest shape differs by batch (`packed` 2.0x at 4K,
    `loop` 1.28x at 64K, as packed then)."""
    import math
    from jaxatari import lowering
    rows = [json.loads(line) for line in path.read_text().splitlines()
            ] if path.exists() else []
    found: dict[int, dict[str, float]] = {}
    for row in rows:
        if row.get("stage") == "frames" and row.get("variant") == \
                "accelerator" and not row.get("render"):
            found.setdefault(row["batch"], {})[row["loop_shape"]] = row[
                "frames_per_s"]
    several = [batch for batch, shapes in found.items() if len(shapes) > 1]
    if not several:
        return lowering.DEFAULT_LOOP_SHAPE
    nearest = min(several, key=lambda b: (abs(math.log(b / batch)), -b))
    shapes = found[nearest]
    return max(shapes, key=shapes.get)


def stage_throughput(results: Results, size: dict[str, Any],
                     seconds: float) -> None:
    """The preset on Pong at growing batches, with the loop shape
    `frames` found fastest."""
    _sweep(results, "pong", size["pong_batches"], size,
           lambda batch: _fastest_shape(results.path, batch))


def stage_others(results: Results, size: dict[str, Any],
                 seconds: float) -> None:
    """The preset on Breakout and Ms. Pac-Man."""
    for game in ("breakout", "ms_pacman"):
        _sweep(results, game, size["other_batches"], size,
               lambda batch: _fastest_shape(results.path, batch))


def _benchmark(name: str):
    """The module `benchmarks/<name>.py` (this folder put on the path)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    return importlib.import_module(name)


def stage_frames(results: Results, size: dict[str, Any],
                 seconds: float) -> None:
    """Raw emulated frames/s (`benchmarks/lowering.py frames`, a shared
    board) in the accelerator's lowering, undrawn: `loop` and the default
    shape at the first batch and the last (`lowering.LOOP_SHAPES`; the
    first batch's programs' HLO and kernel launches per instruction come
    too); then a drawn frame at the last batch with the fastest shape,
    and the CPU's lowering. With `size["short"]`, the default shape at
    the first batch only."""
    from jaxatari import lowering as variants
    lowering = _benchmark("lowering")
    hlo = pathlib.Path("/tmp/jaxatari-gpu-hlo")
    shutil.rmtree(hlo, ignore_errors=True)
    hlo.mkdir(parents=True)
    first, last = size["frame_batches"][0], size["frame_batches"][-1]
    default = variants.DEFAULT_LOOP_SHAPE
    plan = [(first, default)] if size.get("short") else [
        (first, "loop"), (first, default), (last, default), (last, "loop")]
    for batch, shape in plan:   # the headline pairs first
        path = str(hlo / f"frame_{batch}_{shape}.txt") \
            if batch == first and not size.get("short") else None
        results.add({**lowering.frames(
            "pong", "accelerator", batch, False, size["frame_repeats"],
            True, shape, path), **_memory()})
        if path:   # a stage cut short keeps the dumps made so far
            with tarfile.open(results.path.parent / "hlo.tar.gz",
                              "w:gz") as tar:
                tar.add(hlo, arcname="hlo")
    if size.get("short"):
        return
    results.add({**lowering.frames("pong", "accelerator", last, True,
                                   size["frame_repeats"], True,
                                   _fastest_shape(results.path, last)),
                 **_memory()})
    results.add({**lowering.frames("pong", "cpu", size["cpu_lowering_batch"],
                                   False, size["frame_repeats"], True),
                 **_memory()})


def stage_gathers(results: Results, size: dict[str, Any],
                  seconds: float) -> None:
    """Undrawn frames at each of `size["gather_batches"]`, the TIA's
    draws in place (off) then for gathered consoles (on), back to back;
    about 30 s a program to compile. The fifth loan timed 64K (1.28x
    gathered) and ran out of time at 4K, where the loop is launch-bound."""
    lowering = _benchmark("lowering")
    for batch in size["gather_batches"]:
        for gathers in (False, True):
            results.add({**lowering.frames(
                "pong", "accelerator", batch, False, size["frame_repeats"],
                True, None, None, gathers, kernel="off"), **_memory()})


def stage_kernel(results: Results, size: dict[str, Any],
                 seconds: float) -> None:
    """Undrawn Pong frames (`benchmarks/lowering.py frames`, a shared
    board) with the plain kernel in the accelerator's loop (the GPU's
    default, `jaxatari.plain_kernel`, TIA writes queued) at the first of
    `size["kernel_batches"]`; with `size["kernel_against_xla"]`, XLA's
    loop alone (its draws gathered) there too, with whether both ended in
    the same state (the digests of the same frames from the same
    consoles, computed on the device); the kernel at the other batches;
    then the kernel at the first batch with each of
    `size["kernel_applied"]` queued writes applied a trip."""
    lowering = _benchmark("lowering")
    repeats = size["frame_repeats"]
    first, *others = size["kernel_batches"]
    kernel = lowering.frames("pong", "accelerator", first, False, repeats,
                             True, digest=True)
    results.add({**kernel, **_memory()})
    if size["kernel_against_xla"]:
        xla = lowering.frames("pong", "accelerator", first, False, repeats,
                              True, digest=True, kernel="off")
        results.add({**xla, **_memory(), "same_state_as_kernel":
                     xla["digest"] == kernel["digest"]})
    for batch in others:
        results.add({**lowering.frames("pong", "accelerator", batch, False,
                                       repeats, True, digest=True),
                     **_memory()})
    for applied in size["kernel_applied"]:
        row = _kernel_applied(first, repeats, applied)
        results.add({**row, **_memory(),
                     "same_state_as_kernel": row["digest"]
                     == kernel["digest"]})


def _kernel_applied(batch: int, repeats: int, applied: int) -> dict:
    """The kernel's frames at `batch` with `applied` queued TIA writes
    applied a trip (`console.QUEUE_APPLIED`, 4): on 8 Pong consoles here
    2, 4 and 8 took 672, 448 and 320 trips a frame, but each applied
    write is a draw for every console, so the GPU decides."""
    from jaxatari import console
    lowering = _benchmark("lowering")
    default, console.QUEUE_APPLIED = console.QUEUE_APPLIED, applied
    try:   # a new jitted function: traced with `applied`
        row = lowering.frames("pong", "accelerator", batch, False, repeats,
                              True, digest=True)
    finally:
        console.QUEUE_APPLIED = default
    return {**row, "queue_applied": applied}


def stage_saturation(results: Results, size: dict[str, Any],
                     seconds: float) -> None:
    """Undrawn frames at the largest batch that fits, with the fastest
    loop shape: where frames/s saturates, and the memory per console.

    The H100's loan ran out of memory at 262,144 consoles (16.4 GiB more
    at XLA's default 75% of the GPU's memory; 238 KB a console at
    65,536), so the stage lets XLA take 95% of it and, out of memory,
    halves the batch (each failure is a row). One timed call after the
    compiling one: at 262,144 consoles a frame may take 10 s or more."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.95")
    lowering = _benchmark("lowering")
    batch = size["saturation_batch"]
    while batch >= size["saturation_floor"]:
        try:
            row = lowering.frames("pong", "accelerator", batch, False, 1,
                                  True, _fastest_shape(results.path, batch))
        except Exception as error:   # jax's RESOURCE_EXHAUSTED
            if "RESOURCE_EXHAUSTED" not in str(error):
                raise
            results.add({"batch": batch, "error": str(error)[:300],
                         **_memory()})
            batch //= 2
            continue
        memory = _memory()
        results.add({**row, **memory, "peak_bytes_per_console": memory.get(
            "peak_bytes_in_use", 0) / batch})
        return


def stage_triton(results: Results, size: dict[str, Any],
                 seconds: float) -> None:
    """Triton's integer arithmetic against XLA's on the device
    (`benchmarks/triton_rules.py --semantics`: negative `rem` and `div`,
    shifts by 32 and more, narrowing conversions): the lanes where a
    one-kernel frame would compute other bits than the emulator. On the
    CPU, Pallas's interpreter (a check of the stage, not of Triton)."""
    import jax
    rules = _benchmark("triton_rules")
    for row in rules.semantics(size["semantics_lanes"],
                               interpret=jax.default_backend() == "cpu"):
        results.add(row)


def stage_pallas(results: Results, size: dict[str, Any],
                 seconds: float) -> None:
    """`benchmarks/pallas_probe.py`: a toy instruction loop (a table read,
    a RAM read and write a step) as one Pallas kernel against XLA's loop
    of kernels, a frame's worth of steps: the ceiling on what one kernel
    a frame would save (#18's design question); then the real CPU core
    (`cpu6502.step` on random programs) both ways."""
    pallas_probe = _benchmark("pallas_probe")
    plan = [("toy", batch, size["probe_steps"])
            for batch in size["probe_batches"]] + [
        ("cpu6502", batch, size["cpu_probe_steps"])
        for batch in size["cpu_probe_batches"]]
    for workload, batch, steps in plan:
        for row in pallas_probe.measured(workload, batch, steps, 3):
            results.add({**row, **_memory()})


def stage_flags(results: Results, size: dict[str, Any],
                seconds: float) -> None:
    """`stage_frames`, short (the default shape at the first batch), once
    with each of `FLAG_SETS` added to XLA's flags; its rows carry their
    `xla_flags`."""
    each = seconds / len(FLAG_SETS)
    for name, extra in FLAG_SETS.items():
        flags = f"{os.environ.get('XLA_FLAGS', '')} {extra}".strip()
        results.add({"flag_set": name, "xla_flags": flags})
        try:
            subprocess.run(
                [sys.executable, str(pathlib.Path(__file__).resolve()),
                 "stage", "frames", "--out", str(results.path.parent),
                 "--seconds", str(int(each)), "--size", size["name"],
                 "--short"], env={**os.environ, "XLA_FLAGS": flags},
                timeout=max(each - 5, 5), check=True)
        except (subprocess.SubprocessError, OSError) as error:
            results.add({"flag_set": name, "error": str(error)[:300]})


def device_time(trace_dir: pathlib.Path, count: int = 20,
                seconds: float = float("inf")) -> dict:
    """From a trace: the device planes' kernels (events) and their summed
    time, and the costliest ops by total time (all planes when there is
    no device plane). Reading events in Python is slow (a CPU trace of
    a toy frame held millions), so it stops after `seconds` and says so
    (`complete`)."""
    import collections
    from jax.profiler import ProfileData
    deadline = time.monotonic() + seconds
    files = sorted(trace_dir.glob("**/*.xplane.pb"))
    data = ProfileData.from_file(str(files[-1]))
    total, calls = collections.Counter(), collections.Counter()
    planes = [p for p in data.planes if "/device:" in p.name] or list(
        data.planes)
    read, complete = 0, True
    for event in (e for plane in planes for line in plane.lines
                  for e in line.events):
        total[event.name[:100]] += event.duration_ns
        calls[event.name[:100]] += 1
        read += 1
        if read % 10_000 == 0 and time.monotonic() > deadline:
            complete = False
            break
    return {"events": read, "complete": complete,
            "event_ms": sum(total.values()) / 1e6,
            "top": [{"op": op, "total_ms": ns / 1e6, "calls": calls[op]}
                    for op, ns in total.most_common(count)]}


def stage_profile(results: Results, size: dict[str, Any],
                  seconds: float) -> None:
    """One undrawn frame of the accelerator's lowering (the fastest loop
    shape) under `jax.profiler`: the kernels' summed time against the
    call's wall time (how busy the launches keep the GPU), the costliest
    kernels, the program's optimized HLO (`$OUT/profile_hlo.txt.gz`, so
    that the kernels' names can be read) and the trace in
    `$OUT/profile.tar.gz` if it is small."""
    import jax
    started = time.monotonic()
    lowering = _benchmark("lowering")
    from jaxatari import console, lowering as variants
    work = results.path.parent / "profile"
    shutil.rmtree(work, ignore_errors=True)
    batch = size["profile_batch"]
    board, state, inputs = lowering._consoles("pong", batch, True)
    shape = _fastest_shape(results.path, batch)
    with variants.forced(variants.ACCELERATOR), variants.loop_shape(shape):
        step = jax.jit(jax.vmap(lambda s, i: console.frame(
            board, s, i, render=False))).lower(state, inputs).compile()
        # the profiled program's own HLO, so the trace's kernel names read
        with gzip.open(results.path.parent / "profile_hlo.txt.gz",
                       "wt") as hlo:
            hlo.write(step.as_text())
        state = jax.block_until_ready(step(state, inputs))
        options = jax.profiler.ProfileOptions()
        options.python_tracer_level = 0
        try:
            options.advanced_configuration = {
                "gpu_max_activity_api_events": 8_000_000,
                "gpu_max_callback_api_events": 8_000_000}
        except (AttributeError, TypeError) as error:
            results.add({"profile_options": f"defaults: {error}"})
        jax.profiler.start_trace(str(work / "trace"),
                                 profiler_options=options)
        begin = time.perf_counter()
        state = jax.block_until_ready(step(state, inputs))
        wall = time.perf_counter() - begin
        jax.profiler.stop_trace()
    results.add({"batch": batch, "loop_shape": shape, "wall_s": wall,
                 "render": False, "traced": True})
    summary = device_time(work / "trace", seconds=max(
        10.0, seconds - (time.monotonic() - started) - 15))
    results.add({"batch": batch, "loop_shape": shape, "wall_s": wall,
                 "render": False, "events": summary["events"],
                 "complete": summary["complete"],
                 "event_ms": summary["event_ms"],
                 "busy_fraction": summary["event_ms"] / 1e3 / wall})
    for row in summary["top"]:
        results.add(row)
    size_mb = sum(f.stat().st_size for f in work.rglob("*")
                  if f.is_file()) / 2**20
    if size_mb <= TRACE_MB:   # a million kernels a frame make a big one
        with tarfile.open(results.path.parent / "profile.tar.gz",
                          "w:gz") as tar:
            tar.add(work, arcname="profile")
    results.add({"trace_mb": round(size_mb, 1),
                 "kept": size_mb <= TRACE_MB})
    shutil.rmtree(work)


def stage_main(results: Results, size: dict[str, Any],
               seconds: float) -> None:
    """The README's main job (PPO on gymnax's Breakout-MinAtar, 64 envs,
    20 M steps; no emulator) as its command runs it: wall time, frames/s
    and the final return from its record (`$OUT/main_record.json`), or,
    when its time runs out first, the frames it reached."""
    out = pathlib.Path("/tmp/jaxatari-gpu-main")
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "jaxatari.agents.run",
               "gymnax:Breakout-MinAtar", "--algo", "ppo", "--num-envs",
               "64", "--frames", str(size["main_frames"]), "--out", str(out),
               "--gif-steps", "0", "--no-progress"]
    results.add({"command": " ".join(command[2:])})
    begin = time.perf_counter()
    try:
        subprocess.run(command, timeout=max(seconds - 5, 5), check=True)
    except subprocess.TimeoutExpired:
        lines = (out / "metrics.jsonl").read_text().splitlines() if (
            out / "metrics.jsonl").exists() else []
        results.add({"stopped": "out of time", "wall_s": round(
            time.perf_counter() - begin, 1), "last": json.loads(lines[-1])
            if lines else None})
        return
    record = json.loads((out / "record.json").read_text())
    shutil.copy(out / "record.json", results.path.parent / "main_record.json")
    results.add({"wall_s": round(time.perf_counter() - begin, 1),
                 **{k: record.get(k) for k in (
                     "seconds", "compile_seconds", "final", "devices",
                     "backend")}})


def _resumable(results: Results, command: list[str], run_dir: pathlib.Path,
               marker: str, seconds: float,
               copies: dict[str, str]) -> None:
    """Runs `command` (a training run writing to `run_dir`) until it ends
    or `seconds` run out, with `--resume` when an earlier call on this
    machine left `run_dir / marker`; then brings `run_dir`'s files
    `copies` back under their new names. JAX logs each program's trace,
    lowering and compile seconds (`JAX_LOG_COMPILES`) into the stage's
    log: on the eighth loan two such runs ended before their first line,
    and the log did not say where their minutes went."""
    if (run_dir / marker).exists():
        command = command + ["--resume"]
    results.add({"command": " ".join(command[1:])})
    begin = time.perf_counter()
    try:
        code = subprocess.run(
            command, timeout=max(seconds - 10, 5),
            env={**os.environ, "JAX_LOG_COMPILES": "1"}).returncode
        results.add({"exit_code": code,
                     "wall_s": round(time.perf_counter() - begin, 1)})
    except subprocess.TimeoutExpired:
        results.add({"stopped": "out of time",
                     "wall_s": round(time.perf_counter() - begin, 1)})
    for name, target in copies.items():
        if (run_dir / name).exists():
            shutil.copy(run_dir / name, results.path.parent / target)


def _pong_ppo_command(size: dict[str, Any], prefix: str,
                      run_dir: pathlib.Path) -> list[str]:
    """`jaxatari train pong --algo ppo` with `size`'s `<prefix>_envs`,
    `_frames`, `_chunk` and `_sets`, into `run_dir`, without a GIF."""
    return [sys.executable, "-m", "jaxatari.agents.run", "pong",
            "--algo", "ppo", "--num-envs", str(size[f"{prefix}_envs"]),
            "--frames", str(size[f"{prefix}_frames"]), "--out", str(run_dir),
            "--checkpoint-every", str(size[f"{prefix}_chunk"]),
            "--gif-steps", "0", "--no-progress"] + [
                arg for item in size[f"{prefix}_sets"]
                for arg in ("--set", item)]


def stage_ppo(results: Results, size: dict[str, Any],
              seconds: float) -> None:
    """PPO on Pong until its time is up, resumed from its last checkpoint
    when an earlier call on this machine ran it; its metrics come back as
    they are written (one chunk of updates at a time)."""
    run_dir = pathlib.Path("/tmp/jaxatari-gpu-ppo")
    command = _pong_ppo_command(size, "ppo", run_dir)
    _resumable(results, command, run_dir, "record.json", seconds,
               {"metrics.jsonl": "ppo_metrics.jsonl",
                "record.json": "ppo_record.json"})


PONG_PIECE = ROOT / "benchmarks" / "results" / "pong_piece"
"""Where the agent of #19's Pong run waits between loans. Tracked by git,
not under the ignored `DEVICE_DIR`: a session starts from a fresh clone,
so an ignored folder is gone by the next loan (which is drawn for
another session), and tracked files travel to the device with the
working tree, uncarried. About 20 MB a piece (parameters and Adam's
state), replaced by each piece, so each kept piece adds that much to the
repository's history."""
PONG_LOG = ROOT / "benchmarks" / "results" / "pong_pieces.jsonl"
"""One line a piece of the Pong run (`keep_pong`)."""
PONG_FILES = ("record.json", "metrics.jsonl", "agent/learned.json",
              "agent/params.npz", "agent/opt_state.npz")


def stage_pong(results: Results, size: dict[str, Any],
               seconds: float) -> None:
    """One piece of PPO's Pong run: from `PONG_PIECE`'s agent when an
    earlier loan left one, until the time is up; the piece's agent, record
    and metrics come back under `$OUT/pong/`."""
    run_dir = pathlib.Path("/tmp/jaxatari-gpu-pong")
    shutil.rmtree(run_dir, ignore_errors=True)     # a new piece each call
    command = _pong_ppo_command(size, "pong", run_dir)
    learned = PONG_PIECE / "agent" / "learned.json"
    if learned.exists():      # each piece its own seed: other envs, keys
        seed = json.loads(learned.read_text())["seed"] + 1
        command += ["--init-from", str(learned.parent), "--seed", str(seed)]
    # Leave a minute to write the agent and copy it out.
    _resumable(results, command, run_dir, "record.json", seconds - 60, {})
    from jaxatari.agents import run as train_run
    if (run_dir / "record.json").exists() and not (
            run_dir / "agent" / "learned.json").exists():
        try:
            train_run.export_learned(run_dir)
        except ValueError as error:       # no checkpoint yet
            results.add({"export": str(error)})
    back = results.path.parent / "pong"
    for name in PONG_FILES:
        if (run_dir / name).exists():
            (back / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(run_dir / name, back / name)
    learned = run_dir / "agent" / "learned.json"
    results.add({"piece": json.loads(learned.read_text())
                 if learned.exists() else None})


def keep_pong(files_at: pathlib.Path) -> dict[str, Any]:
    """Here, after a loan: its Pong piece (`FILES_AT/pong/`) becomes the
    next loan's start (`PONG_PIECE`), and a line of
    `benchmarks/results/pong_pieces.jsonl` (the piece's agent and its
    metrics) records it.

    Raises:
        ValueError: the piece lacks one of `PONG_FILES` (nothing is
            replaced).
    """
    piece = files_at / "pong"
    missing = [name for name in PONG_FILES if not (piece / name).exists()]
    if missing:
        raise ValueError(f"{piece} lacks {missing}: the loan's pong stage "
                         f"saved no agent (see its results.jsonl); "
                         f"{PONG_PIECE} is left as it was")
    meta = json.loads((piece / "agent" / "learned.json").read_text())
    shutil.rmtree(PONG_PIECE, ignore_errors=True)
    for name in PONG_FILES:
        (PONG_PIECE / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(piece / name, PONG_PIECE / name)
    metrics = [json.loads(line) for line in
               (piece / "metrics.jsonl").read_text().splitlines()]
    record = json.loads((piece / "record.json").read_text())
    line = {"agent": meta, "devices": record.get("devices"),
            "init_from_agent": record.get("init_from_agent"),
            "metrics": metrics}
    with PONG_LOG.open("a") as file:
        file.write(json.dumps(line) + "\n")
    return meta


def stage_sweep(results: Results, size: dict[str, Any],
                seconds: float) -> None:
    """A PBT sweep on Pong (#20: A2C members on the preset) as `jaxatari
    sweep` runs it, chunk by chunk: its members' lines (written after each
    chunk) and record come back, the wall time with them."""
    run_dir = pathlib.Path("/tmp/jaxatari-gpu-sweep")
    command = [sys.executable, "-m", "jaxatari.cli", "sweep", "pong",
               "--method", "pbt", "--algo", "a2c",
               "--members", str(size["sweep_members"]),
               "--num-envs", str(size["sweep_envs"]),
               "--frames", str(size["sweep_frames"]),
               "--generations", str(size["sweep_generations"]),
               "--chunk", "1", "--out", str(run_dir)]
    _resumable(results, command, run_dir, "members.jsonl", seconds,
               {"members.jsonl": "sweep_members.jsonl",
                "record.json": "sweep_record.json"})


def stage_population(results: Results, size: dict[str, Any],
                     seconds: float) -> None:
    """16 A2C members against one agent of 16x the envs."""
    population = _benchmark("population")
    for row in population.atari_cost("pong", size["members"],
                                     size["envs_each"], 1, 1):
        results.add(row)


def stage_resets(results: Results, size: dict[str, Any],
                 seconds: float) -> None:
    """A replayed reset's cost against a step (Kung Fu Master), and a
    copied one's (Pong), on the preset."""
    reset_replay = _benchmark("reset_replay")
    for game in ("kung_fu_master", "pong"):
        results.add({**reset_replay.measure(game, size["reset_batch"], 3),
                     **_memory()})


def main() -> None:
    top = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    verbs = top.add_subparsers(dest="verb", required=True)
    verbs.add_parser("prepare", help="download the wheels into .device/")
    go = verbs.add_parser("run", help="on the device: install, measure")
    go.add_argument("--minutes", type=float, default=7.0)
    go.add_argument("--out", type=pathlib.Path,
                    default=pathlib.Path(os.environ.get("OUT", "gpu-out")))
    go.add_argument("--stages", nargs="+", default=list(DEFAULT_STAGES),
                    choices=STAGES)
    go.add_argument("--tiny", action="store_true",
                    help="toy sizes: a check of the plan on any backend")
    go.add_argument("--no-install", action="store_true")
    go.add_argument("--autotune", action="store_true",
                    help="keep XLA's fusion autotuner (FUSION_AUTOTUNER_OFF)")
    keep = verbs.add_parser("keep-pong", help="here, after a loan: its "
                            "Pong piece becomes the next one's start")
    keep.add_argument("files_at", type=pathlib.Path)
    one = verbs.add_parser("stage", help="one stage (run calls this)")
    one.add_argument("name", choices=STAGES)
    one.add_argument("--out", type=pathlib.Path, required=True)
    one.add_argument("--seconds", type=float, required=True)
    one.add_argument("--size", choices=sorted(SIZES), default="full")
    one.add_argument("--short", action="store_true",
                     help="frames: the first batch, undrawn, only")
    args = top.parse_args()
    if args.verb == "prepare":
        for wheel in prepare():
            print(wheel.name, wheel.stat().st_size)
    elif args.verb == "keep-pong":
        print(json.dumps(keep_pong(args.files_at)))
    elif args.verb == "run":
        run(args)
    else:
        from jaxatari import _config
        _config.enable_compilation_cache()
        globals()[f"stage_{args.name}"](
            Results(args.out, args.name),
            {**SIZES[args.size], "short": args.short}, args.seconds)


if __name__ == "__main__":
    main()
