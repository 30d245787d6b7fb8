"""`benchmarks/lowering.py`'s state digests: a batch's digest summed a
chunk of consoles at a time on the host (`cpu_digest`, which checks a
GPU's 64K row on a machine that holds 4K consoles) is the whole batch's
`state_digest`, for chunks that do and do not divide the batch."""
from __future__ import annotations

import hashlib
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))   # its own imports
_spec = importlib.util.spec_from_file_location(
    "bench_lowering", ROOT / "benchmarks" / "lowering.py")
bench_lowering = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_lowering)


def _state(batch: int) -> dict:
    """A batch's worth of leaves of the dtypes a console's state has,
    with values that overflow the digest's uint32 sums."""
    rng = np.random.default_rng(0)
    return {"ram": rng.integers(0, 256, (batch, 128)).astype(np.uint8),
            "clock": rng.integers(-2**31, 2**31 - 1, batch).astype(np.int32),
            "flags": rng.integers(0, 2, (batch, 3, 5)).astype(bool),
            "queue": rng.integers(-128, 128, (batch, 16, 2)).astype(np.int8)}


@pytest.mark.parametrize("chunk", [1, 4, 7, 12])
def test_chunked_sums_give_the_whole_batchs_digest(chunk):
    batch = 12
    state = _state(batch)
    sums = None
    for start in range(0, batch, chunk):
        part = {k: v[start:start + chunk] for k, v in state.items()}
        shares = np.array(bench_lowering._digest_sums(part, start))
        sums = shares if sums is None else sums + shares
    chunked = hashlib.sha256(sums.tobytes()).hexdigest()[:16]
    assert chunked == bench_lowering.state_digest(state)


def test_the_digest_sees_one_changed_word():
    state = _state(6)
    before = bench_lowering.state_digest(state)
    state["queue"][5, 15, 1] += 1
    assert bench_lowering.state_digest(state) != before
