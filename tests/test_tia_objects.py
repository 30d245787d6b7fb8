"""The TIA's object masks: `tia._rotate` against a numpy reference."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import lowering, tia
from jaxatari.tia_tables import WIDTH, WORDS


def _pixels(words: np.ndarray) -> np.ndarray:
    """A mask's 160 pixels, pixel 32 * w + b at bit b of word w."""
    return ((words[:, None] >> np.arange(32, dtype=np.uint32)) & 1
            ).reshape(-1)


@pytest.mark.parametrize("batched", [False, True])
def test_rotate_moves_a_mask_as_a_roll_of_its_pixels_at_every_position(
        batched):
    """Both forms (`batched`: the mask gathered once and rolled by
    selects), in the CPU's lowering."""
    masks = np.random.default_rng(0).integers(
        0, 2**32, (8, WORDS), dtype=np.uint32)
    positions = np.arange(WIDTH, dtype=np.int32)
    rotate = functools.partial(tia._rotate, batched=batched)
    with lowering.forced(lowering.CPU):
        rotated = np.asarray(jax.jit(jax.vmap(jax.vmap(
            rotate, (None, 0)), (0, None)))(jnp.asarray(masks),
                                            jnp.asarray(positions)))
    for m, mask in enumerate(masks):
        for position in positions:
            np.testing.assert_array_equal(
                _pixels(rotated[m, position]),
                np.roll(_pixels(mask), position),
                err_msg=f"mask {m}, position {position}")
