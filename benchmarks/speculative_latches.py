"""The CPU lowering's collision latches: the speculative step against the
plan, on the preset (issue #18).

`bus.SPECULATIVE_LATCHES` chooses, when a step is traced, whether the CPU's
lowering runs each instruction speculatively and again where a console
read a collision latch (True, the default), or plans it and sets the
latches first (False, as the accelerator's lowering does). Both are
traced, compiled and timed in one process, alternately, on the same
consoles and actions: `make_atari(GAME, num_envs=N)`, after its reset and
`--warm` steps of random actions (played once, before either way is
traced). The envs should be in play. Near the reset a batch's consoles
run closer to in step, so their latch reads (Pong: 5 a console a frame)
fall at fewer of the loop's instructions than in play, where each env's
own actions put its console out of step. Warm states must be played with
a key per step: states played with one key for every step gave timings
that play does not (BENCHMARKS.md, "The latches and pixels re-measured
in play").

    python benchmarks/speculative_latches.py --games pong breakout --envs 256

Prints one JSON line per (game, envs, way, round): trace and lowering,
compile, the timed steps and their median, and each step's observation
summed (the same both ways).
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
from jaxatari import bus


def in_play(game: str, envs: int, steps: int, warm: int = 0) -> tuple:
    """`make_atari(game, num_envs=envs)` after its reset and `warm` steps
    of random actions, a key per step: `(env, params, key, state,
    actions)`, with `steps` random actions to time."""
    env, params = jaxatari.make_atari(game, num_envs=envs)
    key = jax.random.key(0)
    _, start = env.reset(key, params)
    rng = np.random.default_rng(0)
    random_actions = lambda: jnp.asarray(  # noqa: E731
        rng.integers(0, env.num_actions, envs), jnp.int32)
    if warm:
        play = jax.jit(env.step)
        for k in range(warm):
            _, start, *_ = play(jax.random.key(k + 1), start,
                                random_actions(), params)
    actions = [random_actions() for _ in range(steps)]
    return env, params, key, start, actions


def measure(game: str, envs: int, rounds: int, steps: int,
            warm: int = 0) -> list[dict]:
    """Rows for `rounds` alternations of the two ways on one preset,
    `warm` steps into play."""
    return alternate(game, envs, rounds, steps, warm, bus,
                     "SPECULATIVE_LATCHES", "speculative", (True, False))


def alternate(game: str, envs: int, rounds: int, steps: int, warm: int,
              module, constant: str, label: str, values) -> list[dict]:
    """Rows for `rounds` passes over `values` of `module.constant` (read
    while a step is traced) on one preset, `warm` steps into play, each
    row printed as it comes; the constant is put back after."""
    env, params, key, start, actions = in_play(game, envs, steps, warm)
    rows, default = [], getattr(module, constant)
    try:
        for round_ in range(rounds):
            for value in values:
                setattr(module, constant, value)
                jax.clear_caches()   # the constant is read while tracing
                rows.append({"game": game, "envs": envs, "round": round_,
                             "warm": warm, label: value,
                             **_timed(env, params, key, start, actions)})
                print(json.dumps(rows[-1]), flush=True)
    finally:
        setattr(module, constant, default)
    return rows


def _timed(env, params, key, state, actions) -> dict:
    """The step traced, compiled and run over `actions`: seconds."""
    begin = time.perf_counter()
    lowered = jax.jit(env.step).lower(key, state, actions[0], params)
    traced = time.perf_counter()
    compiled = lowered.compile()
    done = time.perf_counter()
    times, sums = [], []
    for action in actions:
        start = time.perf_counter()
        obs, state, *_ = compiled(key, state, action, params)
        jax.block_until_ready(obs)
        times.append(time.perf_counter() - start)
        sums.append(int(jnp.sum(obs)))
    return {"trace_lower_s": round(traced - begin, 1),
            "compile_s": round(done - traced, 1),
            "step_s": [round(t, 3) for t in times],
            "median_step_s": round(statistics.median(times), 3),
            "obs_sums": sums}


def in_play_arguments(description: str) -> argparse.ArgumentParser:
    """A parser of the games, batches, rounds, timed steps and warm steps
    that `alternate` takes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--games", nargs="+", default=["pong", "breakout",
                                                       "ms_pacman"])
    parser.add_argument("--envs", type=int, nargs="+", default=[256])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--warm", type=int, default=40,
                        help="steps played before the timed ones")
    return parser


def main() -> None:
    args = in_play_arguments(__doc__.split("\n")[0]).parse_args()
    for game in args.games:
        for envs in args.envs:
            measure(game, envs, args.rounds, args.steps, args.warm)


if __name__ == "__main__":
    main()
