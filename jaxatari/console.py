"""The Atari 2600: frame loop and power-on, as ALE runs them.

The bus is `jaxatari.bus`.

The frame loop
--------------
`frame` is one call of Stella's `TIA::update`: unless the previous frame was
cut short, start a frame (cycle counters rebased to the current scanline
phase, buffers swapped), then run up to 25,000 instructions until a TIA
write ends the frame (VSYNC cleared a scanline or more after it was set, or
a write past scanline 290). A frame that hits the instruction cap is
*partial*: the next call continues it (Q*bert's boot does this). Its screen
shows only what the TIA drew up to its last TIA access, as Stella's lazy TIA
leaves it: the rest is the frame before last (greyed from the scanline
reached on), so the screen is never drawn ahead of the CPU's TIA accesses.

Static features
---------------
What a board needs beyond plain ROM is compiled in only where a game needs
it: `Board.features` (static, part of the pytree structure) says whether
the program carries Superchip RAM, the DPC chip, and how many screen rows
(210, or 250 for a game ALE runs as PAL). The console state follows it:
`Console.chips` has no RAM or DPC arrays at all without those features, so
the games with plain carts run the same program as before. Consoles of
different games share one program by `widen_board`-ing their boards to
the union of their features; per-console data (`CartArrays.has_ram`,
`.dpc`) then keeps a cart's extras off for the others.

Display format
--------------
ALE decides NTSC or PAL after 60 frames run as NTSC (`environment.
load_rom`) and tells the TIA at every later reset; `system_reset` takes
it in `ResetInputs.pal` and the TIA keeps it as data.

Pixels
------
A TIA write draws (collisions, and pixels if the frame is rendered) from
the render frontier to its clock. Where the pixels are drawn is chosen per
backend (`_pixels_after`). The CPU's lowering draws them during the
instruction loop, as each write comes. The accelerator's draws none there,
and carries no screen in its loop: a frame whose pixels are wanted logs
its TIA writes (and Cosmic Ark line ends) with their cycles, and after the
loop `_render_phase` replays the log with pixels from the TIA as the loop
found it (`jaxatari.tia_log`): the same operations in the same order, so
the same pixels, with pixel work once per TIA write of each console
instead of at every instruction.

Under vmap
----------
`frame` has its own batching rule (`jax.custom_batching.custom_vmap`,
`_frame_program`). A
vmapped `lax.while_loop` whose predicate differs per console would select
each console's whole state, both screens included, at every instruction.
The rule instead loops while *any* console of the batch runs, carries a
`running` mask, and gates every change by it: the CPU disables every bus
access of a console not running (`cpu6502.step`'s `enabled`), and screen
rows have the row writes' own enable. The inner loop over an instruction's
logged TIA writes is predicated on the batch the same way. A batch thus
costs as many iterations as its longest frame, and each iteration is plain
elementwise work over the batch. A vmap around that (a population of
batches, members x envs) joins the batch (`_batch_program`): M batches of
B run as one batch of M*B, so the batch-wide conds below stay conds.

Work that no console of the batch needs is skipped by a `lax.cond` on a
batch-wide flag (`bus.when_any`; a per-console flag would turn the cond into
a select of both branches): a bus access that no console makes (the CPU
has 12 access calls, 8 reads and 4 writes, and an instruction makes 1 to
7 of them; each evaluates the cartridge, the RIOT and the TIA). On the
CPU this sped one game's batches up about twofold (BENCHMARKS.md).

Two lowerings
-------------
On a GPU every conditional, and every iteration of a while loop whose trip
count XLA cannot see, waits for a copy of its predicate to the host. So
the instruction loop is traced twice (once, the CPU's, in a process whose
default backend is the CPU) and `jax.lax.platform_dependent` keeps one
(`jaxatari.lowering`): the CPU's, as above (`_cpu_loop`), and
the accelerator's (`_accelerator_loop`), where every batch-wide `cond`
becomes the work itself (each console's changes are gated by its own
masks anyway), the TIA write loop runs its 3 slots, a frame's pixels
are drawn after its instructions from its TIA log (none where `render`
is off), and the instructions run in chunks of `lowering.CHUNK` with a
static trip count, the batch's predicate read once a chunk. Both give
the same bits (`tests/test_lowering.py`).

A TIA write is the costly part of an instruction (a draw: collisions and
up to four rows of pixels), and only about a fifth of a batch writes at
any one instruction. In the CPU's lowering a batch's consoles queue
their writes and the queues are applied together, a slot of every
console at a time, where the CPU could not see the difference
(`jaxatari.tia_queue`). In the CPU's lowering, a batch of up to 2,048
(`updates.KERNEL_MAX_BATCH`, of one game or several), whose frame loop
XLA:CPU compiles into one kernel, draws a rendered frame's writes for the
writing consoles alone, one after another, with slice updates only
(`tia_gather.write_one_by_one`); its unrendered frames draw for all,
masked (a draw without pixels is cheap; a frame told by data whether it
is drawn picks one of the two at each write, `tia_gather.writer`). A
larger batch gathers the writing consoles, 3/16 of the batch at a time,
draws for those only, and scatters their registers and screen rows back
(`tia_gather.write_compacted`). The accelerator's lowering has no loop to
gather in: it cuts the batch into groups of consecutive consoles and
each step draws for one console a group, the first that needs it
(`lowering.GATHER_SHARES`: 1 in 4 for TIA writes, 1 in 16 for the
latches a read sees); the others wait, their state as it was, so the
bits are the same (`tia_gather`).
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from flax import struct

from jaxatari import cart as cartridge
from jaxatari import (bus, cpu6502, dpc, lowering, plain_kernel, riot, tia,
                      tia_gather, tia_log, tia_queue, updates)
from jaxatari.board import (  # noqa: F401 (console's API)
    Board, Features, board_for_format, cart_features, display_format,
    make_board, union_features, widen_board)
from jaxatari.system_rng import (RAM_DRAWS, ResetInputs, reset_timer,
                                 system_draws)

INSTRUCTIONS_PER_UPDATE = 25_000
BATCH_AXIS = "consoles"  # the vmap axis name of a batch inside `frame`


class Inputs(NamedTuple):
    """The controller and switch lines during a frame.

    swcha: port A pins; swchb: the console switches; fire: int32[2] INPT4/5
    pressed; paddle_needed: int32[4] for INPT0-3 (see `tia.read`).
    """
    swcha: jax.Array
    swchb: jax.Array
    fire: jax.Array
    paddle_needed: jax.Array


@struct.dataclass
class Console:
    """The whole machine state (one console; vmap adds a batch axis)."""
    cpu: cpu6502.CPUState
    riot: riot.RIOTState
    tia: tia.TIAState
    segments: jax.Array
    chips: cartridge.CartChips  # Superchip RAM / DPC, as the board needs
    data_bus: jax.Array
    last_read: jax.Array
    log_count: jax.Array
    log: jax.Array          # int32[3, 4]: address, value, cycle, last_read
    partial: jax.Array      # the last frame was cut short
    # Only inside a frame the accelerator's lowering renders: its TIA log.
    frame_log: tia_log.FrameLog | None = None


# --------------------------------------------------------------------------
# The bus.
# --------------------------------------------------------------------------


def _execute(board: Board, inputs: Inputs, render, state: Console,
             running: jax.Array, axis_name: str | None = None,
             latched: bool = False) -> Console:
    """Run one instruction's CPU part if `running` (its TIA writes are
    only logged; every bus access of a console not running is disabled,
    so its state stays as it was); `latched`: its collision latches are
    set already (`bus.step`)."""
    del render
    cpu, after = bus.step(board, inputs, state, running, axis_name, latched)
    return after.replace(cpu=cpu)


def _line_end_due(board: Board, inputs: Inputs, render, state: Console,
                  running: jax.Array) -> jax.Array:
    del inputs, render
    return running & tia.line_end_due(state.tia, state.cpu.cycles * 3,
                                      board.ystart)


def _draw_line_end(board: Board, inputs: Inputs, render, state: Console,
                   due: jax.Array) -> Console:
    del inputs
    drawn = state.replace(tia=tia.draw_line_end(state.tia, board.ystart,
                                                 render, due))
    if state.frame_log is None:
        return drawn
    return drawn.replace(frame_log=tia_log.append(
        state.frame_log, tia_log.line_end(), due))


def _cosmic_lines(board, inputs, render, state, running, over, anywhere):
    """Stella's Cosmic Ark motion moves M0 at every line end. While a
    running console has it on and a display line end behind its clock,
    draw that console to the line end, so that the next instruction's
    draws cross at most one (`tia.update`). Without the motion in the
    batch the loop takes no step. (The CPU's lowering; the accelerator's
    draws one line end per step of its loop instead: `_accelerator_step`.)
    """
    def due(state):
        return over(_line_end_due)(board, inputs, render, state, running)

    def body(state):
        return over(_draw_line_end)(board, inputs, render, state, due(state))

    return jax.lax.cond(
        anywhere(due(state)),
        lambda s: jax.lax.while_loop(lambda t: anywhere(due(t)), body, s),
        lambda s: s, state)


def _write_logged(board: Board, inputs: Inputs, render, state: Console,
                  k: jax.Array, waited: jax.Array, on: jax.Array,
                  stalled: bool = False):
    """Apply logged TIA write `k` if `on`; WSYNC stalls the CPU.

    A stall delays the instruction's later accesses too (`waited` is the
    stall so far): a JSR that pushes into WSYNC then VBLANK writes VBLANK
    at the end of the line. `stalled`: the log is `plain_kernel`'s queue,
    whose stalls are on the entries and the CPU's cycles already.
    """
    del inputs
    new_tia, wait, ends = tia.write(
        state.tia, *tia_gather.logged_write(state.log[k], waited),
        board.ystart, board.hmove_blanks, render, on)
    if stalled:
        return state.replace(tia=new_tia), waited, ends
    cpu = state.cpu.replace(cycles=state.cpu.cycles + wait)
    return state.replace(tia=new_tia, cpu=cpu), waited + wait, ends


def _log_write(board: Board, inputs: Inputs, render,
               frame_log: tia_log.FrameLog, log: jax.Array, k: jax.Array,
               waited: jax.Array, on: jax.Array) -> tia_log.FrameLog:
    """Add the instruction's TIA write `k` (of `log`, `Console.log`) to
    the frame's log if `on`."""
    del board, inputs, render
    return tia_log.append(frame_log, tia_log.encode_write(
        *tia_gather.logged_write(log[k], waited)), on)


def _per_console(batched):
    """How the loop maps per-console work `fn(board, inputs, render, *per)`:
    as is, or vmapped over a batch (`batched` holds the vmap axes of board
    and inputs; the rest are batched, render is shared, and may be a
    Python bool)."""
    if batched is None:
        return lambda fn: fn
    board_axes, inputs_axes = batched

    def over(fn):
        def mapped(board, inputs, render, *per):
            axes = (board_axes, inputs_axes) + (0,) * len(per)
            return jax.vmap(lambda b, i, *p: fn(b, i, render, *p),
                            in_axes=axes, axis_name=BATCH_AXIS)(
                board, inputs, *per)
        return mapped
    return over


def _apply_tia_writes(loop: _Loop, state: Console, running: jax.Array,
                      write_each=None):
    """Apply every running console's logged TIA writes, in order, and add
    them to the frame's log if it has one.

    `write_each(state, k, waited, on)` (default `loop.write_each`) applies
    write `k` of the consoles `on` (`_write_logged`, per console or
    compacted). The loop's predicate is over the whole batch
    (`loop.anywhere`), so a batch loops as long as its busiest console
    and no carry is selected.
    """
    slots = state.log.shape[-2]
    count = jnp.where(running, jnp.minimum(state.log_count, slots), 0)
    anywhere, write_each = loop.anywhere, write_each or loop.write_each

    def body(carry):
        k, state, waited, stop = carry
        if state.frame_log is not None:
            state = state.replace(frame_log=loop.over(_log_write)(
                loop.board, loop.inputs, loop.render, state.frame_log,
                state.log, k, waited, k < count))
        state, waited, ends = write_each(state, k, waited, k < count)
        return k + 1, state, waited, stop | ends

    k0 = jnp.zeros_like(count)
    carry = (k0, state, k0, jnp.zeros_like(running))
    if lowering.batch_conds():
        carry = jax.lax.while_loop(lambda c: anywhere(c[0] < count), body,
                                   carry)
    elif lowering.unrolled_write_slots():   # straight-line code
        for _ in range(slots):
            carry = body(carry)
    else:   # static trip count: no predicate for the host to wait on
        carry = jax.lax.fori_loop(0, slots, lambda _, c: body(c), carry)
    _, state, _, stop = carry
    return state.replace(log_count=jnp.zeros_like(state.log_count)), stop


def _start_frame(board: Board, state: Console, render) -> Console:
    """Stella's `startFrame`: rebase every cycle count to the new frame."""
    cycles = state.cpu.cycles
    chips = state.chips
    if chips.dpc is not None:
        chips = chips.replace(dpc=dpc.rebase(chips.dpc, cycles))
    return state.replace(
        cpu=state.cpu.replace(cycles=jnp.int32(0)), chips=chips,
        riot=riot.rebase(state.riot, cycles),
        tia=tia.start_frame(state.tia, cycles, board.ystart, render))


def _begin(board: Board, state: Console, render) -> Console:
    """Start a frame unless the last one was cut short."""
    started = _start_frame(board, state, render)
    return jax.tree.map(lambda a, b: jnp.where(state.partial, b, a),
                        started, state)


def _end(board: Board, state: Console, render, stop) -> Console:
    """Draw up to the last read and close the frame (partial if not
    `stop`). The TIA write log, spent (`log_count` is 0 between
    instructions), is cleared: where a loop queued its writes elsewhere
    (`plain_kernel`) it holds other entries."""
    partial = ~stop
    drawn = tia.draw_to_last_read(state.tia, board.ystart, render,
                                  board.features.cosmic_lines)
    finished = tia.finish_frame(drawn, state.cpu.cycles, board.ystart,
                                partial)
    return state.replace(tia=finished, partial=partial,
                         log=jnp.zeros_like(state.log))


class _Loop(NamedTuple):
    """What the instruction loop's steps share (see `_run_frame`)."""
    board: Board
    inputs: Inputs
    render: bool | jax.Array
    over: object          # `_per_console`
    anywhere: object      # any console of the batch
    write_each: object    # `_write_logged`, per console or compacted
    axis_name: str | None
    board_axes: object    # the board's vmap axes (a batch), or None


def _instruction(loop: _Loop, state: Console, running: jax.Array,
                 latched: bool = False):
    """One instruction of the consoles `running`, its TIA writes applied:
    the new state and which consoles' frames it ended (`latched`: their
    collision latches are set already)."""
    return _apply_tia_writes(loop, _executed(loop, state, running, latched),
                             running)


def _executed(loop: _Loop, state: Console, running: jax.Array,
              latched: bool) -> Console:
    """The CPU part of one instruction of the consoles `running`
    (`_execute`), its TIA writes only logged."""
    execute = functools.partial(_execute, axis_name=loop.axis_name,
                                latched=latched)
    return loop.over(execute)(loop.board, loop.inputs, loop.render, state,
                              running)


def _cpu_loop(loop: _Loop, state: Console, running: jax.Array):
    """The CPU's instruction loop: one instruction per iteration, until no
    console of the batch runs; returns the state and which frames ended.
    A batch queues its TIA writes where it can (`_queues`)."""
    if _queues(loop, state):
        return _queued_cpu_loop(loop, state, running)

    def body(carry):
        count, state, running, stop = carry
        if loop.board.features.cosmic_lines:
            state = _cosmic_lines(loop.board, loop.inputs, loop.render,
                                  state, running, loop.over, loop.anywhere)
        state, ends = _instruction(loop, state, running)
        running = _still_running(state, running, ends, count + 1)
        return count + 1, state, running, stop | ends

    with jax.named_scope(lowering.INSTRUCTION_LOOP):
        _, state, _, stop = jax.lax.while_loop(
            functools.partial(_cpu_loop_goes_on, loop), body,
            (jnp.int32(0), state, running, jnp.zeros_like(running)))
    return state, stop


def _queues(loop: _Loop, state: Console) -> bool:
    """Whether the CPU's loop queues the batch's TIA writes
    (`tia_queue.SLOTS`): for a batch (not one console) whose step
    speculates on its latches (`bus.speculates`), keeping no TIA log."""
    return (tia_queue.checked_slots() > 0 and loop.axis_name is not None
            and bus.speculates(state) and state.frame_log is None)


def _queued_cpu_loop(loop: _Loop, state: Console, running: jax.Array):
    """`_cpu_loop` with each console's TIA writes queued and the batch's
    queues drained together (`tia_queue`). A console that read a latch
    with writes queued runs that instruction again after the drain, so
    the instruction cap counts each console's own instructions."""
    line_ends = loop.board.features.cosmic_lines

    def body(carry):
        trips, count, state, running, stop, queue = carry
        if line_ends:   # a console with the motion on has no queue
            state = _cosmic_lines(loop.board, loop.inputs, loop.render,
                                  state, running, loop.over, loop.anywhere)
        execute = functools.partial(_execute_deferring,
                                    axis_name=loop.axis_name)
        state, deferred = loop.over(execute)(
            loop.board, loop.inputs, loop.render, state, running,
            queue.count > 0)
        count = count + (running & ~deferred)
        stops = state.cpu.jammed | (count >= INSTRUCTIONS_PER_UPDATE)
        state, queue, ends = tia_queue.settle(
            state, queue, running, deferred, stops,
            functools.partial(_drain, loop), loop.anywhere, line_ends)
        running = _still_running(state, running, ends, count)
        return trips + 1, count, state, running, stop | ends, queue

    def goes_on(carry):   # a console waits a trip at most per instruction
        trips, running = carry[0], carry[3]
        return loop.anywhere(running) & (
            trips < 2 * INSTRUCTIONS_PER_UPDATE)

    zeros = jnp.zeros_like(running, jnp.int32)
    with jax.named_scope(lowering.INSTRUCTION_LOOP):
        carry = jax.lax.while_loop(goes_on, body, (
            jnp.int32(0), zeros, state, running, jnp.zeros_like(running),
            tia_queue.empty(running.shape[0], tia_queue.checked_slots())))
    return carry[2], carry[4]


def _drain(loop: _Loop, state: Console, queue: tia_queue.Queue):
    """Every queued TIA write applied, in order (`_apply_tia_writes`, as
    `_apply_queued` does for the plain kernel's queue): the state, the CPU
    as it was (the stalls are on it already), and which frames ended."""
    def unstalled(view, k, waited, on):
        view, _, ends = loop.write_each(view, k, jnp.zeros_like(waited), on)
        return view, waited, ends

    view, ends = _apply_tia_writes(
        loop, state.replace(log=queue.entries, log_count=queue.count),
        queue.count > 0, unstalled)
    return state.replace(tia=view.tia), ends


def _execute_deferring(board: Board, inputs: Inputs, render, state: Console,
                       running: jax.Array, undrawable: jax.Array,
                       axis_name: str | None = None):
    """`_execute`, where a console `undrawable` that reads a collision
    latch is left as it was (`bus.step`); and whether it was."""
    del render
    cpu, after, deferred = bus.step(board, inputs, state, running,
                                    axis_name, undrawable=undrawable)
    return after.replace(cpu=cpu), deferred


def _cpu_loop_goes_on(loop: _Loop, carry: tuple) -> jax.Array:
    """`_cpu_loop`'s predicate: whether any console of the batch runs.

    The count under the cap adds nothing (`_still_running` stops every
    console there), but it makes XLA's search for the loop's induction
    variable give up at the predicate, which depends on two carried
    values. With the flags alone it took the flags for one and, each
    time its passes asked (63 times in one compile of Pong's step),
    cloned all the body computes them from (every nested loop), then
    gave up: about 12% of that compile (BENCHMARKS.md, "The instruction
    loop's predicate")."""
    count, _, running, _ = carry
    return loop.anywhere(running) & (count < INSTRUCTIONS_PER_UPDATE)


def _still_running(state: Console, running: jax.Array, ends: jax.Array,
                   instructions: jax.Array) -> jax.Array:
    """Which consoles run on after an instruction: not those whose frame
    it ended, that jammed, or that reached the cap after `instructions`
    (all the batch's in the CPU's loop, each console's own in the
    accelerator's)."""
    return running & ~ends & ~state.cpu.jammed & (
        instructions < INSTRUCTIONS_PER_UPDATE)


def _accelerator_step(loop: _Loop, carry, gathered: bool = True):
    """One step of the accelerator's loop, for each console running: a
    Cosmic Ark line end if one is due (`_cosmic_lines`' work, one at a
    time), else one instruction. `count` is per console, of instructions
    run. In a batch and if `gathered`, the TIA draws for a few consoles
    gathered (`tia_gather`): a console whose TIA writes are still logged,
    or whose instruction may read a latch and was not chosen, waits."""
    count, state, running, stop = carry
    shares = {kind: 0 if loop.board_axes is None or not gathered
              else lowering.gathered_share(kind, running.shape[0])
              for kind in lowering.GATHER_SHARES}
    ready = running & (state.log_count == 0)   # no writes pending
    executes = ready
    if loop.board.features.cosmic_lines:
        due = loop.over(_line_end_due)(loop.board, loop.inputs, loop.render,
                                       state, ready)
        state = loop.over(_draw_line_end)(loop.board, loop.inputs,
                                          loop.render, state, due)
        executes = ready & ~due
    if shares["collisions"]:
        state, waits = _latch_gathered(loop, state, executes,
                                       shares["collisions"])
        executes = executes & ~waits
    latched = bool(shares["collisions"])
    if shares["writes"]:
        state, ends = tia_gather.apply_writes(
            _executed(loop, state, executes, latched), running,
            *_board_rows(loop, running.shape[0], "ystart", "hmove_blanks"),
            shares["writes"])
    else:
        state, ends = _instruction(loop, state, executes, latched=latched)
    count = count + executes
    running = _still_running(state, running, ends, count) | (
        running & (state.log_count > 0))   # its writes still to apply
    return count, state, running, stop | ends


def _latch_gathered(loop: _Loop, state: Console, executes: jax.Array,
                    share: int) -> tuple[Console, jax.Array]:
    """The collision latches of the consoles `executes` whose instruction
    may read one (`bus.collision_read`), set for one console a group of
    `share` (`tia_gather.latch`); and the consoles that must wait."""
    plan = lambda board, inputs, render, state, on: bus.collision_read(
        board, state, on)
    reads, clock = loop.over(plan)(loop.board, loop.inputs, loop.render,
                                   state, executes)
    return tia_gather.latch(state, reads, clock, *_board_rows(
        loop, reads.shape[0], "ystart"), share)


def _board_rows(loop: _Loop, size: int, *names: str) -> tuple:
    """The board's fields `names`, a row a console of the loop's batch
    (of `size`)."""
    return tia_gather.board_rows(loop.board, loop.board_axes, size, *names)


def _accelerator_loop(loop: _Loop, state: Console, running: jax.Array):
    """The accelerator's instruction loop: chunks of `lowering.CHUNK` trips
    with a static trip count (consoles that finish inside one are masked),
    repeated while any console of the batch runs. No conditional inside,
    and the predicate is read once a chunk. A trip is XLA's step, or for
    a batch on one shared plain board where `lowering.with_plain_kernel`
    says so, the plain kernel and then XLA's step (`_kernel_trip`)."""
    def chunked(trip, queue=()):
        with jax.named_scope(lowering.INSTRUCTION_CHUNKS):
            looped = lowering.chunked_while(
                lambda c: loop.anywhere(c[2]), trip,
                (jnp.zeros_like(running, jnp.int32), state, running,
                 jnp.zeros_like(running)) + queue, running.shape,
                lowering.INSTRUCTION_LOOP)
        return looped[1], looped[3]

    xla = lambda: chunked(lambda c: _accelerator_step(loop, c))
    if not _kernel_runs(loop, running):
        return xla()
    queue = (jnp.zeros(running.shape + (plain_kernel.QUEUE
                                        * plain_kernel.ENTRY,), jnp.int32),
             jnp.zeros_like(running, jnp.int32))
    return lowering.with_plain_kernel(
        lambda interpret: chunked(functools.partial(_kernel_trip, loop,
                                                    interpret), queue), xla)


def _kernel_runs(loop: _Loop, running: jax.Array) -> bool:
    """Whether the plain kernel can run the loop's batch: one batch axis,
    one board shared by all (no board axis) and `plain_kernel.supports`."""
    shared = loop.board_axes is not None and all(
        axis is None for axis in jax.tree.leaves(
            loop.board_axes, is_leaf=lambda x: x is None))
    return shared and running.ndim == 1 and plain_kernel.supports(loop.board)


QUEUE_APPLIED = 4
"""Queued TIA writes of each console a trip of the kernel's loop applies
(straight-line code, as the log's slots, each a draw for every console).
Eight Pong consoles take 672, 448 and 320 trips a frame at 2, 4 and 8
(1,344 when the kernel stopped at every TIA access); the GPU decides."""


def _kernel_trip(loop: _Loop, interpret: bool, carry):
    """A trip of the kernel's loop: the plain kernel for the consoles
    ready, their TIA writes queued; up to `QUEUE_APPLIED` queued writes of
    each console applied; then XLA's step, its draws in place, for those
    at an event whose queue is empty (its draws in place: gathering them
    held Pong at 4,384 trips a frame against 1,344, before the queue)."""
    count, state, running, stop, queue, queued = carry
    ready = running & (state.log_count == 0)
    state, count, at_event, queue, queued = plain_kernel.run(
        loop.board, loop.inputs, state, ready, count, queue, queued,
        INSTRUCTIONS_PER_UPDATE, steps=plain_kernel.STEPS,
        block=plain_kernel.block_for(running.shape[0]), interpret=interpret)
    state, queue, queued, ends = _apply_queued(loop, state, queue, queued)
    waiting = queued > 0
    running = _still_running(state, running, ends, count) | (
        running & waiting)
    stepping = running & ~waiting & (at_event | (state.log_count > 0))
    count, state, stepped, stop = _accelerator_step(
        loop, (count, state, stepping, stop | ends), gathered=False)
    return (count, state, jnp.where(stepping, stepped, running), stop,
            queue, queued)


def _apply_queued(loop: _Loop, state: Console, queue: jax.Array,
                  queued: jax.Array):
    """The first `QUEUE_APPLIED` of each console's queued TIA writes
    applied, in order (`_apply_tia_writes`), and taken off its queue;
    returns the state, the queue and its count, and which frames the
    writes ended (none: a write that would end one is an event)."""
    size, slots = queued.shape[0], plain_kernel.QUEUE
    entries = queue.reshape(size, slots, plain_kernel.ENTRY)
    applied = jnp.minimum(queued, QUEUE_APPLIED)
    view = state.replace(log=entries[:, :QUEUE_APPLIED], log_count=applied)
    queued_write = functools.partial(
        loop.over(functools.partial(_write_logged, stalled=True)),
        loop.board, loop.inputs, loop.render)
    view, ends = _apply_tia_writes(loop, view, queued > 0, queued_write)
    later = jnp.minimum(jnp.arange(slots) + applied[:, None], slots - 1)
    entries = jnp.take_along_axis(entries, later[..., None], axis=1)
    return (view.replace(log=state.log, log_count=state.log_count),
            entries.reshape(queue.shape), queued - applied, ends)


def _render_phase(loop: _Loop, start: tia.TIAState,
                  frame_log: tia_log.FrameLog,
                  render: bool | jax.Array) -> tia.TIAState:
    """The frame's pixels: its TIA log replayed with pixels from the TIA
    as the loop found it (`tia_log`), one entry of every console per
    step, for as many steps as the longest log; if `render` (given as
    data) is off, no step, and the TIA as the loop found it. The loop
    carries only the TIA and reads only the log and two board values."""
    line_ends = loop.board.features.cosmic_lines
    lead = start.last_update.shape
    ystart, blanks = (jnp.broadcast_to(x, lead) for x in (
        loop.board.ystart, loop.board.hmove_blanks))

    def step(k, state):
        replay = lambda machine, log, y, b: tia_log.replay(
            machine, log, k, y, b, line_ends)
        if lead:
            replay = jax.vmap(replay)
        return replay(state, frame_log, ystart, blanks)

    steps = jnp.max(frame_log.count)
    if not tia.fixed(render):
        steps = jnp.where(render, steps, 0)
    with jax.named_scope(lowering.RENDER_LOOP):
        return lowering.counted_loop(steps, step, start, lead)


def _empty_log(state: Console) -> tia_log.FrameLog:
    """An empty frame log for each console of `state` (one or a batch)."""
    lead = state.cpu.pc.shape
    return jax.tree.map(lambda x: jnp.broadcast_to(x, lead + x.shape),
                        tia_log.empty())


def _run_frame(board: Board, state: Console, inputs: Inputs, render,
               batched=None) -> Console:
    """The frame for one console, or a batch (see `_per_console`), lowered
    per backend (`lowering.per_backend`). Where its pixels are drawn is
    per backend too (`_pixels_after`): during the instruction loop, or
    after it from the frame's TIA log (`_render_phase`)."""
    begin = functools.partial(_begin, render=render)
    if batched is not None:
        begin = jax.vmap(begin, in_axes=(batched[0], 0))
    state = begin(board, state)

    def traced(instruction_loop):
        after = _pixels_after(render)
        over = _per_console(batched)
        loop_render = False if after else render
        write_each = tia_gather.writer(
            board, None if batched is None else batched[0],
            None if batched is None else state.cpu.pc.shape[0], loop_render,
            lambda kind: functools.partial(over(_write_logged), board,
                                           inputs, kind))
        loop = _Loop(board, inputs, loop_render, over,
                     jnp.any if batched is not None else (lambda x: x),
                     write_each, None if batched is None else BATCH_AXIS,
                     None if batched is None else batched[0])
        start = state.tia
        looped = state
        if after:
            looped = state.replace(
                tia=start.replace(screen=None, written=None),
                frame_log=_empty_log(state))
        looped, stop = instruction_loop(loop, looped, ~state.cpu.jammed)
        if not after:
            return looped, stop
        screen, written = _screens(_render_phase(loop, start,
                                                 looped.frame_log, render))
        return looped.replace(tia=looped.tia.replace(
            screen=screen, written=written), frame_log=None), stop

    state, stop = lowering.per_backend(
        cpu=lambda: traced(_cpu_loop),
        accelerator=lambda: traced(_accelerator_loop))
    end = lambda board, state, stop: _end(board, state, render, stop)
    if batched is not None:
        return jax.vmap(end, in_axes=(batched[0], 0, 0))(board, state, stop)
    return end(board, state, stop)


def _pixels_after(render) -> bool:
    """Whether the variant being traced draws a rendered frame's pixels
    after its instructions (the accelerator's: its drawn frames 1.6 to 2.3
    times faster on Pong) rather than during them (the CPU's: the replay
    was 1.05 to 3.7 times slower there; BENCHMARKS.md, "Pixels after the
    instructions"). A frame that is not rendered (`render` False) draws no
    pixels at all either way."""
    return not lowering.batch_conds() and not (tia.fixed(render)
                                               and not render)


def _screens(drawn: tia.TIAState) -> tuple[jax.Array, jax.Array]:
    return drawn.screen, drawn.written


@functools.cache
def _frame_program(render: bool | None, variant: str | None = None):
    """The frame as a `custom_vmap` function, with `render` fixed while
    tracing (a Python bool) or taken as data (None).

    `variant`: the lowering variant being traced where it is called
    (`lowering.tracing_variant`). A batching rule runs when its caller's
    jaxpr is batched, which may be after that variant's branch has been
    traced (a `per_backend` under `vmap` batches its branches' jaxprs
    afterwards), so the rules trace as the variant they were called in.
    """
    def pick(flag):
        return flag if render is None else render

    @jax.custom_batching.custom_vmap
    def one(board: Board, state: Console, inputs: Inputs, flag) -> Console:
        return _run_frame(board, state, inputs, pick(flag))

    @one.def_vmap
    def batch(axis_size: int, in_batched, board, state, inputs, flag):
        """A batch of frames in one loop, predicated on the whole batch.

        Plain vmap of `lax.while_loop` would select every console's whole
        state (screens included) at every instruction; here only consoles
        still running change, by masks, and the screen's row writes are
        gated in place.
        """
        board_batched, state_batched, inputs_batched, flag_batched = in_batched
        state = updates.broadcast(axis_size, state_batched, state)
        if flag_batched:
            flag = jnp.any(flag)
        axes = lambda tree: jax.tree.map(lambda b: 0 if b else None, tree)
        program = _batch_program(render, axes(board_batched),
                                 axes(inputs_batched), variant)
        out = lowering.traced_as(variant, lambda: program(
            board, state, inputs, flag))
        return out, jax.tree.map(lambda _: True, out)
    return one


def _batch_program(render: bool | None, board_axes, inputs_axes,
                   variant: str | None = None):
    """A batch's frame (`_run_frame` over a batch whose board and inputs
    leaves have the vmap axes `board_axes` and `inputs_axes`, 0 or None),
    as a `custom_vmap` function that a further `vmap` flattens into its
    batch.

    Plain vmap of the batch's loop (a population: members x envs) would
    give its batch-wide `lax.cond`s batched predicates, which turns them
    into selects that run both branches. Here the outer axis of size M
    and the batch of B become one batch of M*B consoles, each still exact
    on its own, and the result is reshaped back to [M, B, ...].
    """
    @jax.custom_batching.custom_vmap
    def run(board: Board, state: Console, inputs: Inputs, flag) -> Console:
        flag = flag if render is None else render
        return _run_frame(board, state, inputs, flag,
                          batched=(board_axes, inputs_axes))

    @run.def_vmap
    def flattened(axis_size: int, in_batched, board, state, inputs, flag):
        board_batched, state_batched, inputs_batched, flag_batched = in_batched
        size = jax.tree.leaves(state)[0].shape[
            1 if jax.tree.leaves(state_batched)[0] else 0]
        merge = functools.partial(updates.merge_batch_axes, axis_size, size)
        board, new_board_axes = merge(board, board_batched, board_axes)
        inputs, new_inputs_axes = merge(inputs, inputs_batched, inputs_axes)
        state, _ = merge(state, state_batched,
                         jax.tree.map(lambda _: 0, state_batched))
        if flag_batched:
            flag = jnp.any(flag)
        program = _batch_program(render, new_board_axes, new_inputs_axes,
                                 variant)
        out = lowering.traced_as(variant, lambda: program(
            board, state, inputs, flag))
        out = jax.tree.map(
            lambda x: x.reshape((axis_size, size) + x.shape[1:]), out)
        return out, jax.tree.map(lambda _: True, out)
    return run


def frame(board: Board, state: Console, inputs: Inputs,
          render: bool | jax.Array = True) -> Console:
    """Emulate one ALE frame (one `TIA::update`).

    Under `jax.vmap` a batch runs one loop over instructions while any of
    its consoles runs, with finished consoles masked (see
    `_frame_program`). The loop is lowered per backend (`lowering`).

    Args:
        board: the game's hardware description.
        state: the console state.
        inputs: the controller and switch lines for this frame.
        render: whether to compute pixels. Under vmap a batch renders if
            any console asks; collisions and everything the CPU sees are
            exact either way, only `screen` is left stale. A Python bool
            is fixed while tracing (no conditional for it at all).

    Returns:
        The console state at the frame's end.
    """
    program = _frame_program(bool(render) if tia.fixed(render) else None,
                             lowering.tracing_variant())
    return program(board, state, inputs, jnp.asarray(render))


# --------------------------------------------------------------------------
# Power on and reset.
# --------------------------------------------------------------------------


def power_on(board: Board) -> Console:
    """The console right after construction: RAM from the system generator.

    The CPU is not reset yet; call `system_reset`. The state's shapes
    follow `board.features` (screen rows, cart RAM, DPC).
    """
    draws = system_draws(RAM_DRAWS + 1)
    features = board.features
    return Console(
        cpu=cpu6502.make_state(),
        riot=riot.power_on(jnp.asarray(draws[:128] & 0xFF, jnp.uint8),
                           reset_timer(0)),
        tia=tia.power_on(features.rows, height=board.height),
        segments=board.reset_segments,
        chips=cartridge.make_chips(features.cart_ram, features.dpc),
        data_bus=jnp.int32(0), last_read=jnp.asarray(False),
        log_count=jnp.int32(0),
        log=jnp.zeros((bus.MAX_TIA_WRITES, 4), jnp.int32),
        partial=jnp.asarray(False))


def refit(state: Console, features: Features) -> Console:
    """One console's state reshaped for a program built with `features`.

    The screen buffers lose or gain rows at the bottom (new rows are
    blank); Superchip RAM and the DPC are dropped, or added as at power
    on. Lossless when `features` cover the console's own game: a snapshot
    taken in a batch of many games (`console.union_features`) restores in
    a batch of its game alone, and back.

    Raises:
        ValueError: `features.rows` cut rows that the TIA draws.
    """
    drawn = int(tia.display_height(state.tia))
    if features.rows < drawn:
        raise ValueError(f"{features.rows} screen rows cannot hold the "
                         f"{drawn} rows this console draws")
    screen, written = state.tia.screen, state.tia.written
    cut = min(features.rows, written.shape[-1])
    pad = [(0, features.rows - cut), (0, 0)]
    fresh = cartridge.make_chips(features.cart_ram, features.dpc)
    kept = lambda old, new: new if old is None or new is None else old
    return state.replace(
        tia=state.tia.replace(
            screen=jnp.pad(screen[..., :cut, :], [(0, 0)] + pad),
            written=jnp.pad(written[..., :cut], pad[:1])),
        chips=cartridge.CartChips(
            ram=kept(state.chips.ram, fresh.ram),
            dpc=kept(state.chips.dpc, fresh.dpc),
            dpc_touched=kept(state.chips.dpc_touched, fresh.dpc_touched)))




def system_reset(board: Board, state: Console,
                 reset: ResetInputs | int | jax.Array) -> Console:
    """Stella's `System::reset`: RIOT (new timer), TIA, cart, then the CPU.

    RIOT RAM, the DPC's registers and the partial-frame flag are kept, as
    in Stella; Superchip RAM is refilled from the reset's draws. The TIA's
    buffers are cleared to the board's rows (a board changed to the
    detected display format takes effect here).

    Args:
        board: the game's hardware.
        state: the console.
        reset: the reset's `ResetInputs`; or just its RIOT timer, which
            keeps the display format and serves only carts without RAM.
    """
    if isinstance(reset, ResetInputs):
        timer, ram, pal = reset
    else:
        timer, ram, pal = reset, None, state.tia.pal
    if isinstance(pal, bool) and pal and board.features.rows < tia.PAL_HEIGHT:
        raise ValueError("a PAL reset needs a board of 250 rows")
    state = state.replace(
        riot=riot.reset(state.riot, timer),
        tia=tia.reset(state.tia, pal, board.features.rows, board.height),
        segments=board.reset_segments,
        chips=cartridge.reset_chips(state.chips, ram))
    cpu, state = cpu6502.reset(state, bus.atari_bus(board, _idle_inputs()))
    return state.replace(cpu=cpu)


def _idle_inputs() -> Inputs:
    return Inputs(swcha=jnp.int32(0xFF), swchb=jnp.int32(0x3F),
                  fire=jnp.zeros((2,), jnp.int32),
                  paddle_needed=jnp.full((4,), -2, jnp.int32))


def ram(state: Console) -> jax.Array:
    """uint8[128]: the RIOT RAM, as ALE's `getRAM`."""
    return state.riot.ram


def screen(state: Console) -> jax.Array:
    """uint8[rows, 160]: palette indices of the last frame, as `getScreen`.

    `rows` is the board's (210, the game's own height, or 250 for PAL); a
    console on a board widened beyond its height leaves the extra rows
    black.
    """
    return state.tia.screen[state.tia.buffer]


def cart_ram(state: Console) -> jax.Array:
    """uint8[128]: the Superchip RAM (ALE's `readMappedRam` of $F080-$F0FF
    reads it); zeros for a program without Superchip RAM."""
    ram = state.chips.ram
    return jnp.zeros((cartridge.RAM_SIZE,), jnp.uint8) if ram is None else ram


def scanlines(state: Console) -> jax.Array:
    """Scanlines since the frame started, as Stella's `TIA::scanlines`
    (after a frame: its length, which ALE's PAL detection counts)."""
    return (state.cpu.cycles * 3 - state.tia.frame_start) // tia.LINE


def is_pal(state: Console) -> jax.Array:
    """Whether the console was last reset as PAL."""
    return state.tia.pal != 0
