"""Seconds per frame of a batch that mixes games, with and without the
compacted TIA writes (`tia_gather.write_compacted`).

Workload: `jit(vmap(console.frame))` over `--copies` consoles of each of
`--games`, one program for all (plain carts), every frame rendered, joystick
idle. The consoles start from a system reset and run `--warm` frames
first. Consoles of different games write the TIA at different
instructions, the case compaction is for. `--plain` forces the old path
(every write drawn for the whole batch), for the comparison in one run.

Prints one JSON line per measurement (median of `--repeats` frames).

Usage: XLA_FLAGS=--xla_force_host_platform_device_count=1 \\
    python benchmarks/mixed_batch.py --copies 1 4 16
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import jax
import jax.numpy as jnp

from jaxatari import cart, console, games, system_rng, tia_gather

GAMES = ("pong breakout seaquest space_invaders ms_pacman freeway enduro "
         "boxing asterix alien amidar bowling frostbite kangaroo riverraid "
         "tennis").split()


def _batch(names: list[str], copies: int):
    """Stacked boards, reset consoles and idle inputs."""
    boards = []
    for name in names:
        rules = games.lookup(name)
        boards += [console.make_board(cart.load_cartridge(rules.rom_id),
                                      rules.ystart, rules.hmove_blanks)
                   ] * copies
    features = console.union_features([b.features for b in boards])
    board = jax.tree.map(lambda *xs: jnp.stack(xs), *[
        console.widen_board(b, features) for b in boards])
    size = len(boards)
    inputs = console.Inputs(
        swcha=jnp.full((size,), 0xFF, jnp.int32),
        swchb=jnp.full((size,), 0x0B, jnp.int32),
        fire=jnp.zeros((size, 2), jnp.int32),
        paddle_needed=jnp.full((size, 4), -2, jnp.int32))
    state = jax.jit(jax.vmap(lambda b: console.system_reset(
        b, console.power_on(b), system_rng.reset_timer(1))))(board)
    return board, state, inputs


def measure(names: list[str], copies: int, plain: bool, warm: int,
            repeats: int) -> dict:
    """Median seconds per rendered frame of the mixed batch."""
    saved = tia_gather.COMPACT_MIN_BATCH
    if plain:
        tia_gather.COMPACT_MIN_BATCH = 1 << 30
    try:
        board, state, inputs = _batch(names, copies)
        frame = jax.jit(jax.vmap(console.frame))
        for _ in range(warm + 1):
            state = frame(board, state, inputs)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            state = jax.block_until_ready(frame(board, state, inputs))
            times.append(time.perf_counter() - start)
    finally:
        tia_gather.COMPACT_MIN_BATCH = saved
    size = len(names) * copies
    return {"games": len(names), "batch": size,
            "writes": "all" if plain else "compacted",
            "devices": 1, "seconds_per_frame": statistics.median(times),
            "frames_per_s": size / statistics.median(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", nargs="+", default=list(GAMES))
    parser.add_argument("--copies", nargs="+", type=int, default=[1, 4])
    parser.add_argument("--warm", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for copies in args.copies:
        for plain in (False, True):
            print(json.dumps(measure(args.games, copies, plain, args.warm,
                                     args.repeats)), flush=True)


if __name__ == "__main__":
    main()
