"""`benchmarks/pallas_probe.py`: the toy loop as XLA lowers the emulator
and as one Pallas kernel (in Pallas's interpreter here) give numpy's
bits."""
from __future__ import annotations

import importlib.util
import pathlib

import jax
import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "pallas_probe", ROOT / "benchmarks" / "pallas_probe.py")
probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe)

BATCH, STEPS = 2 * probe.BLOCK, 40


@pytest.fixture(scope="module")
def expected():
    return probe.reference(*probe.inputs(BATCH), STEPS)


def _assert_same(got, expected):
    for x, y in zip(got, expected):
        np.testing.assert_array_equal(np.asarray(x), y)


def test_the_xla_loop_is_numpys(expected):
    got = jax.jit(lambda *x: probe.xla_loop(*x, STEPS))(
        *probe.inputs(BATCH))
    _assert_same(got, expected)


def test_the_pallas_kernel_is_numpys(expected):
    got = jax.jit(lambda *x: probe.pallas_loop(*x, STEPS, interpret=True))(
        *probe.inputs(BATCH))
    _assert_same(got, expected)
    # the loop did move every console
    assert np.all(expected[0] != probe.inputs(BATCH)[1]) or np.any(
        expected[2] != probe.inputs(BATCH)[3])
