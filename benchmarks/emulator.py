"""Emulated frames per second: jaxatari's vmapped env against ale-py.

Workload: one game (Pong by default), `ALE/<Game>-v5` settings (frameskip 4,
sticky actions 0.25, RGB observations), uniformly random actions. In the
same run, for scale:

* `ale-py ALEInterface`: one emulator on one core, `act` four times per
  step, RGB screen read once per step;
* `ale-py AtariVectorEnv`: ale-py's C++ vector env on all cores, batch =
  cores x 4, RGB 210x160 observations, no frame stacking, no max-pooling,
  no noops (the closest to what jaxatari computes); needs gymnasium
  (`pip install -e ".[bench]"`).

jaxatari runs `jit(vmap(env.step))` inside a `lax.scan` of `--steps`
steps, the batch split over all devices, each running its share as a
program of its own (`jaxatari.sharding`; on the CPU: one XLA host device
per core, unless XLA_FLAGS is set). A figure is the median of `--repeats`
timed calls of a program compiled ahead of time (fewer when one call takes
over `--budget` seconds). frames/s counts emulated frames (steps x 4).

Prints one JSON line per measurement. With `--write` the table between the
`<!-- emulator -->` markers of BENCHMARKS.md is replaced.

Usage: python benchmarks/emulator.py [--game pong] [--batches 1 16 256 ...]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import sys
import time

if "XLA_FLAGS" not in os.environ:  # must happen before JAX starts
    os.environ["XLA_FLAGS"] = (
        f"--xla_force_host_platform_device_count={os.cpu_count() or 1}")

import jax  # noqa: E402
import numpy as np  # noqa: E402

import jaxatari  # noqa: E402
from jaxatari import _config, bench  # noqa: E402

FRAMESKIP = 4
MARKER = "<!-- emulator -->"


def measure_ale(game: str, steps: int, repeats: int) -> dict:
    """One ALEInterface on one core, v5 settings, RGB screen per step."""
    from ale_py import ALEInterface, LoggerMode, roms
    ALEInterface.setLoggerMode(LoggerMode.Error)
    ale = ALEInterface()
    ale.setFloat("repeat_action_probability", 0.25)
    ale.loadROM(str(roms.get_rom_path(game)))
    actions = ale.getMinimalActionSet()
    rng = np.random.default_rng(0)

    def call():
        for _ in range(steps):
            action = actions[rng.integers(len(actions))]
            for _ in range(FRAMESKIP):
                ale.act(action)
            ale.getScreenRGB()
            if ale.game_over():
                ale.reset_game()
    times = bench.timed(call, repeats, float("inf"))
    return dict(system="ale-py ALEInterface", backend="cpu", devices=1,
                batch=1, frames_per_s=steps * FRAMESKIP /
                statistics.median(times))


def measure_ale_vector(game: str, steps: int, repeats: int) -> dict:
    """ale-py's AtariVectorEnv on all cores, raw RGB frames."""
    try:
        from ale_py.vector_env import AtariVectorEnv
    except ImportError:
        return dict(system="ale-py AtariVectorEnv", skipped="needs "
                    "gymnasium: pip install -e '.[bench]'")
    cores = os.cpu_count() or 1
    envs = AtariVectorEnv(
        game, num_envs=cores * 4, num_threads=cores,
        repeat_action_probability=0.25, img_height=210, img_width=160,
        grayscale=False, stack_num=1, maxpool=False, noop_max=0,
        reward_clipping=False, use_fire_reset=False)
    envs.reset(seed=0)
    rng = np.random.default_rng(0)

    def call():
        for _ in range(steps):
            envs.step(rng.integers(envs.single_action_space.n,
                                   size=envs.num_envs))
    times = bench.timed(call, repeats, float("inf"))
    envs.close()
    return dict(system="ale-py AtariVectorEnv", backend="cpu",
                devices=cores, batch=cores * 4,
                frames_per_s=envs.num_envs * steps * FRAMESKIP /
                statistics.median(times))


def boot(game: str):
    """`jaxatari.make` on the host CPU: a single console's boot is latency
    bound, far faster there than on an accelerator (`bench.measure_jaxatari`
    places the params on the devices it uses)."""
    with jax.default_device(jax.devices("cpu")[0]):
        return jaxatari.make(game)


def markdown(results: list[dict], game: str, command: str) -> str:
    """The BENCHMARKS.md section for one run."""
    best_ale = max((r["frames_per_s"] for r in results
                    if r["system"].startswith("ale-py")
                    and "frames_per_s" in r), default=None)
    lines = [f"Command: `{command}` ({time.strftime('%Y-%m-%d')}), game "
             f"`{game}`, on {platform.node() or 'this machine'} "
             f"({os.cpu_count()} cores, backend "
             f"{jax.default_backend()}).", "",
             "| system | devices | batch | frames/s | x best ale-py |",
             "|---|---:|---:|---:|---:|"]
    for r in results:
        if "frames_per_s" not in r:
            lines.append(f"| {r['system']} | | | skipped: {r['skipped']} | |")
            continue
        ratio = (f"{r['frames_per_s'] / best_ale:.3f}" if best_ale else "")
        lines.append(f"| {r['system']} | {r['devices']} | {r['batch']:,} | "
                     f"{r['frames_per_s']:,.0f} | {ratio} |")
    lines += ["", "Raw output:", "", "```"]
    lines += [json.dumps(r) for r in results] + ["```"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="pong")
    parser.add_argument("--batches", type=int, nargs="+",
                        default=[1, 4, 16, 64, 256, 1024, 4096, 16384])
    parser.add_argument("--steps", type=int, default=4,
                        help="env steps per timed jaxatari call")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--budget", type=float, default=60.0,
                        help="seconds of timed calls per batch size, at most")
    parser.add_argument("--skip-ale", action="store_true")
    parser.add_argument("--write", type=pathlib.Path, default=None,
                        help="BENCHMARKS.md to write the table into")
    args = parser.parse_args()
    _config.enable_compilation_cache()
    results = []
    if not args.skip_ale:
        results.append(measure_ale(args.game, 500, args.repeats))
        results.append(measure_ale_vector(args.game, 100, args.repeats))
        for r in results:
            print(json.dumps(r), flush=True)
    command = " ".join(["python benchmarks/emulator.py", *sys.argv[1:]])
    env, params = boot(args.game)
    for batch in args.batches:
        results.append(bench.measure_jaxatari(
            env, params, args.game, batch, args.steps, args.repeats,
            args.budget))
        print(json.dumps(results[-1]), flush=True)
        if args.write:  # after every batch: a long run stopped keeps its rows
            bench.write_section(args.write,
                                markdown(results, args.game, command),
                                MARKER, "Emulator: `benchmarks/emulator.py`")


if __name__ == "__main__":
    main()
