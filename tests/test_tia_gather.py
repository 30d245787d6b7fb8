"""`jaxatari.tia_gather`: the TIA's draws for the first console needing
one in each group, gathered; the others wait with their state as it was.
Checked against `tia.write` and `tia.collide` run on each console alone
(the frame-level check, both lowerings giving the same bits with consoles
waiting, is `tests/test_lowering.py`)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxatari
from jaxatari import bus, console, lowering, tia, tia_gather, tia_log
from tests import accelerator_on_cpu

BATCH, SHARE = 8, 4
WRITERS = {0: 2, 1: 1, 6: 3}   # console: TIA writes logged (0 and 1 share
#                                a group, so 1 waits)


@pytest.fixture(scope="module")
def batch():
    """8 of Pong's consoles (its reset states), consoles `WRITERS` with
    TIA writes logged (COLUBK, WSYNC after a read, COLUPF) and a frame
    log each; its board's ystart and HMOVE blanks a row a console."""
    env, params = jaxatari.make("pong")
    machines = params.reset_states.machine
    count = jax.tree.leaves(machines)[0].shape[0]
    state = jax.tree.map(lambda x: x[jnp.arange(BATCH) % count], machines)
    log = np.zeros((BATCH, bus.MAX_TIA_WRITES, 4), np.int32)
    log_count = np.zeros(BATCH, np.int32)
    for lane, writes in WRITERS.items():
        cycle = int(state.cpu.cycles[lane])
        entries = [(0x09, 0x1E + lane, cycle, 0), (0x02, 0, cycle + 3, 1),
                   (0x08, 0x44, cycle + 3, 0)]
        log[lane, :writes] = entries[:writes]
        log_count[lane] = writes
    state = state.replace(
        log=jnp.asarray(log), log_count=jnp.asarray(log_count),
        frame_log=jax.tree.map(lambda x: jnp.broadcast_to(
            x, (BATCH,) + x.shape), tia_log.empty()))
    rows = tia_gather.board_rows(env.board, jax.tree.map(
        lambda _: None, env.board), BATCH, "ystart", "hmove_blanks")
    return state, rows


def _alone(state, lane: int, ystart, blanks):
    """Lane `lane`'s logged writes applied by `tia.write`, one by one."""
    machine = jax.tree.map(lambda x: x[lane], state.tia)
    waited, entries = 0, []
    for k in range(int(state.log_count[lane])):
        write = tia_gather.logged_write(state.log[lane, k], waited)
        entries.append(int(tia_log.encode_write(*write)))
        machine, wait, _ = tia.write(machine, *write, ystart[lane],
                                     blanks[lane], False)
        waited += int(wait)
    return machine, waited, entries


def test_apply_writes_applies_one_console_a_group_and_keeps_the_rest(batch):
    state, (ystart, blanks) = batch
    after, ended = jax.jit(lambda s: tia_gather.apply_writes(
        s, jnp.ones(BATCH, bool), ystart, blanks, SHARE))(state)
    assert not np.any(ended)
    for lane in range(BATCH):
        mine = jax.tree.map(lambda x: x[lane], after)
        before = jax.tree.map(lambda x: x[lane], state)
        if lane in (0, 6):   # each its group's first writer
            machine, waited, entries = _alone(state, lane, ystart, blanks)
            for name in machine.regs:
                np.testing.assert_array_equal(mine.tia.regs[name],
                                              machine.regs[name], name)
            assert int(mine.cpu.cycles) == int(before.cpu.cycles) + waited
            assert int(mine.log_count) == 0
            assert int(mine.frame_log.count) == len(entries)
            assert mine.frame_log.entries[:len(entries)].tolist() == entries
        else:   # lane 1 waits for its group's slot; the rest wrote nothing
            for x, y in zip(jax.tree.leaves(mine), jax.tree.leaves(before)):
                np.testing.assert_array_equal(x, y)
    assert int(after.log_count[1]) == WRITERS[1]


def test_latch_serves_the_first_reader_of_each_group(batch):
    state, (ystart, _) = batch
    line = 60 * tia.LINE   # mid-frame, the playfield, ball and P0 all on
    on = dict(collision=0, pf=0xFFFFF, vblank=0, enabl=2, grp0=0xFF,
              last_update=line)
    state = state.replace(tia=state.tia.set(**{
        name: jnp.full(BATCH, value, jnp.int32)
        for name, value in on.items()}))
    reads = jnp.asarray([0, 1, 1, 0, 0, 0, 0, 1], bool)
    clock = line + 300 + 40 * jnp.arange(BATCH, dtype=jnp.int32)
    after, waits = jax.jit(lambda s: tia_gather.latch(
        s, reads, clock, ystart, SHARE))(state)
    assert np.flatnonzero(waits).tolist() == [2]
    for lane in range(BATCH):
        expected = 0   # lane 2 waits, the others do not read
        if lane in (1, 7):
            expected = int(tia.collide(jax.tree.map(
                lambda x: x[lane], state.tia), clock[lane],
                ystart[lane]).collision)
            assert expected != 0
        assert int(after.tia.collision[lane]) == expected


def test_consoles_in_step_wait_for_their_draws_and_end_as_the_cpus():
    """8 Breakout consoles from one state, in step: at every TIA write and
    every latch read all 8 need a draw and 2 get one (a share of 4), so
    most wait. Two undrawn frames end in the same bits as the CPU's
    lowering gives."""
    env, params = jaxatari.make("breakout")
    one = jax.tree.map(lambda x: x[0], params.reset_states.machine)
    state = jax.tree.map(lambda x: jnp.broadcast_to(x, (BATCH,) + x.shape),
                         one)
    inputs = console.Inputs(
        swcha=jnp.full(BATCH, 0x7F, jnp.int32),
        swchb=jnp.full(BATCH, 0x0B, jnp.int32),
        fire=jnp.ones((BATCH, 2), jnp.int32),
        paddle_needed=jnp.full((BATCH, 4), -2, jnp.int32))
    ends = {}
    for variant in lowering.VARIANTS:
        with lowering.forced(variant), lowering.gather_shares(
                collisions=SHARE, writes=SHARE):
            step = accelerator_on_cpu.jit(jax.vmap(
                lambda s, i: console.frame(env.board, s, i, False)), variant)
            ends[variant] = jax.device_get(step(step(state, inputs), inputs))
    for path, x, y in zip(
            jax.tree_util.tree_leaves_with_path(ends[lowering.CPU]),
            jax.tree.leaves(ends[lowering.CPU]),
            jax.tree.leaves(ends[lowering.ACCELERATOR])):
        np.testing.assert_array_equal(x, y, jax.tree_util.keystr(path))


@pytest.mark.parametrize("apart", [False, True])
def test_write_one_by_one_draws_each_writer_as_it_alone_would(batch, apart):
    """A small batch in the CPU's lowering draws a slot's writes for the
    writing consoles alone, one after another (`write_one_by_one`; or
    the registers for all, masked, and the pixels one writer after
    another: `write_pixels_apart`); each
    slot must leave every console, pixels included, as the vmapped
    `console._write_logged` (which draws for all, masked) does, and the
    consoles that do not write untouched."""
    state, _ = batch
    env, _ = jaxatari.make("pong")
    axes = jax.tree.map(lambda _: None, env.board)
    # A new frame (the reset states ended one), the writes 40 lines into
    # its display, VBLANK off and the background coloured: their draws
    # land pixels.
    state = jax.vmap(lambda s: console._start_frame(env.board, s, True))(
        state)
    clock = state.tia.frame_start + tia.LINE * (env.board.ystart + 40)
    cycle = clock // 3 + 10
    log = state.log.at[:, :, 2].set(cycle[:, None] + jnp.array([0, 3, 3]))
    state = state.replace(log=log, tia=state.tia.set(
        vblank=jnp.zeros_like(state.tia.vblank),
        colubk=jnp.full_like(state.tia.colubk, 0x44)))
    undrawn = jax.vmap(lambda s, k, w, on: console._write_logged(
        env.board, None, False, s, k, w, on))
    ones = jax.jit(lambda s, k, w, on: tia_gather.write_pixels_apart(
        env.board, axes, undrawn, s, k, w, on) if apart else
        tia_gather.write_one_by_one(env.board, axes, True, s, k, w, on))
    alls = jax.jit(jax.vmap(lambda s, k, w, on: console._write_logged(
        env.board, None, True, s, k, w, on)))
    got = expected = state.replace(frame_log=None)
    got_waited = expected_waited = jnp.zeros(BATCH, jnp.int32)
    for slot in range(bus.MAX_TIA_WRITES):
        k = jnp.full(BATCH, slot, jnp.int32)
        on = state.log_count > slot
        got, got_waited, got_ends = ones(got, k, got_waited, on)
        expected, expected_waited, expected_ends = alls(
            expected, k, expected_waited, on)
        for path, x, y in zip(
                jax.tree_util.tree_leaves_with_path(expected),
                jax.tree.leaves(expected), jax.tree.leaves(got)):
            np.testing.assert_array_equal(
                x, y, f"slot {slot} {jax.tree_util.keystr(path)}")
        np.testing.assert_array_equal(got_waited, expected_waited)
        np.testing.assert_array_equal(got_ends, expected_ends)
    drawn = np.any(np.asarray(got.tia.screen != state.tia.screen),
                   axis=(1, 2, 3))
    assert set(np.flatnonzero(drawn)) <= set(WRITERS) and drawn.any()
    assert int(got_waited[6]) > 0   # the WSYNC after a read stalled
