"""`benchmarks/pallas_probe.py`: the toy loop as XLA lowers the emulator
and as one Pallas kernel (in Pallas's interpreter here) give numpy's
bits, and `cpu6502.step` in one kernel gives `vmap(cpu6502.run)`'s."""
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


def test_the_cpu_in_one_kernel_is_the_vmapped_cpu():
    """Random programs (`benchmarks/cpu.py`): registers and memory equal
    after 30 instructions, through a ref bus and a ref control table."""
    from jaxatari.flatbus import random_programs
    cpu, flat = random_programs(2 * probe.BLOCK, seed=3)
    memory = np.asarray(flat.memory)
    xla = jax.jit(lambda c, m: probe.cpu_xla(c, m, 30))(cpu, memory)
    kernel = jax.jit(lambda c, m: probe.cpu_pallas(c, m, 30, True))(
        cpu, memory)
    for path, x, y in zip(jax.tree_util.tree_leaves_with_path(xla),
                          jax.tree.leaves(xla), jax.tree.leaves(kernel)):
        np.testing.assert_array_equal(x, y, err_msg=str(path))
    assert np.any(np.asarray(xla[1]) != memory)   # stores happened
    assert np.any(np.asarray(xla[0].pc) != cpu.pc)


def test_the_porting_surface_names_where_a_frame_indexes_by_value():
    surface = probe.porting_surface("pong")
    assert set(surface["by_primitive"]) <= set(probe.INDEXED)
    assert surface["by_primitive"]["gather"] > 0
    assert "cpu6502.py:control_row" in surface["by_origin"]
    assert sum(surface["by_origin"].values()) == sum(
        surface["by_primitive"].values())
    assert surface["equations"] > sum(surface["by_primitive"].values())
    assert max(surface["most_common"].values()) <= surface["equations"]
