"""A table of small integers packed into a few words a row.

A batch that looks up one row per element (the 6502's control row, by
opcode) gathers every column of it. Packed, the same row is a few words,
and a column is a shift and a mask of one of them: on XLA:CPU a gather of
4 words a console instead of 35 (BENCHMARKS.md, "The 6502's control row
packed"). The packing is exact for any integer table whose columns each
span under 2**31 values.
"""
from __future__ import annotations

import jax
import numpy as np

Layout = tuple[tuple[int, int, int, int], ...]
"""Per column: (word, shift, mask, bias)."""


def pack(table: np.ndarray, bits: int = 31) -> tuple[np.ndarray, Layout]:
    """`table`'s rows in words of `bits` bits, columns in order, each
    column less its least value in as many bits as its span needs.

    Returns:
        The packed table (int32, one row per row of `table`) and the
        layout that `PackedRow` reads it with.
    """
    layout, word, shift = [], 0, 0
    for column in table.T:
        bias = int(column.min())
        width = max(int(column.max()) - bias, 1).bit_length()
        if width > bits:
            raise ValueError(f"a column spans {width} bits, over {bits}")
        if shift + width > bits:
            word, shift = word + 1, 0
        layout.append((word, shift, (1 << width) - 1, bias))
        shift += width
    packed = np.zeros((table.shape[0], word + 1), np.int64)
    for (word, shift, _, bias), column in zip(layout, table.T):
        packed[:, word] |= (column.astype(np.int64) - bias) << shift
    return packed.astype(np.int32), tuple(layout)


class PackedRow:
    """One row of a packed table (a batch's rows, with leading axes),
    indexed by column number as the table's row is.

    Attributes:
        words: the row's packed words (`[..., words]`).
        layout: from `pack`.
    """
    __slots__ = ("words", "layout")

    def __init__(self, words: jax.Array, layout: Layout) -> None:
        self.words, self.layout = words, layout

    def __getitem__(self, column: int) -> jax.Array:
        word, shift, mask, bias = self.layout[column]
        value = (self.words[..., word] >> shift) & mask
        return value + bias if bias else value
