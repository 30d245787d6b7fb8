"""The TIA's draws for a few consoles of a batch, gathered: the
accelerator's lowering (`jaxatari.lowering.GATHER_SHARES`).

Without conditionals, the accelerator's instruction loop would draw
(collisions and object positions, no pixels) for every console at every
instruction, masked: the latches a TIA read sees before the instruction,
and each of the up to 3 TIA writes it logged after it. On Pong about 1
instruction in 7 writes the TIA and 1 in 700 may read a latch, so most
of those draws are thrown away. Here the batch is cut into groups of
`share` consecutive consoles (`updates.first_in_groups`); each step, the
first console of a group that needs a draw is gathered, drawn for and
put back, and the others in its group wait:

* a console whose next instruction may read a latch (`bus.collision_read`)
  and was not chosen does not run it this step (`latch`);
* a console whose logged writes were not applied (`Console.log_count`
  stays above 0) runs nothing until they are (`apply_writes`).

A waiting console's state is left as it was, so it does the same work a
step later: the bits are those of drawing for all
(`tests/test_lowering.py`); only the number of steps can grow.

The CPU's lowering, whose loops are while loops, draws only the writing
consoles too, without waiting: a large batch gathers them a chunk at a
time (`write_compacted`), a small one draws them one after another
(`write_one_by_one`); `writer` chooses, for the frame loop of
`jaxatari.console`.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Callable

import jax
import jax.numpy as jnp

from jaxatari import bus, lowering, tia, tia_log, tia_rows, updates

if TYPE_CHECKING:   # console imports this module
    from jaxatari.console import Board, Console

# `compacted_size`: smaller batches draw all (and on the CPU, their frame
# loop is one kernel: `updates`).
COMPACT_MIN_BATCH = updates.KERNEL_MAX_BATCH + 1
COMPACT_SIXTEENTHS = 3   # `compacted_size`'s share of the batch, in 16ths


def logged_write(entry: jax.Array, waited: jax.Array) -> tuple:
    """A TIA write log entry (`Console.log`) as `tia.write` takes it:
    address, value, the CPU cycle after the stalls so far, and whether
    the last access was a read."""
    return entry[0], entry[1], entry[2] + waited, entry[3] != 0


def board_rows(board: Board, board_axes, size: int, *names: str) -> tuple:
    """The board's fields `names`, a row a console of a batch of `size`
    (broadcast where the batch shares the board: `board_axes` None)."""
    def rows(name: str) -> jax.Array:
        value = getattr(board, name)
        if getattr(board_axes, name) == 0:
            return value
        return jnp.broadcast_to(value, (size,) + jnp.shape(value))
    return tuple(rows(name) for name in names)


def packed_regs(regs: dict, names: list[str]) -> jax.Array:
    """The TIA registers `names` stacked on a last axis (a console's
    `[R]`, a batch's `[B, R]`), to gather and update as one array."""
    return jnp.stack([regs[n] for n in names], axis=-1)


def unpacked_regs(packed: jax.Array, names: list[str]) -> dict:
    """`packed_regs` undone: the registers by name."""
    return {n: packed[..., i] for i, n in enumerate(names)}


def latch(state: Console, reads: jax.Array, clock: jax.Array,
          ystart: jax.Array, share: int) -> tuple[Console, jax.Array]:
    """The collision latches a read at `clock` sees (`tia.collide`), for
    the first console that `reads` of each group of `share`; and the
    consoles that read but were not chosen, which must wait a step.
    `ystart` is a row a console (`board_rows`)."""
    groups = updates.first_in_groups(reads, share)
    regs, clock, ystart = updates.take_rows(
        (state.tia.regs, clock, ystart), groups)
    latches = jax.vmap(lambda regs, clock, ystart: tia.collide(
        tia.TIAState(regs=regs, screen=None, written=None), clock,
        ystart).collision)(regs, clock, ystart)
    collision = updates.put_rows(state.tia.collision, groups, latches)
    return (state.replace(tia=state.tia.set(collision=collision)),
            reads & ~groups.taken)


def apply_writes(state: Console, running: jax.Array, ystart: jax.Array,
                 blanks: jax.Array, share: int
                 ) -> tuple[Console, jax.Array]:
    """The TIA writes logged by the first console of each group of
    `share` that has any (of those `running`): applied in order, with
    WSYNC's stalls, and added to the frame's log if it has one. The
    others keep theirs logged. Returns the state and which consoles'
    frames the writes ended. `ystart` and `blanks` (the board's
    `hmove_blanks`) are a row a console (`board_rows`)."""
    count = jnp.where(running, jnp.minimum(state.log_count,
                                           bus.MAX_TIA_WRITES), 0)
    groups = updates.first_in_groups(count > 0, share)
    regs, cycles, count, log, ystart, blanks = updates.take_rows(
        (state.tia.regs, state.cpu.cycles, count, state.log, ystart, blanks),
        groups)
    machine, waited, ends, entries = jax.vmap(_apply_logged)(
        tia.TIAState(regs=regs, screen=None, written=None), log, count,
        ystart, blanks)
    size = running.shape[0]
    regs, cycles, log_count, ended, applied, entries = updates.put_rows(
        (state.tia.regs, state.cpu.cycles, state.log_count,
         jnp.zeros_like(running), jnp.zeros((size,), jnp.int32),
         jnp.zeros((size, bus.MAX_TIA_WRITES), jnp.int32)), groups,
        (machine.regs, cycles + waited, 0 * count, ends, count, entries))
    state = state.replace(tia=state.tia.replace(regs=regs),
                          cpu=state.cpu.replace(cycles=cycles),
                          log_count=log_count)
    if state.frame_log is not None:
        state = state.replace(frame_log=jax.vmap(tia_log.extend)(
            state.frame_log, entries, applied))
    return state, ended


def _apply_logged(machine: tia.TIAState, log: jax.Array, count: jax.Array,
                  ystart: jax.Array, blanks: jax.Array):
    """One console's first `count` logged TIA writes applied in order, no
    pixels (`console._write_logged`'s work, for every slot): the TIA, the
    cycles WSYNC stalled, whether a write ended the frame, and the
    frame-log entry of each slot."""
    waited, ends, entries = jnp.int32(0), jnp.asarray(False), []
    for k in range(bus.MAX_TIA_WRITES):
        write = logged_write(log[k], waited)
        entries.append(tia_log.encode_write(*write))
        machine, wait, end = tia.write(machine, *write, ystart, blanks,
                                       False, k < count)
        waited, ends = waited + wait, ends | end
    return machine, waited, ends, jnp.stack(entries)


def writer(board: Board, board_axes, batch: int | None, render,
           per_console: Callable) -> Callable:
    """The instruction loop's `write_each` (`console._apply_tia_writes`)
    for a frame that draws its pixels during its instructions: per console
    (`per_console(render)`, `console._write_logged` over the batch),
    compacted (`_compacts`, `write_compacted`) or one by one
    (`_draws_one_by_one`, `write_one_by_one`).

    `board_axes` and `batch` are the board's vmap axes and the batch's
    size, both None for one console. A batch's frame told by data whether
    it is drawn (`render` traced), in the CPU's lowering, draws each
    write as a frame fixed as drawn or as one fixed as not, chosen by a
    `lax.cond` on the flag: an undrawn frame's draws are cheaper without
    pixels in mind (`tia.draws_at_once`), and so the frame loop is
    compiled once for both kinds of frame."""
    if (batch is not None and lowering.batch_conds()
            and not tia.fixed(render)):
        drawn, undrawn = (writer(board, board_axes, batch, kind, per_console)
                          for kind in (True, False))
        return lambda *args: jax.lax.cond(render, drawn, undrawn, *args)
    if _compacts(batch):
        return functools.partial(write_compacted, board, board_axes, render,
                                 compacted_size(batch))
    if _draws_one_by_one(batch, render):
        if PIXELS_APART:
            return functools.partial(write_pixels_apart, board, board_axes,
                                     per_console(False))
        return functools.partial(write_one_by_one, board, board_axes, render)
    return per_console(render)


def _compacts(batch: int | None) -> bool:
    """Whether a batch draws its TIA writes compacted: a batch of more
    than `updates.KERNEL_MAX_BATCH`, of one game or several. Consoles
    started from one state write in step and gathering costs them passes,
    but an env's consoles are out of step (NOOP starts, their own actions,
    resets at their own times), and there gathering the writers measured
    1.26x to 1.41x faster (BENCHMARKS.md, "TIA writes compacted for one
    game's batch"). Only the CPU's lowering compacts (its loop over
    gathers is a while loop)."""
    return (batch is not None and lowering.batch_conds()
            and bool(compacted_size(batch)))


def _draws_one_by_one(batch: int | None, render) -> bool:
    """Whether a batch that does not compact (`_compacts`) draws its TIA
    writes for the writing consoles alone, one after another
    (`write_one_by_one`): in the CPU's lowering (its write loop
    is a while loop), for frames that may draw pixels. Without pixels a
    draw is cheap enough that drawing for all the batch at once is
    faster: on 16 Pong consoles, a drawn frame took 46 ms one by one
    against 71 ms for all, an undrawn one 24 ms against 20 (BENCHMARKS.md,
    "Pixels drawn for the writing consoles alone"), and on 256, an
    undrawn one 0.55 s against 0.25 ("Draws one by one at a cost per
    console"); from the preset's states in play, 2.45 s against 0.36 ("The
    6502's ALU and the TIA's masks computed once")."""
    return (batch is not None and lowering.batch_conds()
            and not tia.draws_at_once(render))


def compacted_size(batch: int) -> int:
    """How many consoles of a batch `write_compacted` draws at
    once, or 0 to draw them all (small batches, where gathering costs
    more).

    `COMPACT_SIXTEENTHS` (3) sixteenths of the batch: at an instruction,
    about a sixth of an env's consoles write the TIA (Pong: some 1,200
    writes in 6,800 instructions), and a draw costs its whole chunk, used
    or not. Against
    3/8, the preset's step ran 1.10x to 1.24x faster (Pong, Breakout,
    Ms. Pac-Man at 256 envs, Pong at 1,024) and a 16-game batch 1.0x to
    1.20x (16 to 256 consoles). On Pong's preset at 256 envs, 1/16 and
    1/4 were slower and 1/8 within 4% either way of it across the three
    games (BENCHMARKS.md, "How many consoles a compacted draw gathers")."""
    if batch < COMPACT_MIN_BATCH:
        return 0
    return -(-batch * COMPACT_SIXTEENTHS // 16)


def write_compacted(board: Board, board_axes, render, chunk: int,
                    state: Console, k: jax.Array, waited: jax.Array,
                    on: jax.Array):
    """`console._write_logged` for a batch, drawn only for the consoles
    `on`: the CPU's lowering (`_compacts`).

    About a fifth of a batch of different games writes the TIA at an
    instruction, yet a vmapped write draws (pixels and collisions) for
    every console. Here the writing consoles are gathered, `chunk` at a
    time (`compacted_size`), drawn and
    scattered back, as often as it takes (usually once); their rows go
    into the batch's screens by index (`tia_rows.write_rows`).
    """
    size = on.shape[0]
    rows = state.tia.screen.shape[-2]
    names = sorted(state.tia.regs)

    def write_one(regs, entry, cycles, waited_k, ystart, blanks, valid):
        drawn, wait, ends, writes = tia.write_registers(
            tia.TIAState(regs=regs, screen=None, written=None),
            *logged_write(entry, waited_k), ystart, blanks,
            render, valid, rows)
        return drawn.regs, wait, ends, writes

    def gathered(carry):
        state, waited, ends, todo = carry
        index = jnp.nonzero(todo, size=chunk, fill_value=size)[0]
        take = lambda x: x.at[index].get(mode="clip")
        per_board = lambda x, axis: take(x) if axis == 0 else (
            jnp.broadcast_to(x, (chunk,) + jnp.shape(x)))
        packed = packed_regs(state.tia.regs, names)
        regs, wait, end, writes = jax.vmap(write_one)(
            unpacked_regs(take(packed), names),
            take(state.log[jnp.arange(size), k]),
            take(state.cpu.cycles), take(waited),
            per_board(board.ystart, board_axes.ystart),
            per_board(board.hmove_blanks, board_axes.hmove_blanks),
            index < size)
        packed = packed.at[index].set(packed_regs(regs, names),
                                      mode="drop")
        screen, written = tia.when_render(
            render, lambda sw: tia_rows.write_rows(*sw, index, writes),
            lambda sw: sw, (state.tia.screen, state.tia.written))
        machine_tia = tia.TIAState(
            regs=unpacked_regs(packed, names), screen=screen,
            written=written)
        cpu = state.cpu.replace(
            cycles=state.cpu.cycles.at[index].add(wait, mode="drop"))
        return (state.replace(tia=machine_tia, cpu=cpu),
                waited.at[index].add(wait, mode="drop"),
                ends | jnp.zeros_like(ends).at[index].set(end, mode="drop"),
                todo.at[index].set(False, mode="drop"))

    state, waited, ends, _ = jax.lax.while_loop(
        lambda c: jnp.any(c[3]), gathered,
        (state, waited, jnp.zeros_like(on), on))
    return state, waited, ends


def write_one_by_one(board: Board, board_axes, render, state: Console,
                     k: jax.Array, waited: jax.Array, on: jax.Array):
    """`console._write_logged` for a batch in the CPU's lowering, drawn
    only for the consoles `on`, one at a time (`_draws_one_by_one`).

    A vmapped write draws (two lines of pixels, and collisions) for every
    console of the batch, though about a sixth of them write at an
    instruction. Here a loop draws the writers in turn, with slices and
    slice updates only, so that XLA:CPU still hoists the frame's loops
    into one kernel (a scatter would keep them thunks: `jaxatari.updates`).

    A step of the loop costs the same at any batch: it finds its writer
    by a binary search of the running count of writers (`_nth_writer`),
    reads the registers of the slot's start (each console writes a slot
    once), and puts what it drew at its own rank (`_draw_in_turn`); the
    ranks go back to their consoles once, after the loop. Reading and
    updating the batch's registers in the loop made XLA copy them every
    step, and finding the writer by `argmax`, or updating flags with
    `where`, cost a pass over the batch: a drawn frame of 1,024 Pong
    consoles took 8.7 s that way, 2.9 s this way (BENCHMARKS.md, "Draws
    one by one at a cost per console").
    """
    size = on.shape[0]
    names = sorted(state.tia.regs)
    packed = packed_regs(state.tia.regs, names)
    ystart, blanks = board_rows(board, board_axes, size, "ystart",
                                "hmove_blanks")
    slot = (packed, state.log[jnp.arange(size), k], waited, ystart, blanks)
    counts = jnp.cumsum(on.astype(jnp.int32))
    draw = _draw_in_turn(render, names, slot, counts)
    _, drawn, screen, written, waits, ends = jax.lax.while_loop(
        lambda carry: carry[0] < counts[-1], draw,
        (jnp.int32(0), jnp.zeros_like(packed), state.tia.screen,
         state.tia.written, jnp.zeros((size,), jnp.int32),
         jnp.zeros((size,), bool)))
    rank = jnp.maximum(counts - 1, 0)
    packed = jnp.where(on[:, None], drawn[rank], packed)
    added = jnp.where(on, waits[rank], 0)
    machine_tia = tia.TIAState(regs=unpacked_regs(packed, names),
                               screen=screen, written=written)
    return (state.replace(tia=machine_tia, cpu=state.cpu.replace(
        cycles=state.cpu.cycles + added)), waited + added, on & ends[rank])


PIXELS_APART = True
"""Whether a rendered frame's writes (a batch on the kernel path, the CPU's
lowering) take their registers for the whole batch at once and only their
pixels one writer at a time (`write_pixels_apart`), rather than the whole
write one writer at a time (`write_one_by_one`). Both give the same bits;
on 256 consoles in play a drawn frame ran 1.17x (Pong) to 1.31x
(Ms. Pac-Man) faster apart, with `tia.PLANES` (BENCHMARKS.md, "Pixels
apart from the registers")."""


def write_pixels_apart(board: Board, board_axes, undrawn: Callable,
                       state: Console, k: jax.Array, waited: jax.Array,
                       on: jax.Array):
    """`console._write_logged` of a rendered frame for a batch in the CPU's
    lowering: the registers, stalls and frame ends for the whole batch at
    once as an undrawn frame's (`undrawn`, masked to `on`), then the
    pixels of the consoles whose draw writes a row, one at a time.

    A write's rows depend only on the TIA before it
    (`tia.rows_of_write`), so they are drawn from the slot's starting
    registers; which consoles
    draw any is found for the batch at once without pixels (XLA drops
    the unused pixel work), and the loop visits only those, with slices
    and slice updates (the frame loop stays one kernel)."""
    size = on.shape[0]
    names = sorted(state.tia.regs)
    packed = packed_regs(state.tia.regs, names)
    entries = state.log[jnp.arange(size), k]
    (ystart,) = board_rows(board, board_axes, size, "ystart")
    rows = state.tia.screen.shape[-2]

    def rows_of(regs, entry, waited_k, ystart_k, on_k):
        address, _, cycle, _ = logged_write(entry, waited_k)
        return tia.rows_of_write(
            tia.TIAState(regs=regs, screen=None, written=None), address,
            cycle, ystart_k, on_k, rows)

    row = jax.vmap(lambda *a: rows_of(*a).row)(
        state.tia.regs, entries, waited, ystart, on)
    drawing = on & jnp.any(row < rows, axis=-1)
    counts = jnp.cumsum(drawing.astype(jnp.int32))

    def draw(carry):
        n, screen, written = carry
        writer = _nth_writer(counts, n)
        item = lambda x: updates.console_item(x, writer)
        writes = rows_of(unpacked_regs(item(packed), names), item(entries),
                         item(waited), item(ystart), True)
        screen, written = tia_rows.rows_into(screen, written, (writer,),
                                             writes)
        return n + 1, screen, written

    _, screen, written = jax.lax.while_loop(
        lambda carry: carry[0] < counts[-1], draw,
        (jnp.int32(0), state.tia.screen, state.tia.written))
    state, waited, ends = undrawn(state, k, waited, on)
    return (state.replace(tia=state.tia.replace(screen=screen,
                                                written=written)),
            waited, ends)


def _draw_in_turn(render, names: list[str], slot: tuple,
                  counts: jax.Array):
    """`write_one_by_one`'s loop step: the `n`-th writer's draw, from the
    slot's registers, log entries, waits and board rows (`slot`, a row a
    console), into its screen, and its registers, wait and whether it
    ended the frame at row `n`."""
    packed, entries, waited, ystart, blanks = slot

    def draw(carry):
        n, drawn, screen, written, waits, ends = carry
        writer = _nth_writer(counts, n)
        item = lambda x: updates.console_item(x, writer)
        machine, wait, end, writes = tia.write_registers(
            tia.TIAState(regs=unpacked_regs(item(packed), names),
                         screen=None, written=None),
            *logged_write(item(entries), item(waited)), item(ystart),
            item(blanks), render, True, screen.shape[-2])
        screen, written = tia.when_render(
            render, lambda sw: tia_rows.rows_into(*sw, (writer,), writes),
            lambda sw: sw, (screen, written))
        put = lambda xs, x: jax.lax.dynamic_update_index_in_dim(xs, x, n, 0)
        return (n + 1,
                put(drawn, packed_regs(machine.regs, names)),
                screen, written, put(waits, wait), put(ends, end))
    return draw


def _nth_writer(counts: jax.Array, n: jax.Array) -> jax.Array:
    """The index of the `n`-th console (from 0) that writes, given
    `counts`, the running count of writers: the first index whose count
    exceeds `n`, by a binary search of slices."""
    size = counts.shape[0]
    low, high = jnp.int32(0), jnp.int32(size - 1)
    for _ in range((size - 1).bit_length()):
        middle = (low + high) // 2
        right = updates.console_item(counts, middle) <= n
        low = jnp.where(right, middle + 1, low)
        high = jnp.where(right, high, middle)
    return low
