"""The preset's step at two commits, timed in one sitting (issue #18).

Issue #18's CPU target is a multiple of the preset's rate on 2026-11-23
(`jaxatari bench` then: 43 to 89 env steps/s). The machine's speed
drifts from day to day (1.3x to 1.9x for ale-py between two runs), so a
rate is compared only with one measured beside it. This times
`jaxatari.make_atari(GAME, num_envs=N)`'s jitted `step`, the public API
both commits share, with each commit's code in processes of its own,
each process held to one core and one XLA device. Two processes run at a
time, one a core; in the next round they swap cores.

    python benchmarks/before_after.py --trees /tmp/old . \\
        --games pong breakout ms_pacman --envs 256 --rounds 2

(`git worktree add /tmp/old COMMIT` gives an old commit's tree.) Prints
one JSON line a (game, tree, round): the commit, the first call's seconds
(trace and compile; a later round may find them in the compilation
cache) and the median of the timed steps, then one line a game with the
ratio of the trees' medians, the last tree's over the first's.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pinned   # noqa: E402 (benchmarks/pinned.py)

WARMUP = 3
"""Steps from the preset's reset before any is timed: the NOOP starts
leave the consoles at different points of their frames."""


def measure(game: str, envs: int, steps: int) -> dict:
    """Here, with whatever `jaxatari` is on the path: the first call's
    seconds and the median of `steps` timed steps."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxatari
    env, params = jaxatari.make_atari(game, num_envs=envs)
    _, state = env.reset(jax.random.key(0), params)
    step = jax.jit(env.step)
    actions_count = len(env.action_set)   # both commits have it
    rng = np.random.default_rng(0)
    key = jax.random.key(1)
    seconds = []
    for k in range(WARMUP + steps):
        actions = jnp.asarray(rng.integers(0, actions_count, envs),
                              jnp.int32)
        begin = time.perf_counter()
        out = step(jax.random.fold_in(key, k), state, actions, params)
        jax.block_until_ready(out)
        seconds.append(time.perf_counter() - begin)
        state = out[1]
    median = statistics.median(seconds[WARMUP:])
    return {"first_call_s": round(seconds[0], 2),
            "seconds_per_step": round(median, 4),
            "env_steps_per_s": round(envs / median, 1)}


def _commit(tree: pathlib.Path) -> str:
    return subprocess.run(["git", "-C", str(tree), "rev-parse", "--short",
                           "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def _spawn(tree: pathlib.Path, game: str, envs: int, steps: int,
           core: int, cache: pathlib.Path) -> subprocess.Popen:
    """A process timing `tree`'s preset on `core`, with a boot cache of
    its tree's own (jaxatari's boot cache keys on its version)."""
    env = {**os.environ, "PYTHONPATH": str(tree),
           "XDG_CACHE_HOME": str(cache),
           "XLA_FLAGS": "--xla_force_host_platform_device_count=1"}
    command = [sys.executable, __file__, "--child", game, str(envs),
               str(steps)]
    return pinned.start(command, env, core, cwd=tree)


def compare(trees: list[pathlib.Path], games: list[str], envs: int,
            rounds: int, steps: int, cache_root: pathlib.Path) -> None:
    """Prints the rows; the trees of a round run at once, a core each."""
    cores = pinned.cores()
    commits = [_commit(tree) for tree in trees]
    for game in games:
        medians = [[] for _ in trees]

        def start(k: int, core: int):
            cache = cache_root / commits[k]
            cache.mkdir(parents=True, exist_ok=True)
            return _spawn(trees[k], game, envs, steps, core, cache)
        for round_ in range(rounds):
            for k, core, failed, out in pinned.side_by_side(
                    range(len(trees)), start, round_, cores, len(trees)):
                if failed:
                    raise RuntimeError(f"{trees[k]} on {game} failed")
                row = {"game": game, "envs": envs, "round": round_,
                       "tree": str(trees[k]), "commit": commits[k],
                       "core": core, **json.loads(out.splitlines()[-1])}
                medians[k].append(row["seconds_per_step"])
                print(json.dumps(row), flush=True)
        first, last = (statistics.median(m) for m in (medians[0],
                                                      medians[-1]))
        print(json.dumps({"game": game, "envs": envs, "speedup":
                          round(first / last, 2), "commits": commits}),
              flush=True)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        game, envs, steps = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        print(json.dumps(measure(game, envs, steps)), flush=True)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trees", nargs="+", type=pathlib.Path,
                        required=True, help="repository roots, before first")
    parser.add_argument("--games", nargs="+", default=["pong"])
    parser.add_argument("--envs", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5,
                        help="timed steps a process (after the warm-up)")
    parser.add_argument("--cache-root", type=pathlib.Path,
                        default=pathlib.Path("/tmp/jaxatari-before-after"))
    args = parser.parse_args()
    compare([t.resolve() for t in args.trees], args.games, args.envs,
            args.rounds, args.steps, args.cache_root)


if __name__ == "__main__":
    main()
