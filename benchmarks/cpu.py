"""Instructions per second of the vmapped 6507 on the flat 64 KiB bus.

Workload: every CPU runs its own random code (random bytes, JAM opcodes
replaced by NOP) from its own random registers, so the batch diverges at
once: different opcodes, modes, decimal mode, stack traffic, stores. py65
runs the same kind of program alone, for scale.

Prints one JSON line per measurement:
    {"system", "backend", "devices", "batch", "instructions_per_s", ...}

On the CPU backend the batch is split over all cores: unless the user set
XLA_FLAGS, this script asks XLA for one host device per core and shards the
batch axis over them (each device runs its own thread).

Usage: python benchmarks/cpu.py [--batches 1 64 1024 8192] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

if "XLA_FLAGS" not in os.environ:  # must happen before JAX starts
    os.environ["XLA_FLAGS"] = (
        f"--xla_force_host_platform_device_count={os.cpu_count() or 1}")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

from jaxatari import _config, cpu6502, flatbus  # noqa: E402


def measure_jax(batch: int, steps: int, repeats: int) -> dict:
    """Median instructions/s of jit(vmap(run)) over `repeats` timed calls."""
    devices = jax.devices()
    if batch % len(devices):
        devices = devices[:1]
    mesh = Mesh(np.array(devices), ("batch",))
    shard = NamedSharding(mesh, PartitionSpec("batch"))
    cpu, memory = jax.device_put(flatbus.random_programs(batch), shard)
    run = jax.jit(jax.vmap(lambda c, m: cpu6502.run(
        c, m, flatbus.FLAT_BUS, steps)), donate_argnums=(0, 1))
    cpu, memory = jax.block_until_ready(run(cpu, memory))  # compile, warm
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        cpu, memory = jax.block_until_ready(run(cpu, memory))
        times.append(time.perf_counter() - start)
    jammed = int(np.asarray(cpu.jammed).sum())
    median = statistics.median(times)
    return dict(system="jaxatari", backend=jax.default_backend(),
                devices=len(devices), batch=batch, steps_per_call=steps,
                instructions_per_s=batch * steps / median,
                seconds_per_call=median, jammed_at_end=jammed)


def measure_py65(instructions: int, repeats: int) -> dict:
    try:  # py65 comes with the test extra, not with jaxatari itself
        from py65.devices.mpu6502 import MPU
    except ImportError:
        return dict(system="py65", skipped="py65 is not installed: "
                    "pip install -e '.[test]' to measure it")
    cpu, memory = flatbus.random_programs(1)
    rates = []
    for _ in range(repeats):
        mpu = MPU(memory=np.asarray(memory.memory[0]).tolist() + [0, 0],
                  pc=int(cpu.pc[0]))
        start = time.perf_counter()
        for _ in range(instructions):
            mpu.step()
        rates.append(instructions / (time.perf_counter() - start))
    return dict(system="py65", backend="python", devices=1, batch=1,
                instructions_per_s=statistics.median(rates))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, nargs="+",
                        default=[1, 64, 1024, 8192])
    parser.add_argument("--instructions", type=int, default=2_000_000,
                        help="instructions per timed call, all CPUs")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    _config.enable_compilation_cache()
    print(json.dumps(measure_py65(20_000, args.repeats)), flush=True)
    for batch in args.batches:
        steps = max(100, args.instructions // batch)
        print(json.dumps(measure_jax(batch, steps, args.repeats)),
              flush=True)


if __name__ == "__main__":
    main()
