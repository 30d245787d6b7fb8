"""Where the CPU lowering's frame loop spends its time, op by op.

One frame of `jit(vmap(console.frame))` (a shared board unless
`--board-per-console`, frames not drawn unless `--render`) runs once
untimed, once timed, and once under `jax.profiler` with XLA:CPU's
per-thunk trace events on (`--xla_cpu_enable_xprof_traceme`, set here
before JAX starts). Each
thunk's self time (its time less that of the thunks inside it) is summed
by name and printed as a JSON line with its share and the JAX op it
came from (the HLO's `op_name`), costliest first; a first line gives
the frame's time with and without tracing (tracing adds about a
microsecond a thunk) and the loop's iteration count.

Usage: python benchmarks/loop_profile.py --game pong --batch 1024 [--top 30]
    [--render] [--board-per-console] [--in-play STEPS]
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import re
import sys
import tempfile
import time

os.environ["XLA_FLAGS"] = " ".join(
    [os.environ.get("XLA_FLAGS", ""), "--xla_cpu_enable_xprof_traceme=true",
     "--xla_force_host_platform_device_count=1"]).strip()

import jax  # noqa: E402 (after XLA_FLAGS)
from jax.profiler import ProfileData  # noqa: E402

from jaxatari import console, lowering  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from lowering import _consoles  # noqa: E402 (benchmarks/lowering.py)


def op_names(hlo_text: str) -> dict[str, str]:
    """Each HLO instruction's name -> the JAX op_name it carries."""
    names = {}
    for line in hlo_text.split("\n"):
        match = re.match(r"\s*(?:ROOT )?%?([\w.\-]+) = .*?op_name=\"([^\"]*)\"",
                         line)
        if match:
            names[match.group(1)] = match.group(2)
    return names


def self_times(data: ProfileData) -> tuple[collections.Counter,
                                           collections.Counter]:
    """Per event name on XLA's CPU threads: self time (ns) and calls."""
    own, calls = collections.Counter(), collections.Counter()
    for plane in data.planes:
        for line in plane.lines:
            if not line.name.startswith("tf_XLAEigen"):
                continue
            events = sorted(((e.start_ns, e.duration_ns, e.name)
                             for e in line.events),
                            key=lambda e: (e[0], -e[1]))
            stack: list[tuple[float, float, str]] = []
            for start, length, name in events:
                while stack and stack[-1][0] + stack[-1][1] <= start:
                    stack.pop()
                if stack:
                    own[stack[-1][2]] -= length
                own[name] += length
                calls[name] += 1
                stack.append((start, length, name))
    return own, calls


def profile(game: str, batch: int, render: bool, top: int,
            board_per_console: bool = False, in_play: int = 0) -> list[dict]:
    """The frame's timing row, then the `top` costliest thunks; with
    `board_per_console` each console gets its own copy of the board (as
    the lock-step parity batch's consoles, each its own game's); with
    `in_play`, the preset's consoles that many random steps after its
    reset (a game in play, not the attract screen)."""
    board, state, inputs = _consoles(game, batch,
                                     shared_board=not board_per_console,
                                     in_play=in_play)
    with lowering.forced("cpu"):
        compiled = jax.jit(jax.vmap(
            lambda b, s, i: console.frame(b, s, i, render),
            in_axes=(0 if board_per_console else None, 0, 0))).lower(
                board, state, inputs).compile()
    state = jax.block_until_ready(compiled(board, state, inputs))
    begin = time.perf_counter()
    state = jax.block_until_ready(compiled(board, state, inputs))
    plain = time.perf_counter() - begin
    with tempfile.TemporaryDirectory() as trace:
        jax.profiler.start_trace(trace)
        begin = time.perf_counter()
        jax.block_until_ready(compiled(board, state, inputs))
        traced = time.perf_counter() - begin
        jax.profiler.stop_trace()
        data = ProfileData.from_file(str(next(
            pathlib.Path(trace).glob("**/*.xplane.pb"))))
    own, calls = self_times(data)
    names = op_names(compiled.as_text())
    total = sum(v for k, v in own.items() if k != "ThunkExecutor::Execute")
    rows = [{"game": game, "batch": batch, "render": render,
             "in_play": in_play,
             "board_per_console": board_per_console,
             "frame_s": plain, "frame_traced_s": traced,
             "loop_iterations": max((c for k, c in calls.items()
                                     if k.startswith("cond.")),
                                    default=None)}]
    for name, ns in own.most_common(top):
        rows.append({"thunk": name, "self_ms": round(ns / 1e6, 1),
                     "share_of_thunks": round(ns / total, 3),
                     "calls": calls[name], "op_name": names.get(name, "")})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="pong")
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--render", action="store_true")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--board-per-console", action="store_true",
                        help="a copy of the board for each console")
    parser.add_argument("--in-play", type=int, default=0,
                        help="the preset's consoles this many random steps "
                        "after its reset (default: the boot's reset states)")
    args = parser.parse_args()
    for row in profile(args.game, args.batch, args.render, args.top,
                       args.board_per_console, args.in_play):
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
