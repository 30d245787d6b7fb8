"""Seconds per preset step against the largest batch whose frame loop is
one XLA:CPU kernel (`updates.KERNEL_MAX_BATCH`).

A batch of at most that many consoles updates one console after another
and draws a rendered frame's TIA writes for the writing consoles, one
after another (`tia_gather.write_one_by_one`); its frame loop holds no
scatter, so XLA:CPU compiles each loop into one kernel. A larger batch
gathers the writing consoles (`tia_gather.compacted_size`) and scatters them
back, and its loops run as thunks over whole-batch arrays.

Workload: `jit(make_atari(game, num_envs=N).step)` with seeded random
actions from the preset's reset; 2 warm-up steps, then the median of
`--repeats`. Each (limit, game, envs) runs in a process of its own held to
one core and one XLA device; two limits run at once, one a core, and swap
cores in the next round. The first call's seconds (trace, compile and one
step) are reported too.

Prints one JSON line per (game, envs, limit, round), with the sum of
every observation (equal across limits where the bits are).

Usage: python benchmarks/kernel_batch.py --games pong --envs 16 \\
    --limits 8 16 --rounds 2
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

WARM = 2


def one(game: str, envs: int, limit: int, repeats: int) -> dict:
    """Here: time the preset's step with `KERNEL_MAX_BATCH = limit`."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxatari
    from jaxatari import tia_gather, updates

    updates.KERNEL_MAX_BATCH = limit   # both read while tracing the step
    tia_gather.COMPACT_MIN_BATCH = limit + 1
    env, params = jaxatari.make_atari(game, num_envs=envs)
    _, state = env.reset(jax.random.key(0), params)
    step = jax.jit(env.step)
    rng = np.random.default_rng(0)
    key = jax.random.key(1)
    seconds, total = [], 0
    for k in range(WARM + repeats):
        action = jnp.asarray(rng.integers(0, len(env.action_set), envs),
                             jnp.int32)
        start = time.perf_counter()
        obs, state, *_ = step(key, state, action, params)
        jax.block_until_ready(obs)
        seconds.append(time.perf_counter() - start)
        total += int(np.asarray(obs, np.int64).sum())
    return {"benchmark": "kernel_batch", "game": game, "envs": envs,
            "limit": limit, "kernel": envs <= limit,
            "first_call_s": round(seconds[0], 1),
            "step_s": round(statistics.median(seconds[WARM:]), 4),
            "observation_sum": total}


def _pair(game: str, envs: int, limits: list[int], repeats: int,
          round_: int) -> None:
    """The limits at once (as many as there are cores), one core each,
    the cores rotated every round."""
    env = dict(os.environ)
    env["XLA_FLAGS"] = " ".join(filter(None, [
        env.get("XLA_FLAGS", ""),
        "--xla_force_host_platform_device_count=1"]))

    def start(limit: int, core: int):
        return pinned.start(
            [sys.executable, os.path.abspath(__file__), "--one", "--games",
             game, "--envs", str(envs), "--limits", str(limit),
             "--repeats", str(repeats)], env, core)
    cores = pinned.cores()
    for limit, _, failed, out in pinned.side_by_side(
            limits, start, round_, cores, len(cores)):
        if failed:
            raise SystemExit(f"{game} at {envs} envs, limit {limit} failed")
        row = json.loads(out.splitlines()[-1])
        print(json.dumps(row | {"round": round_}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", nargs="+", default=["pong"])
    parser.add_argument("--envs", type=int, nargs="+", default=[16])
    parser.add_argument("--limits", type=int, nargs="+", default=[8, 16])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--one", action="store_true",
                        help="run one (game, envs, limit) in this process")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.games[0], args.envs[0], args.limits[0],
                             args.repeats)), flush=True)
        return
    for game in args.games:
        for envs in args.envs:
            for round_ in range(args.rounds):
                _pair(game, envs, args.limits, args.repeats, round_)


if __name__ == "__main__":
    main()
