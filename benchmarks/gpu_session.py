"""A lent GPU's measurements for issues #18-#20, prepared to run at once.

A task lent a GPU gets about 15 minutes of device time in all, the
machine's start included, on a bare machine that reaches no package
registry. Its image has JAX with CUDA, flax, optax, chex and orbax, but
not ale-py (the ROMs), gymnax, evosax or tensorboardX. So the session
prepares here and runs one command there:

    python benchmarks/gpu_session.py prepare     # here: .device/wheels
    # device tool: run(command="python3 benchmarks/gpu_session.py run
    #     --minutes 8", carry=[".device"], timeout_s=560)

`run` installs the carried wheels into a folder of /tmp (no network), then
runs the stages below in order, each in its own process with its own
time limit (a share of `--minutes`, never past the deadline), so a
crash or a hang costs one stage, not the session. Every stage appends
JSON lines to `$OUT/results.jsonl` (each tagged with its stage) as it
measures; the processes' output goes to `$OUT/log.txt`; the profile and
the PPO run's metrics come back as files (the device tool returns at most
8 files from `$OUT`).

In order (the headline figures first):

* `smoke`: versions, devices, Pong's preset booted (on the host's CPU,
  as `jaxatari bench` boots) and its first step's compile on the GPU.
* `throughput`: `jaxatari bench`'s jaxatari rows on the GPU: the preset
  on Pong at growing batches until a call passes 20 s or a batch fails
  (out of memory), with the GPU's peak memory after each batch.
* `profile`: the preset's step at one batch under `jax.profiler`, its
  costliest device ops summarised into results.jsonl, and the trace and
  the step's optimized HLO in `$OUT/profile.tar.gz`.
* `ppo`: `jaxatari train pong --algo ppo` for the time left to it:
  frames/s and the return as it goes (`$OUT/ppo_metrics.jsonl`); a
  second `run --stages ppo` on the same warm machine resumes it.
* `frames`: raw emulated frames/s of `console.frame` (a shared board,
  no preprocessing; CuLE's figure is of this kind), drawn and not, in
  the accelerator's lowering, and the CPU's lowering at a small batch.
* `population`: 16 A2C members against one agent of 16x the envs on the
  preset (`benchmarks/population.py atari-cost`).
* `flags`: `frames` undrawn again, in a process whose XLA_FLAGS turn on
  CUDA-graph command buffers for while loops and conditionals
  (`COMMAND_BUFFERS`): whether they make the loops' predicates free,
  the CPU lowering's conds included.
* `others`: Breakout and Ms. Pac-Man at two batches.

Compiled programs go to JAX's persistent cache (`~/.cache/jaxatari/xla`),
so a second call on the same warm machine skips their compiles.

`python benchmarks/gpu_session.py run --tiny` runs the same stages at toy
sizes on any backend (a CPU check of the plan before a GPU is lent).
"""
from __future__ import annotations

import argparse
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
"""The `flags` stage's XLA flag: CUDA graphs with conditional nodes, so
that loop and cond predicates can stay on the device."""

STAGES = ("smoke", "throughput", "profile", "ppo", "frames", "population",
          "flags", "others")
SHARES = {"smoke": 0.12, "throughput": 0.2, "profile": 0.1, "ppo": 0.33,
          "frames": 0.1, "population": 0.05, "flags": 0.05, "others": 0.05}
"""Each stage's share of `--minutes` (a stage that ends early leaves its
time to the next)."""

SIZES = {
    "full": {"name": "full", "pong_batches": [4096, 32768, 262144],
             "other_batches": [4096, 65536], "steps": 4, "max_call": 20.0,
             "frame_batch": 65536, "cpu_lowering_batch": 4096,
             "profile_batch": 16384,
             "ppo_envs": 256, "ppo_frames": 20_000_000, "ppo_chunk": 5,
             "ppo_sets": ["num_minibatches=32"],
             "members": 16, "envs_each": 64},
    "tiny": {"name": "tiny", "pong_batches": [2, 4], "other_batches": [2],
             "steps": 1, "max_call": 20.0, "frame_batch": 2,
             "cpu_lowering_batch": 2, "profile_batch": 2,
             "ppo_envs": 4, "ppo_frames": 4 * 4 * 128, "ppo_chunk": 1,
             "ppo_sets": [],
             "members": 2, "envs_each": 1},
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
    minutes = args.minutes - (time.monotonic() - begin) / 60
    run_stages(args.stages, minutes, args.out, command,
               stage_environment(site))


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
    """Versions, devices, the preset's boot (on the host's CPU, as
    `jaxatari bench` boots; it fills the boot cache for later stages)
    and its first step's compile on the default device."""
    import platform
    import jax
    import jaxatari
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
    with jax.default_device(jax.devices("cpu")[0]):
        env, params = jaxatari.make_atari("pong", num_envs=2)
    booted = time.perf_counter() - begin
    params = jax.device_put(params, jax.devices()[0])
    key = jax.random.key(0)
    _, state = env.reset(key, params)
    step = jax.jit(env.step)
    begin = time.perf_counter()
    compiled = step.lower(key, state, jax.numpy.zeros((2,), "int32"),
                          params).compile()
    compile_s = time.perf_counter() - begin
    out = jax.block_until_ready(compiled(key, state, jax.numpy.zeros(
        (2,), "int32"), params))
    results.add({"make_atari_pong_s": round(booted, 1),
                 "first_step_compile_s": round(compile_s, 1),
                 "reward": out[2].tolist()})


def _sweep(results: Results, game: str, batches: list[int],
           size: dict[str, Any]) -> None:
    """`jaxatari bench`'s jaxatari rows for one game, with memory."""
    from jaxatari import bench
    env, params = bench.jaxatari_workload(game)

    def measure(batch: int) -> dict:
        try:
            row = bench.measure_jaxatari(env, params, game, batch,
                                         size["steps"], 3, 10.0)
        except Exception as error:   # out of memory, most likely; an
            # infinite time makes `sweep` skip the larger batches
            row = {"game": game, "batch": batch, "seconds_per_call":
                   float("inf"), "error": f"{type(error).__name__}: "
                   f"{str(error)[:400]}"}
        row.update(_memory())
        results.add(row)
        return row
    bench.sweep(measure, batches, size["max_call"])


def stage_throughput(results: Results, size: dict[str, Any],
                     seconds: float) -> None:
    """The preset on Pong at growing batches."""
    _sweep(results, "pong", size["pong_batches"], size)


def stage_others(results: Results, size: dict[str, Any],
               seconds: float) -> None:
    """The preset on Breakout and Ms. Pac-Man."""
    for game in ("breakout", "ms_pacman"):
        _sweep(results, game, size["other_batches"], size)


def stage_frames(results: Results, size: dict[str, Any],
                 seconds: float) -> None:
    """Raw emulated frames/s (`benchmarks/lowering.py frames`, a shared
    board): each lowering, drawn and not (undrawn only with
    `size["short"]`)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import lowering   # noqa: E402 (benchmarks/lowering.py)
    batch = size["frame_batch"]
    plan = [(batch, "accelerator", False), (batch, "accelerator", True),
            (size["cpu_lowering_batch"], "cpu", False)]
    for batch, variant, render in plan:
        if not (size.get("short") and render):
            results.add({**lowering.frames("pong", variant, batch, render, 3,
                                           shared_board=True), **_memory()})


def stage_flags(results: Results, size: dict[str, Any],
                seconds: float) -> None:
    """`stage_frames`, short, with XLA's command buffers on."""
    flags = f"{os.environ.get('XLA_FLAGS', '')} {COMMAND_BUFFERS}".strip()
    results.add({"xla_flags": flags})
    subprocess.run([sys.executable, str(pathlib.Path(__file__).resolve()),
                    "stage", "frames", "--out", str(results.path.parent),
                    "--seconds", str(int(seconds)), "--size", size["name"],
                    "--short"], env={**os.environ, "XLA_FLAGS": flags},
                   timeout=max(seconds - 5, 5), check=True)


def _top_ops(trace_dir: pathlib.Path, count: int = 30) -> list[dict]:
    """The costliest events of the trace's device planes (all planes when
    there is no device plane), by total time."""
    import collections
    from jax.profiler import ProfileData
    files = sorted(trace_dir.glob("**/*.xplane.pb"))
    data = ProfileData.from_file(str(files[-1]))
    total, calls = collections.Counter(), collections.Counter()
    planes = [p for p in data.planes if "/device:" in p.name] or list(
        data.planes)
    for plane in planes:
        for line in plane.lines:
            for event in line.events:
                name = (plane.name, line.name, event.name[:120])
                total[name] += event.duration_ns
                calls[name] += 1
    return [{"plane": p, "line": li, "op": op, "total_ms": ns / 1e6,
             "calls": calls[(p, li, op)]}
            for (p, li, op), ns in total.most_common(count)]


def stage_profile(results: Results, size: dict[str, Any],
                  seconds: float) -> None:
    """The preset's step under the profiler: a summary row per costly op,
    the trace and the optimized HLO in `profile.tar.gz`."""
    import jax
    from jaxatari import bench
    work = results.path.parent / "profile"
    shutil.rmtree(work, ignore_errors=True)
    env, params = bench.jaxatari_workload("pong")
    batch = size["profile_batch"]
    run, carry, compile_s = bench.rollout_program(env, params, batch, 1)
    (work / "hlo").mkdir(parents=True)
    (work / "hlo" / "preset_step.txt").write_text(run.as_text())
    carry[:] = jax.block_until_ready(run(*carry, params))[:2]
    jax.profiler.start_trace(str(work / "trace"))
    begin = time.perf_counter()
    for _ in range(2):
        carry[:] = jax.block_until_ready(run(*carry, params))[:2]
    elapsed = time.perf_counter() - begin
    jax.profiler.stop_trace()
    results.add({"batch": batch, "compile_s": round(compile_s, 1),
                 "seconds_per_step_traced": elapsed / 2})
    for row in _top_ops(work / "trace"):
        results.add(row)
    with tarfile.open(results.path.parent / "profile.tar.gz", "w:gz") as tar:
        tar.add(work, arcname="profile")
    shutil.rmtree(work)


def stage_ppo(results: Results, size: dict[str, Any],
              seconds: float) -> None:
    """PPO on Pong until its time is up, resumed from its last checkpoint
    when an earlier call on this machine ran it; its metrics come back as
    they are written (one chunk of updates at a time)."""
    out = results.path.parent
    run_dir = pathlib.Path("/tmp/jaxatari-gpu-ppo")
    resume = ["--resume"] if (run_dir / "record.json").exists() else []
    command = [sys.executable, "-m", "jaxatari.agents.run", "pong",
               "--algo", "ppo", "--num-envs", str(size["ppo_envs"]),
               "--frames", str(size["ppo_frames"]), "--out", str(run_dir),
               "--checkpoint-every", str(size["ppo_chunk"]),
               "--gif-steps", "0", "--no-progress", *resume] + [
                   arg for item in size["ppo_sets"] for arg in ("--set", item)]
    results.add({"command": " ".join(command[1:])})
    try:
        subprocess.run(command, timeout=max(seconds - 10, 5))
    except subprocess.TimeoutExpired:
        results.add({"stopped": "out of time"})
    for name, target in (("metrics.jsonl", "ppo_metrics.jsonl"),
                         ("record.json", "ppo_record.json")):
        if (run_dir / name).exists():
            shutil.copy(run_dir / name, out / target)


def stage_population(results: Results, size: dict[str, Any],
                     seconds: float) -> None:
    """16 A2C members against one agent of 16x the envs."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import population   # noqa: E402 (benchmarks/population.py)
    for row in population.atari_cost("pong", size["members"],
                                     size["envs_each"], 2, 2):
        results.add(row)


def main() -> None:
    top = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    verbs = top.add_subparsers(dest="verb", required=True)
    verbs.add_parser("prepare", help="download the wheels into .device/")
    go = verbs.add_parser("run", help="on the device: install, measure")
    go.add_argument("--minutes", type=float, default=8.0)
    go.add_argument("--out", type=pathlib.Path,
                    default=pathlib.Path(os.environ.get("OUT", "gpu-out")))
    go.add_argument("--stages", nargs="+", default=list(STAGES),
                    choices=STAGES)
    go.add_argument("--tiny", action="store_true",
                    help="toy sizes: a check of the plan on any backend")
    go.add_argument("--no-install", action="store_true")
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
