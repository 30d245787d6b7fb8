"""benchmarks/triton_rules.py: each probe computes what its name says (in
Pallas's interpreter, against numpy), so a probe that lowers for an H100
tells of the construct it names. The lowering itself needs a CUDA plugin
(`gpu_aot`'s environment) and is not run here."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..",
                                "benchmarks"))
import triton_rules  # noqa: E402

B = triton_rules.BLOCK


def _probe(name: str):
    found = [p for p in triton_rules.probes() if p[0].startswith(name)]
    assert len(found) == 1, name
    return found[0]


@pytest.mark.parametrize("name", ["value [B,15]", "value [B,16]",
                                  "ref [B,15]", "ref [B,128] uint8",
                                  "gather on a value"])
def test_row_reads_read_each_lanes_own_row(name):
    _, kernel, inputs, output = _probe(name)
    rng = np.random.default_rng(0)
    (shape, dtype), _ = inputs
    array = rng.integers(0, 200, shape).astype(dtype)
    index = rng.integers(0, shape[1], B).astype(np.int32)
    got = triton_rules.interpreted(kernel, [array, index], output)
    np.testing.assert_array_equal(got, array[np.arange(B), index])


def test_shared_table_read_and_store_then_load():
    _, kernel, _, output = _probe("ref [33] shared")
    table = np.arange(33, dtype=np.int32) * 3
    index = np.arange(B, dtype=np.int32) % 33
    np.testing.assert_array_equal(
        triton_rules.interpreted(kernel, [table, index], output),
        table[index])
    _, kernel, _, output = _probe("uint8 ref store")
    ram = np.zeros((B, 128), np.uint8)
    index = np.arange(B, dtype=np.int32) * 7
    expected = ram.copy()
    rows = np.arange(B)
    expected[rows, index & 127] = np.where(index > 5, index & 255, 0)
    np.testing.assert_array_equal(
        triton_rules.interpreted(kernel, [index, ram], output),
        expected[rows, (index + 1) & 127])


@pytest.mark.parametrize("name", ["while_loop, predicate jnp.any",
                                  "while_loop, predicate max",
                                  "cond, predicate jnp.any",
                                  "cond, predicate max",
                                  "select_n of 3", "nested where",
                                  "uint8 arithmetic", "uint8 bitwise",
                                  "int to bool"])
def test_control_probes_agree_with_numpy(name):
    _, kernel, _, output = _probe(name)
    x = np.arange(B, dtype=np.int32) - (0 if name.startswith("while")
                                         else 20)   # a loop that ends
    got = np.asarray(triton_rules.interpreted(kernel, [x], output))
    if name.startswith("while"):
        total, step = x.copy(), x + 1
        while (total < 100).any():
            total = total + step
        expected = total
    elif name.startswith("cond"):
        expected = x * 2 if (x > 3).any() else x
    elif name.startswith("uint8 arithmetic"):
        expected = ((x.astype(np.uint8) + np.uint8(200)).astype(np.uint8)
                    ).astype(np.int32)
    elif name.startswith("uint8 bitwise"):
        expected = (x.astype(np.uint8) ^ np.uint8(0x5A)).astype(np.int32)
    elif name.startswith("int to bool"):
        expected = ((x & 4) != 0).astype(np.int32)
    else:
        r = x % 3
        expected = np.where(r == 0, x >> 1, np.where(r == 1, x << 2, x // 7))
    np.testing.assert_array_equal(got, expected)


def test_semantics_probe_agrees_with_itself_in_the_interpreter():
    """In Pallas's interpreter the kernel is XLA's arithmetic, so every
    operation agrees; the inputs reach the edge cases they claim."""
    rows = triton_rules.semantics(2 * B, interpret=True)
    assert [r["operation"] for r in rows] == list(triton_rules.SEMANTICS)
    assert all(r["differing"] == 0 for r in rows), rows
    x, y, shift = (np.asarray(v) for v in triton_rules.semantic_inputs(
        2 * B))
    assert (x < 0).any() and (np.abs(x) > 65_535).any()
    assert (y < 0).any() and (y != 0).all() and (shift >= 32).any()
