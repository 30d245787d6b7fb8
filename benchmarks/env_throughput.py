"""Env throughput against ale-py's AtariVectorEnv, EnvPool and Gymnasium's
sync vector env: `jaxatari.bench` (also `jaxatari bench`), which gives the
CPU one XLA device per core unless XLA_FLAGS sets a count.

Usage: python benchmarks/env_throughput.py [--games breakout pong ms_pacman]
       [--batches 64 256 ...] [--write BENCHMARKS.md --plot PNG]
"""
import sys

from jaxatari import bench

if __name__ == "__main__":
    sys.exit(bench.main())
