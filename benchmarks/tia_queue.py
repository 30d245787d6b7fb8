"""The CPU lowering's TIA write queue: queue sizes against none, on the
preset in play (issue #18).

`tia_queue.SLOTS` sets, when a step is traced, how many TIA writes each
console of a batch may queue in the CPU's lowering (0: each applied at
its instruction, for the whole batch, masked). Every size given is
traced, compiled and timed in one process, in turn, on the same
consoles and actions: `make_atari(GAME, num_envs=N)` after its reset and
`--warm` steps of random actions (a key per step; see
`speculative_latches.py`). Each row also sums each step's observation,
which must be the same for every size.

    python benchmarks/tia_queue.py --games pong --envs 256 --slots 0 16 32

Prints one JSON line per (game, envs, slots, round): trace and lowering,
compile, the timed steps and their median, and the observations' sums.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from jaxatari import tia_queue  # noqa: E402
from speculative_latches import alternate, in_play_arguments  # noqa: E402


def measure(game: str, envs: int, slots: list[int], rounds: int,
            steps: int, warm: int) -> list[dict]:
    """Rows for `rounds` passes over the queue sizes `slots` on one
    preset, `warm` steps into play."""
    return alternate(game, envs, rounds, steps, warm, tia_queue, "SLOTS",
                     "slots", slots)


def main() -> None:
    parser = in_play_arguments(__doc__.split("\n")[0])
    parser.add_argument("--slots", type=int, nargs="+", default=[0, 16])
    args = parser.parse_args()
    for game in args.games:
        for envs in args.envs:
            measure(game, envs, args.slots, args.rounds, args.steps,
                    args.warm)


if __name__ == "__main__":
    main()
