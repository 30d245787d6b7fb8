"""The preset's steps with the plain kernel in the loop, against the CPU's.

`make_atari`'s envs play seeded random actions (auto-resets included)
twice in one process: once in the CPU's lowering, which the suite and
PARITY.md check against ALE, and once in the accelerator's lowering with
the plain kernel (`jaxatari.plain_kernel`) run in Pallas's interpreter,
the GPU's program but for Triton. Every observation, reward, done and
lives count of every step, and the final state, must be equal bit for
bit. It prints one JSON line per game: the leaves that differ (none, if
exact), the episodes ended, and the instructions the kernel ran (so a
loop that never took the kernel cannot pass unseen).

    python benchmarks/kernel_steps.py --games pong breakout --steps 100 250

The interpreter is slow: about 2 minutes for 100 Pong steps of 8 envs on
2 cores, a quarter of it compiling.
"""
from __future__ import annotations

import argparse
import json
import time
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari import _config, lowering, plain_kernel, wrappers


def rollout_program(game: str, envs: int, steps: int):
    """A function of (key, params) playing `steps` random steps of the
    preset's `envs` envs; returns the final state and, per step, the
    observations, rewards, dones and lives. Also returns the params."""
    env, params = wrappers.make_atari(game, envs)
    count = len(env.action_set)

    def rollout(key: jax.Array, params: Any):
        _, state = env.reset(key, params)

        def body(state, key):
            action_key, step_key = jax.random.split(key)
            action = jax.random.randint(action_key, (envs,), 0, count)
            obs, state, reward, done, info = env.step(step_key, state,
                                                      action, params)
            return state, (obs, reward, done, info["lives"])
        return jax.lax.scan(body, state, jax.random.split(
            jax.random.key(1), steps))
    return rollout, params


KERNEL_INSTRUCTIONS: list[int] = []
"""What each call of the plain kernel ran (all consoles), once `main` has
wrapped it (`counting`). One list for the process: the frame program is
traced once for every game of one board shape (Pong's and Breakout's 2K
carts share it), with the wrapper of its first trace."""


def counting(run: Callable[..., Any], counts: list[int]
             ) -> Callable[..., Any]:
    """`run` (`plain_kernel.run`) that also appends, at each call, the
    instructions it ran (all consoles) to `counts`; `tests/
    test_plain_kernel.py` counts with it too."""
    def counted(board, inputs, state, ready, count, *args, **kwargs):
        after = run(board, inputs, state, ready, count, *args, **kwargs)
        jax.debug.callback(lambda n: counts.append(int(n)),
                           jnp.sum(after[1] - count))
        return after
    return counted


def compare(game: str, envs: int, steps: int) -> dict[str, Any]:
    """One game's rollout both ways; the figures `main` prints."""
    rollout, params = rollout_program(game, envs, steps)
    before = sum(KERNEL_INSTRUCTIONS)
    out, seconds = {}, {}
    for name, mode in (("cpu", None), ("kernel", "interpret")):
        start = time.perf_counter()
        variant = lowering.CPU if mode is None else lowering.ACCELERATOR
        with lowering.forced(variant), \
                lowering.plain_kernel(mode or "off"):
            out[name] = jax.device_get(jax.jit(rollout)(jax.random.key(0),
                                                        params))
        seconds[name] = round(time.perf_counter() - start, 1)
    differing = [jax.tree_util.keystr(path) for path, x, y in zip(
        jax.tree_util.tree_leaves_with_path(out["cpu"]),
        jax.tree.leaves(out["cpu"]), jax.tree.leaves(out["kernel"]))
        if not np.array_equal(x, y)]
    _, (_, reward, done, _) = out["cpu"]
    return {"game": game, "envs": envs, "steps": steps,
            "differing_leaves": differing,
            "episodes_ended": int(np.sum(done)),
            "reward_sum": float(np.sum(reward)),
            "kernel_instructions": sum(KERNEL_INSTRUCTIONS) - before,
            "seconds": seconds, "backend": jax.default_backend()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", nargs="+", default=["pong"])
    parser.add_argument("--steps", nargs="+", type=int, default=[100],
                        help="steps per game (one value: every game)")
    parser.add_argument("--envs", type=int, default=8)
    args = parser.parse_args()
    if len(args.steps) not in (1, len(args.games)):
        parser.error("--steps takes one value, or one per game")
    steps = args.steps * len(args.games) if len(args.steps) == 1 \
        else args.steps
    _config.enable_compilation_cache()
    plain_kernel.run = counting(plain_kernel.run, KERNEL_INSTRUCTIONS)
    for game, count in zip(args.games, steps):
        print(json.dumps(compare(game, args.envs, count)), flush=True)


if __name__ == "__main__":
    main()
