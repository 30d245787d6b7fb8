"""What a replayed reset costs (`jaxatari.reset_carry`), against a step.

    python benchmarks/reset_replay.py [--games kung_fu_master seaquest pong]
        [--batches 16 64] [--repeats 3]
        [--chunk 8]

For each game, the `make_atari` preset's batch: the seconds to compile its
step (`jit(vmap(env.step))`), a step's seconds where no console's episode
ends, and the seconds of the batch's auto-reset (`reset_after`) with every
console done, with one done and with none done. A game whose reset does
not depend on the console (Pong) copies a booted state either way; one
that replays it runs its reset (about 70 frames, the last two drawn): on
the CPU for the done consoles only, `reset_carry.REPLAY_CHUNK` at a time;
on an accelerator for the whole batch whenever any console is done. One
JSON line per game, with `--batches` a line per game and batch.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import jax
import jax.numpy as jnp


def _seconds(call, repeats: int) -> float:
    """The median of `repeats` timed calls (after one untimed)."""
    jax.block_until_ready(call())
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(call())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(game: str, batch: int, repeats: int) -> dict:
    """One game's line (see the module's docstring)."""
    import jaxatari
    vec, params = jaxatari.make_atari(game, num_envs=batch)
    env = vec.env
    keys = jax.random.split(jax.random.key(0), batch)
    _, states = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
    actions = jnp.zeros(batch, jnp.int32)
    step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
    start = time.perf_counter()
    jax.block_until_ready(step(keys, states, actions, params))
    compile_seconds = time.perf_counter() - start
    reset = jax.jit(jax.vmap(env.reset_after, in_axes=(0, 0, None, 0)))
    done, none = jnp.ones(batch, bool), jnp.zeros(batch, bool)
    one = none.at[batch // 2].set(True)
    from jaxatari import reset_carry
    line = {"game": game, "batch": batch,
            "replay_chunk": reset_carry.REPLAY_CHUNK,
            "replays": params.reset_scripts is not None,
            "step_compile_s": round(compile_seconds, 1),
            "step_s": _seconds(lambda: step(keys, states, actions, params),
                               repeats),
            "reset_all_done_s": _seconds(
                lambda: reset(keys, states, params, done), repeats),
            "reset_one_done_s": _seconds(
                lambda: reset(keys, states, params, one), repeats),
            "reset_none_done_s": _seconds(
                lambda: reset(keys, states, params, none), repeats),
            "backend": jax.default_backend()}
    line["replay_in_steps"] = round(line["reset_all_done_s"]
                                    / line["step_s"], 1)
    line["one_replay_in_steps"] = round(line["reset_one_done_s"]
                                        / line["step_s"], 2)
    return line


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+",
                        default=["kung_fu_master", "seaquest", "pong"])
    parser.add_argument("--batches", type=int, nargs="+", default=[64])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=None,
                        help="reset_carry.REPLAY_CHUNK to measure with "
                             "(default: the module's)")
    args = parser.parse_args(argv)
    if args.chunk is not None:
        from jaxatari import reset_carry
        reset_carry.REPLAY_CHUNK = args.chunk
    for game in args.games:
        for batch in args.batches:
            print(json.dumps(measure(game, batch, args.repeats)),
                  flush=True)


if __name__ == "__main__":
    main()
