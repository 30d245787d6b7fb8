"""`bus.step` in the CPU's lowering runs an instruction speculatively and
again, its latches drawn, where some console read a collision latch
(`bus._speculative_step`). It must end where the plan (`collision_read`,
which sets the latches first, as the accelerator's lowering does) ends:
over random instructions, registers, RAM, banks and TIA objects, drawn
so that the latches a read sees differ from the stale ones, each console
ends in the same state both ways wherever the plan was sure of its clock
(the bytes its addresses come from were plain ROM or RAM)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import bus, console, lowering, tia
from tests.console.test_collision_read import (_board, _collision_hits,
                                               _random_state)

BATCH = 2048


def _with_objects(state: console.Console, key: jax.Array) -> console.Console:
    """`state` some lines into the picture with random playfield, players,
    missiles and ball, undrawn since the line's start."""
    keys = jax.random.split(key, 4)
    byte = lambda k, n: jax.random.randint(k, (n,), 0, 256)
    graphics, places = byte(keys[0], 3), jax.random.randint(
        keys[1], (5,), 0, 160)
    enables = jax.random.randint(keys[2], (3,), 0, 2) * 2
    cycles = 76 * 60 + jax.random.randint(keys[3], (), 0, 76)
    regs = dict(pf=graphics[0] * 0x1011 & 0xFFFFF, grp0=graphics[1],
                grp1=graphics[2], cur_grp0=graphics[1], cur_grp1=graphics[2],
                enam0=enables[0], enam1=enables[1], enabl=enables[2],
                posp0=places[0], posp1=places[1], posm0=places[2],
                posm1=places[3], posbl=places[4],
                last_update=(cycles // 76) * 228)
    return state.replace(tia=state.tia.set(**regs),
                         cpu=state.cpu.replace(cycles=cycles))


def _step(board, state, speculative: bool):
    """`bus.step` for a batch in the CPU's lowering, one way or the other
    (`bus.SPECULATIVE_LATCHES`, read while tracing)."""
    old, bus.SPECULATIVE_LATCHES = bus.SPECULATIVE_LATCHES, speculative
    try:
        with lowering.forced(lowering.CPU):
            return jax.jit(jax.vmap(
                lambda s: bus.step(board, console._idle_inputs(), s,
                                   jnp.asarray(True), "batch"),
                axis_name="batch"))(state)
    finally:
        bus.SPECULATIVE_LATCHES = old


@pytest.mark.parametrize("size,scheme", [(4096, "4K"), (8192, "F8")])
def test_speculative_step_ends_where_the_plan_does(tmp_path, size, scheme):
    board = _board(tmp_path, size, scheme)

    @jax.jit
    def states_and_reads(key):
        def one(k):
            first, second = jax.random.split(k)
            state = _with_objects(_random_state(board, first, size > 4096),
                                  second)
            hits, clock, sure = _collision_hits(board, state)
            seen = tia.collide(state.tia, clock, board.ystart).collision
            stale = jnp.any(hits) & (seen != state.tia.collision)
            return state, sure, stale
        return jax.vmap(one)(jax.random.split(key, BATCH))

    state, sure, stale = states_and_reads(jax.random.key(size))
    sure, stale = np.asarray(sure), np.asarray(stale)
    # Enough consoles read latches that the draw changes, or a step that
    # never ran again would pass.
    assert (stale & sure).sum() > BATCH // 100, (stale & sure).sum()
    speculative = _step(board, state, True)
    planned = _step(board, state, False)
    _assert_leaves_equal(planned, speculative, sure)


def test_a_return_address_pulled_from_the_latches_runs_again(tmp_path):
    """A latch read that is not the instruction's data read runs it again
    too. An RTS with the stack pointer at $FF pulls its return address
    from $100 and $101 (CXM0P, CXM1P) in slots 2 and 3: its new PC, and
    all else, is what the plan, which sets the latches first, gives. (The
    random instructions above read the latches almost only as data: the
    plan is unsure of an operand or pointer read from the TIA.)"""
    board = _board(tmp_path, 4096, "4K")
    image = np.asarray(board.cart.image)
    offsets = np.flatnonzero(image[:4096] == 0x60)   # RTS
    assert offsets.size, "no RTS in the random ROM"

    @jax.jit
    def states(key):
        def one(k):
            first, second = jax.random.split(k)
            state = _with_objects(_random_state(board, first, False), second)
            cpu = state.cpu.replace(pc=jnp.int32(0xF000 | int(offsets[0])),
                                    sp=jnp.int32(0xFF))
            state = state.replace(cpu=cpu)
            hits, clock, _ = _collision_hits(board, state)
            seen = tia.collide(state.tia, clock, board.ystart).collision
            return state, hits, (seen & 0xF) != (state.tia.collision & 0xF)
        return jax.vmap(one)(jax.random.split(key, BATCH))

    state, hits, stale = states(jax.random.key(7))
    hits = np.asarray(hits)   # read slots: the opcode, then slots 1 to 7
    assert hits[:, 2].all() and hits[:, 3].all() and not hits[:, 5].any()
    # About 2% of them: enough that a step that did not run again fails.
    assert np.asarray(stale).sum() >= 16, np.asarray(stale).sum()
    speculative = _step(board, state, True)
    planned = _step(board, state, False)
    _assert_leaves_equal(planned, speculative, slice(None))


def _assert_leaves_equal(expected, got, where) -> None:
    """Every leaf of `got` is `expected`'s at the consoles `where`."""
    for path, x, y in zip(jax.tree_util.tree_leaves_with_path(expected),
                          jax.tree.leaves(expected), jax.tree.leaves(got)):
        x, y = np.asarray(x), np.asarray(y)
        np.testing.assert_array_equal(
            x[where], y[where], err_msg=jax.tree_util.keystr(path[0]))
