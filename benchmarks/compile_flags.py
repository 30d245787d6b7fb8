"""What an XLA:CPU flag does to the preset step's compile and run.

The cold test suite is mostly XLA compiling (BENCHMARKS.md, "The test
suite from a cold start"), and so is a user's first step. This compiles
`jaxatari.make_atari(GAME, num_envs=N)`'s `step` (the CPU's lowering)
with XLA's defaults and under each set of extra `XLA_FLAGS`, in a process of its own held to
one core and one XLA device with the persistent cache off, and times the
compile and the median of a few steps. Two processes run at a time, one
a core, and swap cores in the next round.

    python benchmarks/compile_flags.py --game pong --envs 64 --rounds 2 \\
        --flag=--xla_disable_hlo_passes=while-loop-invariant-code-motion

Prints one JSON line a (flags, round): trace and lowering seconds,
compile seconds, the median step in seconds, and the sum of the last
step's observations (equal across flag sets where the bits are).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pinned   # noqa: E402 (benchmarks/pinned.py)

STEPS = 3
"""Steps timed after the first call, unless `--steps` says; the median is
reported."""


def measure(game: str, envs: int, steps: int = STEPS) -> dict:
    """Here: trace and lower, compile, then time `steps` steps."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxatari
    env, params = jaxatari.make_atari(game, num_envs=envs)
    key = jax.random.key(0)
    _, state = env.reset(key, params)
    actions = jnp.zeros((envs,), jnp.int32)
    begin = time.perf_counter()
    lowered = jax.jit(env.step).lower(key, state, actions, params)
    lowered_at = time.perf_counter()
    step = lowered.compile()
    compiled_at = time.perf_counter()
    out = jax.block_until_ready(step(key, state, actions, params))
    seconds = []
    for _ in range(steps):
        start = time.perf_counter()
        out = jax.block_until_ready(step(key, out[1], actions, params))
        seconds.append(time.perf_counter() - start)
    return {"trace_lower_s": round(lowered_at - begin, 2),
            "compile_s": round(compiled_at - lowered_at, 2),
            "step_s": round(statistics.median(seconds), 4),
            # the same under every flag set when the bits are
            "last_observation_sum": int(np.asarray(out[0], np.int64).sum())}


def _child_environment(flags: str) -> dict[str, str]:
    env = dict(os.environ)
    env["XLA_FLAGS"] = " ".join(
        ["--xla_force_host_platform_device_count=1", flags]).strip()
    env["JAX_ENABLE_COMPILATION_CACHE"] = "false"
    env.setdefault("JAXATARI_LOWERING", "cpu")
    return env


def _start(flags: str, core: int, args: argparse.Namespace):
    command = [sys.executable, __file__, "--child", "--game", args.game,
               "--envs", str(args.envs), "--steps", str(args.steps)]
    return pinned.start(command, _child_environment(flags), core)


def main(argv: list[str] | None = None) -> None:
    """Parse the command line; run the children (or be one)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="pong")
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=STEPS,
                        help="steps timed after the first call")
    parser.add_argument("--flag", action="append", default=[],
                        metavar="=FLAGS", help="a set of extra XLA_FLAGS, "
                        "given as --flag=... (XLA's defaults always run "
                        "first)")
    parser.add_argument("--child", action="store_true",
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.game, args.envs, args.steps)))
        return
    flag_sets = [""] + args.flag
    cores = pinned.cores()[:2]
    for round_ in range(args.rounds):
        for flags, _, failed, out in pinned.side_by_side(
                flag_sets, lambda flags, core: _start(flags, core, args),
                round_, cores, len(cores)):
            if failed:
                raise SystemExit(f"child for {flags!r} failed")
            print(json.dumps({
                "benchmark": "compile_flags", "game": args.game,
                "envs": args.envs, "flags": flags, "round": round_,
                **json.loads(out.strip().splitlines()[-1])}), flush=True)


if __name__ == "__main__":
    main()
