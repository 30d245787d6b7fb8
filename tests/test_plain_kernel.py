"""`jaxatari.plain_kernel` in the accelerator's loop: frames whose
instructions run in one Pallas kernel (here in Pallas's interpreter), their
TIA writes queued and applied by XLA after it, and whose TIA reads and
hotspot accesses run in XLA's step, end in the CPU lowering's bits, drawn
or not; the kernel queues TIA writes until it cannot; and the loop takes
the kernel only where it can."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxatari
from benchmarks import kernel_steps
from jaxatari import console, lowering, plain_kernel
from tests import accelerator_on_cpu, jaxprs

BATCH = 6
"""Not a power of 2: the kernel's block of 8 is padded with 2 consoles
that do not run."""


def _consoles(game: str):
    """6 consoles of `game` from its reset states, with varied joysticks."""
    env, params = jaxatari.make(game)
    machines = params.reset_states.machine
    count = jax.tree.leaves(machines)[0].shape[0]
    state = jax.tree.map(lambda x: x[jnp.arange(BATCH) % count], machines)
    inputs = console.Inputs(
        swcha=jnp.asarray([0xFF, 0x7F, 0xBF] * 2, jnp.int32),
        swchb=jnp.full(BATCH, 0x0B, jnp.int32),
        fire=jnp.asarray([[0, 0], [1, 0], [0, 0]] * 2, jnp.int32),
        paddle_needed=jnp.full((BATCH, 4), -2, jnp.int32))
    return env.board, state, inputs


@pytest.fixture(scope="module")
def pong():
    return _consoles("pong")


def _frames(board, state, inputs, renders: tuple[bool, ...], variant: str):
    """The frames of one program in lowering `variant`, whether each is
    drawn given as data (as `AtariEnv.step` gives it on an accelerator)."""
    step = accelerator_on_cpu.jit(jax.vmap(lambda s, i, render: console.frame(
        board, s, i, render), in_axes=(0, 0, None)), variant)
    for render in renders:
        state = step(state, inputs, jnp.asarray(render))
    return jax.device_get(state)


RENDERS = (False, True)
"""An undrawn frame, then a drawn one (its screen compared too)."""


IN_KERNEL = {"montezuma_revenge": 2_400, "elevator_action": 5_300}
"""The games whose frames are checked, and the instructions the kernel
must run of each console's frame, at least: it ran 2,920 (Montezuma's
Revenge's frames are cut at `CAP`) and 5,669. Montezuma's Revenge is an
E0 cart: its four 1K segments switch at hotspots, which the kernel leaves
to XLA's step. Elevator Action is an F8SC cart: its banks switch at
hotspots too, and its Superchip RAM ports are events. A kernel blind to
either fails its game, and so does one that queues TIA writes without
their WSYNC stalls. Pong (a 2K cart, about 6,600 of its 6,800
instructions a frame in the kernel) passed here too, and so did a Pong
frame cut at 1,500 instructions; they left this test for CI's time."""


CAP = {"montezuma_revenge": 3_000}
"""A frame's instruction cap (`console.INSTRUCTIONS_PER_UPDATE`, 25,000)
in a game's check, where lowered. The game boots under the cap too, and
its reset states are those of that boot (the boot cache keys on the cap,
so such a boot is never another process's). At 3,000 its frames stop at
the cap, partial (as Q*bert's boot stops), while the screen is drawn: in
16 trips of the kernel's loop, up to all 6 consoles stood at the cap
with TIA writes still queued, and the loop drained them. The check
applies one queued write a trip and reads the loop's predicate every
trip (`lowering.CHUNK` 1), so no trip is spare: a loop that stopped a
console at the cap with its queue unapplied failed it, and so did one
that left the spent TIA log as it is (`console._end`) and a kernel that
queued writes without their WSYNC stalls. (Caps of 1,000, 4,000 and
4,600 fell in timer waits, with no write queued; at 2,500 no frame
reached the cap.)"""


@pytest.mark.slow
@pytest.mark.parametrize("game", sorted(IN_KERNEL))
def test_kernel_frames_end_as_the_cpus(game, monkeypatch):
    """Two frames, the kernel in the loop, end in the CPU's lowering's
    bits, and the kernel ran most of their instructions."""
    if game in CAP:   # and the queue drained a write a trip
        monkeypatch.setattr(console, "INSTRUCTIONS_PER_UPDATE", CAP[game])
        monkeypatch.setattr(console, "QUEUE_APPLIED", 1)
        monkeypatch.setattr(lowering, "CHUNK", 1)   # no trips to spare
    board, state, inputs = _consoles(game)
    with lowering.forced(lowering.CPU):
        expected = _frames(board, state, inputs, RENDERS, lowering.CPU)
    in_kernel = []
    monkeypatch.setattr(plain_kernel, "run", kernel_steps.counting(
        plain_kernel.run, in_kernel))
    with lowering.forced(lowering.ACCELERATOR), \
            lowering.plain_kernel("interpret"):
        got = _frames(board, state, inputs, RENDERS,
                      lowering.ACCELERATOR)
    for path, x, y in zip(jax.tree_util.tree_leaves_with_path(expected),
                          jax.tree.leaves(expected), jax.tree.leaves(got)):
        np.testing.assert_array_equal(x, y, jax.tree_util.keystr(path))
    assert sum(in_kernel) > BATCH * len(RENDERS) * IN_KERNEL[game], \
        sum(in_kernel)
    assert not np.array_equal(got.tia.screen, state.tia.screen)   # drawn


@jax.jit
def _kernel_call(board, state, inputs, queued, frame_shift):
    """One kernel call (Pallas's interpreter) from `state`, its frame
    started `frame_shift` clocks earlier, with `queued` writes queued
    already."""
    batch = state.cpu.pc.shape[0]
    state = state.replace(tia=state.tia.set(
        frame_start=state.tia.frame_start - frame_shift))
    queue = jnp.zeros((batch, plain_kernel.QUEUE * plain_kernel.ENTRY),
                      jnp.int32)
    return plain_kernel.run(
        board, inputs, state, jnp.ones(batch, bool),
        jnp.zeros(batch, jnp.int32), queue, jnp.full(batch, queued),
        console.INSTRUCTIONS_PER_UPDATE, steps=2048, block=8,
        interpret=True)[1:]   # past the frame's first timer wait


def test_the_kernel_queues_tia_writes_until_it_cannot(pong):
    """TIA writes (but VSYNC's) join the queue, in order; a write that
    would overflow it, or that falls past the frame's scanline limit
    (and so would end the frame), is an event instead."""
    board, state, inputs = pong
    count, at_event, queue, queued = jax.device_get(
        _kernel_call(board, state, inputs, 0, 0))
    assert (queued > 0).all() and (count > 0).all(), (queued, count)
    entries = queue.reshape(BATCH, plain_kernel.QUEUE, plain_kernel.ENTRY)
    for lane in range(BATCH):
        held = entries[lane, :queued[lane]]
        assert ((held[:, 0] & 0x1080) == 0).all(), held   # the TIA's
        assert ((held[:, 0] & 0x3F) != 0).all(), held      # not VSYNC
        assert (np.diff(held[:, 2]) > 0).all(), held       # in order
    full = plain_kernel.QUEUE
    for start, shift in ((full, 0), (0, 10**6)):   # full; past the limit
        blocked = jax.device_get(_kernel_call(board, state, inputs, start,
                                              shift))
        assert (blocked[3] == start).all() and blocked[1].all(), blocked
        assert (blocked[0] < count).all(), (blocked[0], count)


def _frame_primitives(board, state, inputs, board_axis=None) -> set[str]:
    frame = jax.vmap(lambda b, s, i: console.frame(b, s, i, False),
                     in_axes=(board_axis, 0, 0))
    with lowering.forced(lowering.ACCELERATOR):
        return jaxprs.primitives(jax.make_jaxpr(frame)(board, state,
                                                       inputs).jaxpr)


def test_the_gpu_mode_traces_the_kernel_for_cuda_alone(pong):
    """By default the kernel is a `platform_dependent` branch (CUDA's);
    "off" leaves it out."""
    board, state, inputs = pong
    with lowering.plain_kernel("gpu"):   # the default (not the suite's)
        assert {"pallas_call", "platform_index"} <= _frame_primitives(
            board, state, inputs)
    with lowering.plain_kernel("off"):
        assert "pallas_call" not in _frame_primitives(board, state, inputs)


def test_a_board_per_console_or_a_dpc_cart_runs_xla_alone(pong):
    board, state, inputs = pong
    boards = jax.tree.map(lambda x: jnp.stack([x] * BATCH), board)
    with lowering.plain_kernel("interpret"):
        assert "pallas_call" not in _frame_primitives(boards, state,
                                                      inputs, 0)
    dpc = board.replace(features=board.features._replace(dpc=True))
    assert not plain_kernel.supports(dpc)
    assert plain_kernel.supports(board)
    with lowering.plain_kernel("interpret"):
        assert "pallas_call" not in _frame_primitives(dpc, state, inputs)
        assert "pallas_call" in _frame_primitives(board, state, inputs)


def test_an_unknown_mode_is_refused_and_a_known_one_is_read_back():
    with pytest.raises(ValueError, match="unknown plain-kernel mode"):
        with lowering.plain_kernel("triton"):
            pass
    with lowering.plain_kernel("interpret"):
        assert lowering.plain_kernel_mode() == "interpret"


@pytest.mark.parametrize("batch, block", [(1, 1), (6, 8), (100, 128),
                                          (4096, 128), (65536, 128)])
def test_block_for(batch, block):
    assert plain_kernel.block_for(batch) == block
