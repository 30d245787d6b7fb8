"""The frame loop's two lowerings (`jaxatari.lowering`), measured.

* `audit`: the preset's step exported for CUDA (`jax.export`, no GPU
  needed), per variant: while loops, whether the instruction loop's trip
  count is static, and the conditionals inside it.
* `frames`: seconds per frame of `jit(vmap(console.frame))` on one game,
  for each variant forced on this backend, rendered and not, at each
  batch (consoles from the game's cached reset states).
* `compile`: trace, lower and compile seconds of the preset's step as a
  user jits it (the default lowering), with no compilation cache.
* `cpu_digest` (`--cpu-digest BATCH`): the CPU lowering's `state_digest`
  after the frames that `frames(..., digest=True)` runs at BATCH, run
  here a chunk of consoles at a time (they are independent), so that a
  GPU's row at 64K consoles is checked on a machine whose memory holds
  8K of them.

Prints one JSON line per measurement.

Usage: python benchmarks/lowering.py --game pong --batches 4 64 256
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import pathlib
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxatari
from jaxatari import console, lowering

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlo_launches   # noqa: E402 (benchmarks/hlo_launches.py)


def audit(game: str, variant: str) -> dict:
    """Control flow of the preset's step lowered for CUDA as `variant`."""
    env, params = jaxatari.make_atari(game, num_envs=2)
    key = jax.random.key(0)
    _, state = env.reset(key, params)
    with lowering.forced(variant):
        text = lowering.cuda_text(env.step, key, state,
                                  jnp.zeros((2,), jnp.int32), params)
    loops = lowering.audit(text)
    inner = lowering.in_scope(loops, lowering.INSTRUCTION_LOOP)
    return {"measure": "audit", "game": game, "variant": variant,
            "platform": "cuda", "while_loops": len(loops),
            "instruction_loops": len(inner),
            "instruction_loop_static": [x.static_trip_count for x in inner],
            "conditionals_in_instruction_loop": [x.conditionals
                                                 for x in inner],
            "whiles_in_instruction_loop": [len(x.whiles) for x in inner]}


def _consoles(game: str, batch: int, shared_board: bool = False,
              in_play: int = 0):
    """A batch of the game's consoles from its cached reset states, with
    random joystick inputs: (board, state, inputs); the board is batched
    too unless `shared_board` (then vmap it with in_axes None). With
    `in_play`, the consoles of `make_atari(game, num_envs=batch)` after
    its reset and `in_play` steps of random actions instead: a game in
    play, each console's its own (the reset states are few, and their
    consoles write the TIA in step)."""
    env, params = jaxatari.make(game)
    if in_play:
        state = _in_play(game, batch, in_play)
    else:
        machines = params.reset_states.machine
        count = jax.tree.leaves(machines)[0].shape[0]
        index = jnp.arange(batch) % count
        state = jax.tree.map(lambda x: x[index], machines)
    board = env.board if shared_board else jax.tree.map(
        lambda x: jnp.broadcast_to(x, (batch,) + x.shape), env.board)
    rng = np.random.default_rng(0)
    inputs = console.Inputs(
        swcha=jnp.asarray(rng.choice([0xFF, 0x7F, 0xBF], batch), jnp.int32),
        swchb=jnp.full((batch,), 0x0B, jnp.int32),
        fire=jnp.asarray(rng.integers(0, 2, (batch, 2)), jnp.int32),
        paddle_needed=jnp.full((batch, 4), -2, jnp.int32))
    return board, state, inputs


def _in_play(game: str, batch: int, steps: int) -> console.Console:
    """The consoles of the preset's `batch` envs after its reset and
    `steps` steps of random actions (seeded)."""
    venv, params = jaxatari.make_atari(game, num_envs=batch)
    _, state = jax.jit(venv.reset)(jax.random.key(0), params)
    step = jax.jit(venv.step)
    actions = np.random.default_rng(0).integers(
        0, venv.action_space(params).n, (steps, batch))
    for i in range(steps):
        _, state, *_ = step(jax.random.key(i + 1), state,
                            jnp.asarray(actions[i], jnp.int32), params)
    is_console = lambda x: isinstance(x, console.Console)  # noqa: E731
    return next(x for x in jax.tree.leaves(state, is_leaf=is_console)
                if is_console(x))


def frames(game: str, variant: str, batch: int, render: bool,
           repeats: int, shared_board: bool = False,
           shape: str | None = None, hlo: str | None = None,
           gathers: bool = True, digest: bool = False,
           kernel: str = "gpu", in_play: int = 0) -> dict:
    """Median seconds per frame of a batch, `variant` forced; with
    `shared_board` the batch shares one board (as an env's consoles do)
    instead of a copy each; `shape` is the accelerator's loop shape
    (`lowering.LOOP_SHAPES`, None: the default); `hlo` names a file for
    the compiled program's optimized HLO, whose instruction loop's
    launches a trip (`hlo_launches`) join the row. Without `gathers` the
    accelerator's loop draws for every console in place (shares of 1:
    `lowering.GATHER_SHARES`). With `digest` the row holds the final
    state's `state_digest`, to compare two ways of running the frames.
    `kernel` is the plain kernel's mode (`lowering.PLAIN_KERNEL_MODES`:
    by default on a GPU, in the accelerator's lowering; "off": XLA's loop
    alone, its draws gathered or not). `in_play`: the consoles of a game
    in play, as `_consoles` takes it.

    The frames are consecutive, each call's state donated to the next (so
    a console holds one state, not the three the H100's first timing
    held: 238 KB a console at 65,536 there, against about 103 KB of
    arguments and temporaries as XLA plans the program for an H100).
    The first call (`first_call_s`) is the trace and lowering
    (`trace_lower_s`), the compile (`compile_s`) and one frame."""
    board, state, inputs = _consoles(game, batch, shared_board, in_play)
    launches = {}
    shape = shape or lowering.DEFAULT_LOOP_SHAPE
    shares = {} if gathers else {k: 1 for k in lowering.GATHER_SHARES}
    with lowering.forced(variant), lowering.loop_shape(shape), \
            lowering.gather_shares(**shares), lowering.plain_kernel(kernel):
        shapes = jax.tree.map(
            lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype,
                                           sharding=x.sharding), state)
        if shared_board:
            step = jax.jit(jax.vmap(
                lambda s, i: console.frame(board, s, i, render)),
                donate_argnums=0)
            args = lambda s: (s, inputs)
        else:
            step = jax.jit(jax.vmap(
                lambda b, s, i: console.frame(b, s, i, render)),
                donate_argnums=1)
            args = lambda s: (board, s, inputs)
        begin = time.perf_counter()
        lowered = step.lower(*args(shapes))
        lowered_at = time.perf_counter()
        compiled = lowered.compile()
        compiled_at = time.perf_counter()
        call = lambda s: compiled(*args(s))
        state = jax.block_until_ready(call(state))
        first = time.perf_counter() - begin
        if hlo:
            launches = _instruction_loop_launches(compiled, hlo)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            state = jax.block_until_ready(call(state))
            times.append(time.perf_counter() - start)
    seconds = statistics.median(times)
    return {"measure": "frames", "game": game, "variant": variant,
            "batch": batch, "render": render, "repeats": repeats,
            "shared_board": shared_board, "in_play": in_play,
            "loop_shape": shape if variant == lowering.ACCELERATOR
            else None, "gathers": gathers and variant == lowering.ACCELERATOR,
            "plain_kernel": kernel if variant == lowering.ACCELERATOR
            else None,
            **launches,
            "first_call_s": round(first, 2),
            "trace_lower_s": round(lowered_at - begin, 2),
            "compile_s": round(compiled_at - lowered_at, 2),
            "seconds_per_frame": seconds,
            "frames_per_s": batch / seconds,
            "xla_flags": os.environ.get("XLA_FLAGS", ""),
            "backend": jax.default_backend(), "devices": jax.device_count(),
            **({"frames_run": 1 + repeats, "digest": state_digest(state)}
               if digest else {})}


DIGEST_WEIGHT = 2654435761
"""`state_digest`'s weight of a word is 1 + its index times this (mod
2^32); `_digest_sums` weighs a chunk's words the same way."""


def state_digest(state) -> str:
    """A fingerprint of a batch's whole state, computed on the device (a
    weighted sum of each leaf's values, wrapping), so that two ways of
    running the same frames can be compared without copying the state
    back: equal states give equal digests."""
    sums = []
    for leaf in jax.tree.leaves(state):
        words = jnp.asarray(leaf).astype(jnp.uint32).reshape(-1)
        weights = jnp.arange(words.size, dtype=jnp.uint32) * jnp.uint32(
            DIGEST_WEIGHT) + jnp.uint32(1)
        sums.append(jnp.sum(words * weights, dtype=jnp.uint32))
    values = np.asarray(jax.device_get(jnp.stack(sums)))
    return hashlib.sha256(values.tobytes()).hexdigest()[:16]


def cpu_digest(game: str, batch: int, repeats: int = 2,
               chunk: int = 4096) -> dict:
    """The CPU lowering's `state_digest` of the state that `frames(game,
    variant, batch, False, repeats, True, digest=True)` ends in: the same
    consoles and inputs, 1 + `repeats` undrawn frames, run `chunk`
    consoles at a time, each chunk's share of the digest's sums added on
    the host (they wrap, as on the device)."""
    board, state, inputs = _consoles(game, batch, True)
    step = jax.jit(jax.vmap(lambda s, i: console.frame(board, s, i, False)))
    sums, begin = None, time.perf_counter()
    with lowering.forced(lowering.CPU):
        for start in range(0, batch, chunk):
            end, part = jax.tree.map(lambda x: x[start:start + chunk],
                                     (state, inputs))
            for _ in range(1 + repeats):
                end = step(end, part)
            shares = np.array(_digest_sums(jax.device_get(end), start))
            sums = shares if sums is None else sums + shares   # wraps
    return {"measure": "cpu_digest", "game": game, "batch": batch,
            "frames_run": 1 + repeats, "chunk": chunk,
            "seconds": round(time.perf_counter() - begin, 1),
            "digest": hashlib.sha256(sums.tobytes()).hexdigest()[:16]}


def _digest_sums(state, first: int) -> list:
    """Each leaf's share of `state_digest`'s weighted sums for consoles
    `first` onward of the batch (`state` holds some of its consoles)."""
    sums = []
    with np.errstate(over="ignore"):
        for leaf in jax.tree.leaves(state):
            words = np.asarray(leaf).astype(np.uint32).reshape(-1)
            offset = first * (words.size // len(leaf))
            weights = (np.arange(offset, offset + words.size,
                                 dtype=np.uint64) * DIGEST_WEIGHT + 1
                       ).astype(np.uint32)
            sums.append(np.sum(words * weights, dtype=np.uint32))
    return sums   # uint32 scalars: an array of them adds with wrapping


def _instruction_loop_launches(compiled, path: str) -> dict:
    """Writes `compiled`'s optimized HLO to `path`; the kernel launches of
    one trip of its instruction loop (`hlo_launches.per_trip`)."""
    text = compiled.as_text()
    pathlib.Path(path).write_text(text)
    return {"hlo": path, "launches_per_instruction": hlo_launches.per_trip(
        text, lowering.INSTRUCTION_LOOP + "/while")}


def compile_times(game: str, batch: int) -> dict:
    """Trace, lower and compile seconds of the preset's step."""
    jax.config.update("jax_enable_compilation_cache", False)
    env, params = jaxatari.make_atari(game, num_envs=batch)
    key = jax.random.key(0)
    _, state = env.reset(key, params)
    start = time.perf_counter()
    traced = jax.jit(env.step).trace(key, state,
                                     jnp.zeros((batch,), jnp.int32), params)
    lowered = traced.lower()
    middle = time.perf_counter()
    lowered.compile()
    end = time.perf_counter()
    return {"measure": "compile", "game": game, "batch": batch,
            "trace_and_lower_s": round(middle - start, 1),
            "compile_s": round(end - middle, 1),
            "backend": jax.default_backend()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="pong")
    parser.add_argument("--batches", type=int, nargs="+", default=[4, 64])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--variants", nargs="+", default=list(
        lowering.VARIANTS), choices=lowering.VARIANTS)
    parser.add_argument("--skip", nargs="*", default=[],
                        choices=("audit", "frames", "compile"))
    parser.add_argument("--shared-board", action="store_true",
                        help="frames: one board for the batch, as an env")
    parser.add_argument("--loop-shapes", nargs="+", default=[None],
                        choices=sorted(lowering.LOOP_SHAPES),
                        help="frames: the accelerator's loop shapes, each "
                             "measured in turn (default: the default)")
    parser.add_argument("--undrawn-only", action="store_true")
    parser.add_argument("--gathers", nargs="+", default=["on"],
                        choices=("on", "off"), help="frames: the "
                        "accelerator's TIA draws for gathered consoles "
                        "(on, the default) or for all in place (off)")
    parser.add_argument("--hlo-dir", help="frames: write each program's "
                        "optimized HLO here and count its launches")
    parser.add_argument("--in-play", type=int, default=0, metavar="STEPS",
                        help="frames: consoles of the preset after its "
                        "reset and STEPS random steps (a game in play), "
                        "not the game's reset states")
    parser.add_argument("--cpu-digest", type=int, metavar="BATCH",
                        help="only the CPU lowering's digest of BATCH "
                        "consoles' frames (`cpu_digest`), to check a "
                        "GPU's `frames` row")
    args = parser.parse_args()
    if args.cpu_digest:
        print(json.dumps(cpu_digest(args.game, args.cpu_digest,
                                    args.repeats)), flush=True)
        return
    if "audit" not in args.skip:
        for variant in args.variants:
            print(json.dumps(audit(args.game, variant)), flush=True)
    if "frames" not in args.skip:
        for batch in args.batches:
            for render in (False,) if args.undrawn_only else (False, True):
                for variant in args.variants:
                    for shape, gathers in itertools.product(
                            args.loop_shapes, args.gathers):
                        hlo = args.hlo_dir and os.path.join(
                            args.hlo_dir, f"{args.game}_{variant}_{batch}_"
                            f"{'drawn' if render else 'undrawn'}_"
                            f"{shape or 'default'}_{gathers}.txt")
                        print(json.dumps(frames(
                            args.game, variant, batch, render, args.repeats,
                            args.shared_board, shape, hlo,
                            gathers == "on", in_play=args.in_play)),
                            flush=True)
    if "compile" not in args.skip:
        print(json.dumps(compile_times(args.game, args.batches[0])),
              flush=True)


if __name__ == "__main__":
    main()
