"""Decimal mode's binary-to-BCD table, computed without a division."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxatari import cpu6502
from tests.cpu6502.stella_py65 import _binary_to_bcd


def test_to_bcd_is_stellas_table_on_every_byte():
    n = jnp.arange(256, dtype=jnp.int32)
    np.testing.assert_array_equal(
        np.asarray(cpu6502._to_bcd(n)),
        [_binary_to_bcd(int(v)) for v in range(256)])
