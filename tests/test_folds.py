"""`jaxatari.folds`: small reductions as elementwise folds give the same
values (and dtypes) as the jnp reductions they replace, and lower to no
reduce at all."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import folds


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_folds_equal_the_reductions(axis):
    rng = np.random.default_rng(axis + 5)
    flags = jnp.asarray(rng.integers(0, 2, (3, 15, 4)), bool)
    values = jnp.asarray(rng.integers(-99, 99, (3, 15, 4)), jnp.int32)
    # Bits that do not overlap along `axis` (the collision latches'):
    # there the sum is the or.
    shift = jax.lax.broadcasted_iota(jnp.int32, flags.shape, axis % 3)
    bits = flags.astype(jnp.int32) << shift
    for fold, reduction, x in ((folds.any_along, jnp.any, flags),
                               (folds.max_along, jnp.max, values),
                               (folds.or_along, jnp.sum, bits)):
        got, expected = fold(x, axis), reduction(x, axis)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def test_select_is_jnp_select():
    rng = np.random.default_rng(1)
    port = jnp.asarray(rng.integers(0, 8, 64), jnp.int32)
    conditions = [port == 0, port == 1, (port & 1) == 0, port < 6]
    choices = [jnp.asarray(rng.integers(0, 256, 64), jnp.int32)
               for _ in conditions]
    default = jnp.int32(0x80)
    got = folds.select(conditions, choices, default)
    expected = jnp.select(conditions, choices, default)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_folds_lower_to_no_reduce():
    def program(flags, values, port):
        return (folds.any_along(flags, 1), folds.max_along(values, 1),
                folds.select([port == 0, port == 1], [values[:, 0],
                                                      values[:, 1]], 7))
    text = jax.jit(program).lower(
        jnp.zeros((8, 3), bool), jnp.zeros((8, 3), jnp.int32),
        jnp.zeros((8,), jnp.int32)).as_text()
    assert "reduce" not in text and "argmax" not in text
