"""`jaxatari.tia_rows`: a draw's row writes land as a plain numpy
reference puts them, by one scatter (`write_rows`) and row by row
(`put_rows`, console by console in a small batch, scattered in a large
one), including rows out of range, which are dropped."""
import jax
import numpy as np
import pytest

from jaxatari import tia_rows, updates

ROWS = 6


def _random_writes(batch: int, seed: int):
    rng = np.random.default_rng(seed)
    screen = rng.integers(0, 256, (batch, 2, ROWS, 160), dtype=np.uint8)
    written = rng.random((batch, ROWS)) < 0.3
    rows = np.stack([rng.permutation(ROWS + 2)[:4] for _ in range(batch)])
    writes = tia_rows.RowWrites(
        buffer=rng.integers(0, 2, batch).astype(np.int32),
        row=rows.astype(np.int32),
        pixels=rng.integers(0, 256, (batch, 4, 160), dtype=np.uint8),
        mask=rng.random((batch, 4, 160)) < 0.5)
    return screen, written, writes


def _reference(screen, written, writes):
    screen, written = screen.copy(), written.copy()
    for k in range(screen.shape[0]):
        for r in range(4):
            row = writes.row[k, r]
            if 0 <= row < ROWS:
                mask = writes.mask[k, r]
                screen[k, writes.buffer[k], row, mask] = writes.pixels[k, r,
                                                                        mask]
                written[k, row] = True
    return screen, written


@pytest.mark.parametrize("batch", [3, 20])
def test_row_writes_land_as_the_reference_puts_them(batch, monkeypatch):
    """`put_rows` on both sides of the kernel's limit, set to 16 here (as
    it was until 2026-11-28) to keep the batches small."""
    monkeypatch.setattr(updates, "KERNEL_MAX_BATCH", 16)
    screen, written, writes = _random_writes(batch, batch)
    want_screen, want_written = _reference(screen, written, writes)
    scattered = jax.jit(tia_rows.write_rows)(
        screen, written, np.arange(batch, dtype=np.int32), writes)
    put = jax.jit(jax.vmap(tia_rows.put_rows))(screen, written, writes)
    for got_screen, got_written in (scattered, put):
        np.testing.assert_array_equal(np.asarray(got_screen), want_screen)
        np.testing.assert_array_equal(np.asarray(got_written), want_written)


def test_row_write_covers_its_span_and_blanks_the_first_eight():
    pixels = np.full((160,), 7, np.uint8)
    row, out, mask = jax.jit(tia_rows.row_write, static_argnums=0)(
        ROWS, np.int32(2), pixels, np.int32(4), np.int32(20),
        np.bool_(True), np.bool_(True))
    assert int(row) == 2
    assert np.asarray(mask).nonzero()[0].tolist() == list(range(4, 20))
    assert (np.asarray(out)[:8] == 0).all() and (np.asarray(out)[8:] == 7
                                                 ).all()
    row, _, mask = tia_rows.row_write(ROWS, np.int32(ROWS), pixels,
                                      np.int32(0), np.int32(160),
                                      np.bool_(False), np.bool_(True))
    assert int(row) == ROWS and not np.asarray(mask).any()
