"""The frame's TIA log (`jaxatari.tia_log`): its entries, its capacity,
and its replay (the accelerator's lowering draws a frame's pixels from
it; `tests/test_lowering.py` checks that against the CPU's lowering,
which draws them during the instructions, on a batch of nine games)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxatari
from jaxatari import console, lowering, tia_log
from tests import accelerator_on_cpu


def test_an_entry_decodes_to_what_was_written():
    entry = tia_log.encode_write(jnp.int32(0x1042), jnp.int32(0x1AB),
                                 jnp.int32(12345), jnp.asarray(True))
    register, value, cycle, read, line_end = tia_log.decode(entry)
    assert (int(register), int(value), int(cycle)) == (0x02, 0xAB, 12345)
    assert bool(read) and not bool(line_end)
    *_, line_end = tia_log.decode(tia_log.line_end())
    assert bool(line_end)


def test_a_cycle_past_the_last_one_stored_is_clipped():
    entry = tia_log.encode_write(jnp.int32(0x01), jnp.int32(0),
                                 jnp.int32(300_000), jnp.asarray(False))
    assert int(tia_log.decode(entry)[2]) == tia_log.MAX_CYCLE
    # Every write that does not end the frame lands before PAL's last
    # scanline (342) plus one, well under the largest cycle stored.
    assert (342 + 1) * 76 < tia_log.MAX_CYCLE


def test_capacity_covers_the_densest_frame():
    # BRK writes 3 bytes in 7 cycles, the densest a 6507 can write; a frame
    # that does not end runs at most 343 lines of 76 cycles; then the
    # last instruction's 3 writes and a line end per displayed row (250).
    assert tia_log.CAPACITY >= 343 * 76 * 3 / 7 + 3 + 250


def test_append_counts_only_the_entries_on():
    log = tia_log.empty()
    for value, on in ((1, True), (2, False), (3, True)):
        log = tia_log.append(log, jnp.int32(value), jnp.asarray(on))
    assert int(log.count) == 2
    np.testing.assert_array_equal(log.entries[:2], [1, 3])


def test_extend_adds_the_first_count_entries_as_appends_would():
    appended = extended = tia_log.empty()
    for values, count in (([5, 6, 7], 2), ([8, 9, 1], 0), ([2, 3, 4], 3)):
        extended = tia_log.extend(extended, jnp.asarray(values, jnp.int32),
                                  jnp.int32(count))
        for k, value in enumerate(values):
            appended = tia_log.append(appended, jnp.int32(value),
                                      jnp.asarray(k < count))
    assert int(extended.count) == int(appended.count) == 5
    np.testing.assert_array_equal(extended.entries[:5], [5, 6, 2, 3, 4])
    np.testing.assert_array_equal(appended.entries[:5], [5, 6, 2, 3, 4])


def test_extend_drops_what_passes_the_capacity():
    full = tia_log.FrameLog(
        entries=jnp.zeros(tia_log.CAPACITY, jnp.int32),
        count=jnp.int32(tia_log.CAPACITY - 1))
    log = tia_log.extend(full, jnp.asarray([7, 8, 9], jnp.int32),
                         jnp.int32(1))
    assert int(log.entries[-1]) == 7 and int(log.count) == tia_log.CAPACITY


def test_one_console_draws_the_same_pixels_in_both_lowerings():
    """Unbatched (the single environment's path), on Journey Escape: the
    Cosmic Ark motion puts line ends in the log."""
    env, params = jaxatari.make("journey_escape")
    state = jax.tree.map(lambda x: x[0], params.reset_states.machine)
    inputs = console.Inputs(
        swcha=jnp.int32(0x7F), swchb=jnp.int32(0x0B),
        fire=jnp.array([1, 0], jnp.int32),
        paddle_needed=jnp.full((4,), -2, jnp.int32))
    screens = {}
    for variant in lowering.VARIANTS:
        with lowering.forced(variant):
            step = accelerator_on_cpu.jit(lambda s: console.frame(
                env.board, s, inputs, True), variant)
            machine = step(step(state))
        screens[variant] = jax.device_get(machine)
    for a, b in zip(jax.tree.leaves(screens[lowering.CPU]),
                    jax.tree.leaves(screens[lowering.ACCELERATOR])):
        np.testing.assert_array_equal(a, b)
    assert np.any(console.screen(screens[lowering.CPU]) != 0)
