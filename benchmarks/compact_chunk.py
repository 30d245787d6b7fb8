"""Seconds per preset step against how many consoles a compacted TIA draw
gathers (`tia_gather.compacted_size`, the CPU's lowering).

Workload: `jit(make_atari(game, num_envs=N).step)` with seeded random
actions, from the preset's reset (its NOOP starts put the consoles out of
step, as in training); `--warm` steps first, then the median of
`--repeats` timed steps. Each chunk runs in a process of its own, so
that no jit cache keeps another chunk's program: the chunk is a
fraction of the batch in sixteenths (`tia_gather.COMPACT_SIXTEENTHS`) (`--sixteenths 6` was the rule until
2026-11-28, 3 is today's).

Prints one JSON line per (game, sixteenths).

Usage: XLA_FLAGS=--xla_force_host_platform_device_count=1 \\
    python benchmarks/compact_chunk.py --games pong --envs 256 \\
    --sixteenths 6 3
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def one(game: str, envs: int, sixteenths: int, warm: int,
        repeats: int) -> dict:
    """Time the preset's step with chunks of `sixteenths`/16 of the batch."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxatari
    from jaxatari import tia_gather

    tia_gather.COMPACT_SIXTEENTHS = sixteenths   # read while tracing the step
    env, params = jaxatari.make_atari(game, num_envs=envs)
    _, state = env.reset(jax.random.key(0), params)
    step = jax.jit(env.step)
    rng = np.random.default_rng(0)
    key = jax.random.key(1)
    seconds = []
    for k in range(warm + repeats):
        action = jnp.asarray(rng.integers(0, len(env.action_set), envs),
                             jnp.int32)
        start = time.perf_counter()
        obs, state, *_ = step(key, state, action, params)
        jax.block_until_ready(obs)
        if k >= warm:
            seconds.append(time.perf_counter() - start)
    return {"measure": "preset_step", "game": game, "envs": envs,
            "sixteenths": sixteenths, "chunk": tia_gather.compacted_size(envs),
            "seconds_per_step": statistics.median(seconds),
            "steps": [round(s, 3) for s in seconds],
            "backend": jax.default_backend(),
            "devices": jax.device_count()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", nargs="+", default=["pong"])
    parser.add_argument("--envs", type=int, default=256)
    parser.add_argument("--sixteenths", type=int, nargs="+", default=[6, 3])
    parser.add_argument("--warm", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--one", action="store_true",
                        help="run one (game, sixteenths) in this process")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.games[0], args.envs, args.sixteenths[0],
                             args.warm, args.repeats)), flush=True)
        return
    for game in args.games:
        for sixteenths in args.sixteenths:
            subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--one",
                 "--games", game, "--envs", str(args.envs),
                 "--sixteenths", str(sixteenths), "--warm", str(args.warm),
                 "--repeats", str(args.repeats)], check=True)


if __name__ == "__main__":
    main()
