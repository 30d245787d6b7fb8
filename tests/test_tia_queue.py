"""`jaxatari.tia_queue`: a batch's TIA writes queued in the CPU's lowering
end every frame in the bits of writes applied at their instructions.

Pong's consoles, out of step (their paddles apart), read the collision
latches and the paddles every frame, write VSYNC and VBLANK, and here
also stop at a lowered instruction cap in the middle of their frames: each
way a queued write must not wait is met. Drawn and undrawn frames
alternate (whether a frame is drawn is data, as an env's step gives it).

A queue's deferred latch reads, which Pong's frames never need (its reads
come after VBLANK's urgent drain), are checked against ALE by the TIA
ROMs (`tests/test_tia.py`, `latch_read_after_write` among others): a
queue that let such a read see undrawn latches failed `nusiz_2` there.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxatari
from jaxatari import bus, console, lowering, tia_queue

BATCH = 6
CAP = 4_000
"""A frame's instruction cap here: Pong runs about 6,700 instructions a
frame, so every call stops at the cap or at VSYNC in turn."""
RENDERS = (False, True, True, False, True)


def _consoles():
    env, params = jaxatari.make("pong")
    machines = params.reset_states.machine
    count = jax.tree.leaves(machines)[0].shape[0]
    state = jax.tree.map(lambda x: x[jnp.arange(BATCH) % count], machines)
    paddles = jnp.asarray([[1_000, -2], [5_000, -2], [9_000, -2],
                           [13_000, -2], [17_000, -2], [2_500, -2]])
    inputs = console.Inputs(
        swcha=jnp.full(BATCH, 0xFF, jnp.int32),
        swchb=jnp.full(BATCH, 0x0B, jnp.int32),
        fire=jnp.zeros((BATCH, 2), jnp.int32),
        paddle_needed=jnp.concatenate(
            [paddles, jnp.full((BATCH, 2), -2)], axis=1).astype(jnp.int32))
    return env.board, state, inputs


def _frames(board, state, inputs, queued: int, monkeypatch):
    monkeypatch.setattr(tia_queue, "SLOTS", queued)
    monkeypatch.setattr(console, "INSTRUCTIONS_PER_UPDATE", CAP)
    with lowering.forced(lowering.CPU):
        step = jax.jit(jax.vmap(lambda s, i, render: console.frame(
            board, s, i, render), in_axes=(0, 0, None)))
        partial = []
        for render in RENDERS:
            state = step(state, inputs, jnp.asarray(render))
            partial.append(np.asarray(state.partial))
    return jax.device_get(state), np.stack(partial)


@pytest.mark.slow
def test_queued_writes_end_in_the_bits_of_writes_applied_at_once(
        monkeypatch):
    board, state, inputs = _consoles()
    expected, expected_partial = _frames(board, state, inputs, 0,
                                         monkeypatch)
    got, got_partial = _frames(board, state, inputs,
                               tia_queue.SLOTS, monkeypatch)
    # Frames stopped at the cap and at VSYNC both.
    assert expected_partial.any() and not expected_partial.all()
    np.testing.assert_array_equal(got_partial, expected_partial)
    for path, x, y in zip(jax.tree_util.tree_leaves_with_path(expected),
                          jax.tree.leaves(expected), jax.tree.leaves(got)):
        np.testing.assert_array_equal(x, y, jax.tree_util.keystr(path))
    assert not np.array_equal(got.tia.screen, state.tia.screen)   # drawn


def test_a_queue_too_short_for_an_instruction_is_refused(monkeypatch):
    board, state, inputs = _consoles()
    monkeypatch.setattr(tia_queue, "SLOTS", bus.MAX_TIA_WRITES - 1)
    with lowering.forced(lowering.CPU), pytest.raises(
            ValueError, match="tia_queue.SLOTS"):
        jax.vmap(lambda s, i: console.frame(board, s, i, False))(state,
                                                                  inputs)
