"""Drawn frames with the pixels apart from the registers (issue #18).

One process compiles `jit(vmap(console.frame))` of a game's batch in play
(`benchmarks/lowering.py`'s `_consoles`, `in_play` preset steps), the
CPU's lowering, with `tia_gather.PIXELS_APART` and `tia.PLANES` each way,
checks the drawn frames end in the same state, and times them in turn
(median of 7), with an undrawn frame beside them.

    python benchmarks/pixels_apart.py pong 256 40
"""
import os, sys, time, json, statistics
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax, jax.numpy as jnp, numpy as np
from jaxatari import console, lowering, tia_gather, tia
from lowering import _consoles
game = sys.argv[1]; batch = int(sys.argv[2]); in_play = int(sys.argv[3])
board, state, inputs = _consoles(game, batch, True, in_play=in_play)
progs = {}
with lowering.forced("cpu"):
    for name, apart, planes, render in (("head", False, False, True), ("apart", True, False, True), ("apart_planes", True, True, True), ("planes", False, True, True), ("undrawn", True, True, False)):
        tia_gather.PIXELS_APART, tia.PLANES = apart, planes
        f = jax.jit(jax.vmap(lambda s, i, r=render: console.frame(board, s, i, r)))
        t = time.perf_counter(); progs[name] = f.lower(state, inputs).compile()
        print(name, "compile", round(time.perf_counter() - t, 1), flush=True)
outs = {n: jax.device_get(p(state, inputs)) for n, p in progs.items()}
for n in outs:
    if n != "undrawn":
        assert all((a == b).all() for a, b in zip(jax.tree.leaves(outs["head"]), jax.tree.leaves(outs[n]))), n
times = {n: [] for n in progs}
for _ in range(7):
    for n, p in progs.items():
        t = time.perf_counter(); jax.block_until_ready(p(state, inputs)); times[n].append(time.perf_counter() - t)
print(json.dumps({"game": game, "batch": batch, "in_play": in_play, **{n: round(statistics.median(v), 4) for n, v in times.items()}}), flush=True)
