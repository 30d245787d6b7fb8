"""The TIA's object masks: `tia._rotate` against a numpy reference."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari import tia
from jaxatari.tia_tables import WIDTH, WORDS


def _pixels(words: np.ndarray) -> np.ndarray:
    """A mask's 160 pixels, pixel 32 * w + b at bit b of word w."""
    return ((words[:, None] >> np.arange(32, dtype=np.uint32)) & 1
            ).reshape(-1)


def test_rotate_moves_a_mask_as_a_roll_of_its_pixels_at_every_position():
    masks = np.random.default_rng(0).integers(
        0, 2**32, (8, WORDS), dtype=np.uint32)
    positions = np.arange(WIDTH, dtype=np.int32)
    rotated = np.asarray(jax.jit(jax.vmap(jax.vmap(
        tia._rotate, (None, 0)), (0, None)))(jnp.asarray(masks),
                                              jnp.asarray(positions)))
    for m, mask in enumerate(masks):
        for position in positions:
            np.testing.assert_array_equal(
                _pixels(rotated[m, position]),
                np.roll(_pixels(mask), position),
                err_msg=f"mask {m}, position {position}")
