"""The preset's auto-reset, for the batch at once or env by env, timed.

`VecEnv.step` makes a jaxatari env's auto-reset apart from its steps: in
the CPU's lowering only for the done envs, a chunk at a time, and not at
all on a step where none is done. Before, each env's own `step` was
vmapped, which resets every env of the batch, masked. This times both on
the same states, in one process, alternating: the preset's step from its
consoles after `--in-play` random steps, with 0, 1 and 8 envs made done
(their state marked terminal, so that the step ends their episodes).

Prints one JSON line per game: the median seconds a step of each way
(`per_env_K`, `batch_K` with K envs done) and the speed-up.

Usage: python benchmarks/auto_reset.py --games pong breakout --envs 256
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxatari
from jaxatari import environment

DONE_COUNTS = (0, 1, 8)


def _ended(state, count: int):
    """`state` with its first `count` envs' episodes marked over."""
    def end(x):
        if isinstance(x, environment.EnvState):
            return x.replace(terminal=x.terminal.at[:count].set(True))
        return x
    return jax.tree.map(end, state, is_leaf=lambda x: isinstance(
        x, environment.EnvState))


def measure(game: str, envs: int, rounds: int, in_play: int) -> dict:
    """Median seconds a preset step, reset per env against per batch."""
    venv, params = jaxatari.make_atari(game, num_envs=envs)
    _, state = jax.jit(venv.reset)(jax.random.key(0), params)
    ways = {"batch": jax.jit(venv.step),
            "per_env": jax.jit(lambda key, *args: jax.vmap(
                venv.env.step, in_axes=(0, 0, 0, None))(
                    jax.random.split(key, envs), *args))}
    rng = np.random.default_rng(0)
    count = venv.action_space(params).n
    for i in range(in_play):
        _, state, *_ = ways["batch"](jax.random.key(i + 1), state, jnp.asarray(
            rng.integers(0, count, envs), jnp.int32), params)
    actions = jnp.asarray(rng.integers(0, count, envs), jnp.int32)
    states = {k: _ended(state, k) for k in DONE_COUNTS}
    runs = [(way, k) for way in ways for k in DONE_COUNTS]
    outputs = {}
    for way, k in runs:   # compile, and check the ways agree
        outputs[way, k] = jax.block_until_ready(ways[way](
            jax.random.key(9), states[k], actions, params))
        assert int(outputs[way, k][3].sum()) == k, (way, k)
    for k in DONE_COUNTS:
        for a, b in zip(jax.tree.leaves(outputs["batch", k]),
                        jax.tree.leaves(outputs["per_env", k])):
            np.testing.assert_array_equal(a, b)
    times = {run: [] for run in runs}
    for r in range(rounds):
        for way, k in (runs if r % 2 else runs[::-1]):
            begin = time.perf_counter()
            jax.block_until_ready(ways[way](jax.random.key(9), states[k],
                                            actions, params))
            times[way, k].append(time.perf_counter() - begin)
    row = {"game": game, "envs": envs, "rounds": rounds, "in_play": in_play,
           "device": jax.devices()[0].device_kind}
    for (way, k), values in times.items():
        row[f"{way}_{k}"] = round(statistics.median(values), 4)
    for k in DONE_COUNTS:
        row[f"speedup_{k}"] = round(row[f"per_env_{k}"] / row[f"batch_{k}"],
                                    3)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", nargs="+", default=["pong"])
    parser.add_argument("--envs", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--in-play", type=int, default=40)
    args = parser.parse_args()
    for game in args.games:
        print(json.dumps(measure(game, args.envs, args.rounds,
                                 args.in_play)), flush=True)


if __name__ == "__main__":
    main()
