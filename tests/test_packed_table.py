"""`jaxatari.packed_table`: rows packed into words read back exactly."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import cpu6502, packed_table


def _columns(row: packed_table.PackedRow, count: int) -> np.ndarray:
    return np.stack([np.asarray(row[i]) for i in range(count)], axis=-1)


def test_the_control_table_reads_back_exactly_for_every_opcode():
    """The 6502's default control row (`cpu6502.control_row`, packed) is
    `CONTROL_TABLE`'s row, column by column, for all 256 opcodes, as one
    console and as a batch under vmap."""
    table = cpu6502.CONTROL_TABLE
    assert cpu6502.PACKED_CONTROL_TABLE.shape == (256, 4)
    batch = cpu6502.control_row(jnp.arange(256, dtype=jnp.int32))
    np.testing.assert_array_equal(_columns(batch, table.shape[1]), table)
    one_by_one = jax.vmap(lambda op: jnp.stack(
        [cpu6502.control_row(op)[i] for i in range(table.shape[1])]))(
            jnp.arange(256, dtype=jnp.int32))
    np.testing.assert_array_equal(np.asarray(one_by_one), table)


def test_negative_wide_and_constant_columns_round_trip():
    """Columns with negative values, a full 30-bit span, a constant and a
    single bit: each word stays under 31 bits and every value comes back."""
    rng = np.random.default_rng(0)
    table = np.stack([
        rng.integers(-3, 4, 64), rng.integers(0, 1 << 30, 64),
        np.full(64, 7), rng.integers(0, 2, 64),
        rng.integers(-200, 56, 64)], axis=1).astype(np.int32)
    packed, layout = packed_table.pack(table)
    assert packed.dtype == np.int32 and (packed >= 0).all()
    assert packed.shape == (64, 3)   # 3 | 30 + 1 | 1 + 8 bits, in order
    row = packed_table.PackedRow(jnp.asarray(packed), layout)
    np.testing.assert_array_equal(_columns(row, table.shape[1]), table)


def test_a_column_too_wide_for_a_word_is_refused():
    with pytest.raises(ValueError, match="spans 32 bits"):
        packed_table.pack(np.array([[-(1 << 31)], [(1 << 31) - 1]],
                                   np.int64))
