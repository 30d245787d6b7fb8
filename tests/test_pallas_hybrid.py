"""`benchmarks/pallas_hybrid.py`: a frame whose plain instructions run in
one Pallas kernel (here in Pallas's interpreter) and whose TIA and hotspot
accesses run in XLA's accelerator step ends in the CPU's lowering's bits."""
from __future__ import annotations

import importlib.util
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxatari
from jaxatari import console, lowering

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "pallas_hybrid", ROOT / "benchmarks" / "pallas_hybrid.py")
hybrid = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hybrid)

BATCH, BLOCK = 8, 4


@pytest.fixture(scope="module")
def pong():
    """8 Pong consoles from its 4 reset states, with varied joysticks."""
    env, params = jaxatari.make("pong")
    machines = params.reset_states.machine
    count = jax.tree.leaves(machines)[0].shape[0]
    state = jax.tree.map(lambda x: x[jnp.arange(BATCH) % count], machines)
    inputs = console.Inputs(
        swcha=jnp.asarray([0xFF, 0x7F, 0xBF, 0xFF] * 2, jnp.int32),
        swchb=jnp.full(BATCH, 0x0B, jnp.int32),
        fire=jnp.asarray([[0, 0], [1, 0]] * 4, jnp.int32),
        paddle_needed=jnp.full((BATCH, 4), -2, jnp.int32))
    return env.board, state, inputs


def _frames(board, state, inputs, count: int):
    step = jax.jit(jax.vmap(lambda s, i: console.frame(board, s, i, False)))
    for _ in range(count):
        state = step(state, inputs)
    return jax.device_get(state)


@pytest.fixture(scope="module")
def cpus_frames(pong):
    board, state, inputs = pong
    with lowering.forced(lowering.CPU):
        return _frames(board, state, inputs, 2)


@pytest.mark.slow
def test_hybrid_frames_end_as_the_cpus(pong, cpus_frames, monkeypatch):
    """Two undrawn frames, XLA's step drawing for every console at an
    event (the hybrid's default), end in the CPU's lowering's bits, and
    the kernel ran most of their instructions (Pong's frame is about
    6,800, 4 in 5 of them plain). The variant with its draws gathered is
    checked by `gpu_session.py`'s `hybrid` stage (the same digest as the
    accelerator's lowering; `run --tiny` here), not in CI's 20 minutes."""
    board, state, inputs = pong
    in_kernel = []
    plain_run = hybrid.plain_run

    def counted(board, inputs, state, ready, count, *args):
        after = plain_run(board, inputs, state, ready, count, *args)
        jax.debug.callback(lambda n: in_kernel.append(int(n)),
                           jnp.sum(after[1] - count))
        return after
    monkeypatch.setattr(hybrid, "plain_run", counted)
    with hybrid.hybrid(steps=8, block=BLOCK, interpret=True):
        got = _frames(board, state, inputs, 2)
    for path, x, y in zip(jax.tree_util.tree_leaves_with_path(cpus_frames),
                          jax.tree.leaves(cpus_frames), jax.tree.leaves(got)):
        np.testing.assert_array_equal(x, y, jax.tree_util.keystr(path))
    assert sum(in_kernel) > BATCH * 2 * 4_000, sum(in_kernel)


def test_a_board_with_extras_is_refused():
    env, _ = jaxatari.make("pong")
    board = env.board.replace(features=env.board.features._replace(
        cart_ram=True))
    with pytest.raises(ValueError, match="plain carts only"):
        hybrid.check_board(board)


def test_a_batch_the_block_does_not_divide_is_refused(pong):
    board, state, inputs = pong
    with pytest.raises(ValueError, match="multiple of the block"):
        hybrid.plain_run(board, inputs, state, jnp.ones(BATCH, bool),
                         jnp.zeros(BATCH, jnp.int32), 8, 3, True)


def test_a_board_per_console_is_refused(pong):
    board, state, inputs = pong
    boards = jax.tree.map(lambda x: jnp.stack([x] * BATCH), board)
    step = jax.vmap(lambda b, s, i: console.frame(b, s, i, False))
    with hybrid.hybrid(block=BLOCK, interpret=True), \
            pytest.raises(ValueError, match="one shared board"):
        jax.eval_shape(step, boards, state, inputs)
