"""The screen rows a TIA draw writes, and how they land in the screens.

A draw (`tia.draw`) covers at most four rows of one buffer; it returns
them as `RowWrites` (rows out of range are dropped). They land in one of
two ways, per batch size:

* into a batch of screens at once by one scatter (`write_rows`), as
  the accelerator's lowering and the CPU's compacted writes (batches of
  more than `updates.KERNEL_MAX_BATCH`) do;
* one row at a time by slice updates (`put_rows`; `rows_into` for one
  console of a batch, as `tia_gather.write_one_by_one` draws them), which
  keep the CPU's frame loop free of scatters, so that XLA:CPU compiles it
  into one kernel (`jaxatari.updates`).
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxatari import lowering, updates
from jaxatari.tia_tables import WIDTH


class RowWrites(NamedTuple):
    """The screen rows one draw writes: up to four rows of one buffer.

    `row` is the buffer's row count (out of range: dropped) where a row is
    not written; `mask` says which of its pixels take `pixels`.
    """
    buffer: jax.Array   # int32
    row: jax.Array      # int32[4]
    pixels: jax.Array   # uint8[4, 160]
    mask: jax.Array     # bool[4, 160]


def row_write(rows: int, row, pixels, x0, x1, blank, on):
    """Pixels [x0, x1) of `row` if `on` (the first 8 black if `blank`).

    Rows past the buffer's (Stella's has 300) are dropped.
    """
    x = jnp.arange(WIDTH)
    pixels = jnp.where(blank & (x < 8), jnp.uint8(0), pixels)
    on = on & (row >= 0) & (row < rows) & (x1 > x0)
    return (jnp.where(on, row, rows), pixels,
            on & (x >= x0) & (x < x1))


def write_rows(screen: jax.Array, written: jax.Array, index: jax.Array,
               writes: RowWrites) -> tuple[jax.Array, jax.Array]:
    """Apply the row writes of consoles `index` of a batch of screens.

    Args:
        screen: uint8[B, 2, rows, 160], the batch's screens.
        written: bool[B, rows], the rows drawn this frame.
        index: int32[K], the console of each of the K writes; indices out
            of range are dropped.
        writes: the K consoles' `RowWrites` (a leading axis of K).

    Returns:
        The new `screen` and `written`. The rows one draw writes are
        distinct, so the four scatter in any order.
    """
    console = index[:, None]
    buffer = writes.buffer[:, None]
    old = screen.at[console, buffer, writes.row].get(mode="fill",
                                                     fill_value=0)
    new = jnp.where(writes.mask, writes.pixels, old)
    return (screen.at[console, buffer, writes.row].set(new, mode="drop"),
            written.at[console, writes.row].set(True, mode="drop"))


def rows_into(screen: jax.Array, written: jax.Array, at: tuple,
              writes: RowWrites) -> tuple[jax.Array, jax.Array]:
    """One console's row writes, one row at a time by slice updates (no
    scatter: see `updates`), into the screen at index `at` of a batch
    (`()` for a console's own). The CPU's lowering skips the rows not
    written (`lowering.skipped_unless`): most draws write one or two."""
    rows = written.shape[-1]
    lead = (1,) * len(at)

    def row_into(k: int, on: jax.Array, row: jax.Array):
        def put(screen_written):
            screen, written = screen_written
            start = at + (writes.buffer, row, jnp.int32(0))
            old = jax.lax.dynamic_slice(screen, start, lead + (1, 1, WIDTH))
            new = jnp.where(on & writes.mask[k], writes.pixels[k],
                            old.reshape(WIDTH))
            screen = updates.update_slice(
                screen, new.reshape(lead + (1, 1, -1)), start)
            drawn = jax.lax.dynamic_slice(written, at + (row,), lead + (1,))
            return screen, updates.update_slice(written, drawn | on,
                                                at + (row,))
        return put

    for k in range(writes.row.shape[0]):
        on = (writes.row[k] >= 0) & (writes.row[k] < rows)
        row = jnp.clip(writes.row[k], 0, rows - 1)
        screen, written = lowering.skipped_unless(
            on, row_into(k, on, row), (screen, written))
    return screen, written


@jax.custom_batching.custom_vmap
def put_rows(screen: jax.Array, written: jax.Array,
              writes: RowWrites) -> tuple[jax.Array, jax.Array]:
    return rows_into(screen, written, (), writes)


@put_rows.def_vmap
def _put_rows_batched(axis_size: int, in_batched, screen, written, writes):
    """A small batch on the CPU writes console by console (the frame loop
    stays one kernel); a large one scatters all rows at once."""
    screen, written, writes = updates.broadcast(
        axis_size, tuple(in_batched), (screen, written, writes))

    def one_by_one():
        def put(k, out):
            return rows_into(*out, (k,), jax.tree.map(
                lambda x: updates.console_item(x, k), writes))
        return jax.lax.fori_loop(0, axis_size, put, (screen, written))

    def scatter():
        return write_rows(screen, written, jnp.arange(axis_size), writes)

    return updates.small_batch_on_cpu(axis_size, one_by_one, scatter), (
        True, True)
