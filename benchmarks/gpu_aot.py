"""The frame loop compiled for a GPU on a machine without one.

XLA can compile for a CUDA GPU from a description of the device (its
`TargetConfig`) instead of the device itself ("deviceless AOT"), through
`jax.experimental.topologies`. The program is the one a GPU would run,
with XLA:GPU's own fusion and copy insertion, so its kernel launches per
emulated instruction (`hlo_launches`) can be counted here. On the H200
that launch count set the frame loop's speed (BENCHMARKS.md, "On an
H200"), so a change to the loop's shape can be judged before a GPU is
lent, and measured when one is.

It needs JAX's CUDA plugin beside the jax it runs with, in a virtual
environment of its own (the test suite must not see a CUDA plugin), and
`ptxas` from a CUDA toolkit on the PATH:

    python -m venv /tmp/cudavenv && . /tmp/cudavenv/bin/activate
    pip install -e . && pip install --no-deps \\
        jax-cuda13-plugin==$(python -c 'import jax; print(jax.__version__)') \\
        jax-cuda13-pjrt==$(python -c 'import jax; print(jax.__version__)')
    JAX_SKIP_CUDA_CONSTRAINTS_CHECK=1 python benchmarks/gpu_aot.py \\
        --batch 4096 --hlo-dir /tmp/aot

(the constraints check wants cuDNN and a driver, which compiling does
not). Prints one JSON line per program: its instruction loops' launches
a trip (every loop's, for `--program preset`), the seconds of the
trace and lowering and of the compile, and XLA's buffer plan in bytes
per console.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time

import jax
import jax.numpy as jnp

from jaxatari import console, lowering

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlo_launches   # noqa: E402 (benchmarks/hlo_launches.py)
from lowering import _consoles   # noqa: E402

H100 = {
    "threads_per_block_limit": 1024, "threads_per_warp": 32,
    "shared_memory_per_block": 49152, "shared_memory_per_core": 233472,
    "threads_per_core_limit": 2048, "core_count": 132, "fpus_per_core": 128,
    "block_dim_limit_x": 2147483647, "block_dim_limit_y": 65535,
    "block_dim_limit_z": 65535, "memory_bandwidth": 3352320000000,
    "l2_cache_size": 52428800, "clock_rate_ghz": 1.98,
    "device_memory_size": 84929347584,
    "shared_memory_per_block_optin": 232448,
    "registers_per_core_limit": 65536, "registers_per_block_limit": 65536}
"""An H100 SXM's device description, the fields of XLA's
`GpuDeviceInfoProto` (compute capability 9.0, the H200's too)."""


def target_config(device: dict = H100, cuda: tuple[int, int] = (13, 0),
                  cudnn: tuple[int, int] = (9, 7)) -> str:
    """A `TargetConfig` text proto for `device`, as the topology wants."""
    fields = "\n".join(f"  {key}: {value}" for key, value in device.items())
    return (f"gpu_device_info {{\n{fields}\n"
            f"  cuda_compute_capability {{ major: 9 minor: 0 }}\n}}\n"
            f'platform_name: "CUDA"\n'
            f"dnn_version_info {{ major: {cudnn[0]} minor: {cudnn[1]} }}\n"
            f"runtime_version {{ major: {cuda[0]} minor: {cuda[1]} }}\n"
            f'device_description_str: "NVIDIA H100 80GB HBM3"\n')


def gpu_sharding() -> jax.sharding.Sharding:
    """A one-device sharding on a described (not present) H100."""
    from jax.experimental import topologies
    topology = topologies.get_topology_desc(
        platform="cuda", topology_name="h100", target_config=target_config(),
        topology="1x1x1")
    mesh = topologies.make_mesh(topology, (1,), ("x",))
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())


def _spec(x, sharding: jax.sharding.Sharding) -> jax.ShapeDtypeStruct:
    """An argument's shape and dtype on `sharding` (a Python number's
    as `jnp.asarray` makes it)."""
    x = x if hasattr(x, "dtype") else jnp.asarray(x)
    return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)


def _specs(tree, sharding: jax.sharding.Sharding):
    return jax.tree.map(lambda x: _spec(x, sharding), tree)


def compile_frame(game: str, batch: int, render: bool, shape: str,
                  sharding: jax.sharding.Sharding, gathers: bool = True):
    """`jit(vmap(console.frame))` on a shared board (as
    `benchmarks/lowering.py frames` runs it), the accelerator's loop
    shaped as `shape` (`lowering.LOOP_SHAPES`), its TIA draws for gathered
    consoles or (not `gathers`) for all (`lowering.GATHER_SHARES`),
    compiled for the GPU; and the seconds (`_compile`)."""
    board, state, inputs = _consoles(game, 1, True)   # shapes only: a
    # batch of 256K consoles would not fit this machine's memory
    batched = lambda tree: jax.tree.map(lambda x: jax.ShapeDtypeStruct(
        (batch,) + x.shape[1:], x.dtype, sharding=sharding), tree)
    shares = {} if gathers else {k: 1 for k in lowering.GATHER_SHARES}
    begin = time.perf_counter()
    with lowering.every_backend(), lowering.loop_shape(shape), \
            lowering.gather_shares(**shares):
        step = jax.jit(jax.vmap(lambda s, i: console.frame(board, s, i,
                                                           render)))
        lowered = step.lower(batched(state), batched(inputs))
    return _compile(lowered, begin)


def compile_preset_step(game: str, batch: int, shape: str,
                        sharding: jax.sharding.Sharding):
    """The preset's step (`jaxatari bench`'s workload: 4 frames, 2 drawn,
    max-pooled, resized, stacked), vmapped over `batch` envs, compiled
    for the GPU; and the seconds (`_compile`)."""
    from jaxatari import bench
    env, params = bench.jaxatari_workload(game)
    keys = jax.random.split(jax.random.key(0), batch)
    _, state = jax.eval_shape(jax.vmap(env.reset, in_axes=(0, None)), keys,
                              params)
    step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
    begin = time.perf_counter()
    with lowering.every_backend(), lowering.loop_shape(shape):
        lowered = step.lower(
            _specs(keys, sharding), _specs(state, sharding),
            _spec(jax.ShapeDtypeStruct((batch,), jnp.int32), sharding),
            _specs(params, sharding))
    return _compile(lowered, begin)


def compile_a2c_update(game: str, batch: int, shape: str,
                       sharding: jax.sharding.Sharding):
    """One update of an A2C agent on the preset (`jaxatari.agents.a2c`,
    `batch` envs: a rollout of the preset's steps, then the learning
    step), as `jaxatari train` runs it, compiled for the GPU; and the
    seconds (`_compile`)."""
    from jaxatari.agents import a2c
    from jaxatari.agents import envs as agent_envs
    env, params = agent_envs.make_env(game)
    config = a2c.A2CConfig(num_envs=batch, total_steps=10**6)
    learner = a2c.make(config, agent_envs.unbatched(env), params)
    state = jax.eval_shape(learner.init, jax.random.key(0),
                           config.hparams())
    begin = time.perf_counter()
    with lowering.every_backend(), lowering.loop_shape(shape):
        lowered = jax.jit(learner.update).lower(_specs(state, sharding))
    return _compile(lowered, begin)


def _compile(lowered, begin: float):
    """`lowered` compiled, and the seconds of its trace and lowering
    (since `begin`) and of its compile."""
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    return compiled, {"trace_lower_s": round(lowered_at - begin, 1),
                      "compile_s": round(time.perf_counter() - lowered_at,
                                         1)}


def _bytes_per_console(compiled, batch: int) -> dict:
    """XLA's buffer plan of `compiled`, in bytes per console: arguments,
    outputs and temporaries (outputs that alias donated arguments are
    not counted twice by the device, but are here)."""
    memory = compiled.memory_analysis()
    return {name: round(getattr(memory, f"{name}_size_in_bytes") / batch)
            for name in ("argument", "output", "temp")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", default="pong")
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--render", action="store_true")
    parser.add_argument("--program", choices=("frame", "preset", "a2c"),
                        default="frame", help="a raw frame, the preset's "
                        "step or an A2C update on the preset (every loop "
                        "reported for the last two)")
    parser.add_argument("--loop-shapes", nargs="+",
                        default=sorted(lowering.LOOP_SHAPES),
                        choices=sorted(lowering.LOOP_SHAPES))
    parser.add_argument("--hlo-dir", help="write each program's HLO here")
    parser.add_argument("--gathers", nargs="+", default=["on"],
                        choices=("on", "off"), help="frame: the TIA's "
                        "draws for gathered consoles (on) or all (off)")
    args = parser.parse_args()
    sharding = gpu_sharding()
    for shape, gathers in itertools.product(args.loop_shapes, args.gathers):
        if args.program != "frame":
            whole = {"preset": compile_preset_step,
                     "a2c": compile_a2c_update}[args.program]
            compiled, seconds = whole(args.game, args.batch, shape, sharding)
        else:
            compiled, seconds = compile_frame(args.game, args.batch,
                                              args.render, shape, sharding,
                                              gathers == "on")
        text = compiled.as_text()
        if args.hlo_dir:
            os.makedirs(args.hlo_dir, exist_ok=True)
            name = (f"{args.game}_{args.batch}_{args.program}_{shape}_"
                    f"{gathers}.txt")
            with open(os.path.join(args.hlo_dir, name), "w") as file:
                file.write(text)
        loops = hlo_launches.rows(text, "" if args.program != "frame"
                                  else lowering.INSTRUCTION_LOOP + "/while")
        print(json.dumps({
            "program": args.program, "game": args.game, "batch": args.batch,
            "render": args.render,
            "loop_shape": shape, "gathers": gathers == "on",
            "target": "H100 (deviceless)",
            **seconds,
            "bytes_per_console": _bytes_per_console(compiled, args.batch),
            ("launches_per_trip" if args.program != "frame" else
             "launches_per_instruction"): [r["per_trip"] for r in loops],
            "loops": loops}), flush=True)


if __name__ == "__main__":
    main()
