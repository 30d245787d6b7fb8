"""A line's colours word by word (`tia._colour_planes`) against Stella's
priority encoder as a table (`tia_tables.PRIORITY_TABLE`), for every
object code, half of the line, CTRLPF mode and score-mode quirk."""
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import tia
from jaxatari.tia_tables import PRIORITY_TABLE, WIDTH

COLOURS = jnp.array([0x10, 0x22, 0x44, 0x86], jnp.int32)


def _objects_for(codes: np.ndarray) -> jnp.ndarray:
    """uint32[6, 5] masks whose pixel x has object bits `codes[x]`."""
    words = np.zeros((6, 5), np.uint64)
    for x, code in enumerate(codes):
        for obj in range(6):
            if code >> obj & 1:
                words[obj, x >> 5] |= 1 << (x & 31)
    return jnp.asarray(words.astype(np.uint32))


@pytest.mark.parametrize("ctrlpf", range(8))
@pytest.mark.parametrize("only_pf", [False, True])
def test_planes_give_the_tables_colour_for_every_code(ctrlpf, only_pf):
    mode = (ctrlpf & 0x06) << 5
    # every 6-bit code on both halves: codes 0-63 twice over 128 pixels,
    # shifted by 16 so that each code lands left and right of pixel 80
    for shift in (0, 16, 80):
        codes = (np.arange(WIDTH) + shift) % 64
        objects = _objects_for(codes)
        x = np.arange(WIDTH)
        slot = PRIORITY_TABLE[(x >= 80).astype(int), codes | mode]
        slot = np.where(only_pf & ((codes & 0x20) != 0), 2 + (x >= 80),
                        slot)
        expected = np.asarray(COLOURS)[slot]
        for pixels in (jnp.arange(WIDTH), 37 + jnp.arange(32)):
            got = tia._planes_pixels(objects, pixels, jnp.int32(mode),
                                     jnp.bool_(only_pf), COLOURS)
            np.testing.assert_array_equal(np.asarray(got),
                                          expected[np.asarray(pixels)])
