"""`jaxatari.tia_objects`: both rotations of a mask against a numpy
reference, and the word-by-word spans, masks and collision latches (a
whole batch's undrawn draw in the CPU's lowering) against the arrays on
random registers."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari import tia, tia_objects
from jaxatari.tia_tables import M0_HIDDEN, M0_PLAIN, M0_STRETCHED, WIDTH, WORDS


def _pixels(words: np.ndarray) -> np.ndarray:
    """A mask's 160 pixels, pixel 32 * w + b at bit b of word w."""
    return ((words[:, None] >> np.arange(32, dtype=np.uint32)) & 1
            ).reshape(-1)


def _by_word(rotate_words):
    """`tia_objects.rotated_words` with a uint32[5] mask in and out."""
    return lambda mask, position: jnp.stack(
        rotate_words([mask[w] for w in range(WORDS)], position))


def test_both_rotations_move_a_mask_as_a_roll_of_its_pixels_everywhere():
    masks = np.random.default_rng(0).integers(
        0, 2**32, (8, WORDS), dtype=np.uint32)
    positions = np.arange(WIDTH, dtype=np.int32)
    for name, rotate in (("gathers", tia_objects.rotate),
                         ("words", _by_word(tia_objects.rotated_words))):
        rotated = np.asarray(jax.jit(jax.vmap(jax.vmap(
            rotate, (None, 0)), (0, None)))(jnp.asarray(masks),
                                            jnp.asarray(positions)))
        for m, mask in enumerate(masks):
            for position in positions:
                np.testing.assert_array_equal(
                    _pixels(rotated[m, position]),
                    np.roll(_pixels(mask), position),
                    err_msg=f"{name}: mask {m}, position {position}")


def test_span_words_are_the_span():
    ends = np.arange(-2, WIDTH + 3, dtype=np.int32)
    x0, x1 = (a.reshape(-1) for a in np.meshgrid(ends, ends))
    keep = x0 <= x1
    x0, x1 = jnp.asarray(x0[keep]), jnp.asarray(x1[keep])
    x0, x1 = jnp.maximum(x0, 0), jnp.maximum(x1, 0)
    array = jax.jit(jax.vmap(tia_objects.span))(x0, x1)
    words = jax.jit(jax.vmap(lambda a, b: jnp.stack(
        tia_objects.span_words(a, b))))(x0, x1)
    np.testing.assert_array_equal(np.asarray(words), np.asarray(array))


def _random_registers(rng: np.random.Generator, count: int) -> tia.TIAState:
    """`count` TIAs with random object registers (each register drawn
    over its whole range, objects often off so that latches vary)."""
    base = tia.power_on()
    draw = lambda high: jnp.asarray(rng.integers(0, high, count), jnp.int32)
    regs = {name: jnp.broadcast_to(value, (count,))
            for name, value in base.regs.items()}
    regs.update(
        nusiz0=draw(256), nusiz1=draw(256), cur_grp0=draw(256),
        cur_grp1=draw(256), posp0=draw(WIDTH), posp1=draw(WIDTH),
        posm0=draw(WIDTH), posm1=draw(WIDTH), posbl=draw(WIDTH),
        enam0=draw(2), enam1=draw(2), enabl=draw(2), denabl=draw(2),
        vdelbl=draw(2), resmp0=draw(2), resmp1=draw(2), ctrlpf=draw(256),
        pf=draw(1 << 20), skip_p0=draw(2), skip_p1=draw(2),
        pf_reflect=draw(2), m0_mask=jnp.asarray(rng.choice(
            [M0_PLAIN, M0_HIDDEN, M0_STRETCHED], count), jnp.int32))
    return tia.TIAState(regs=regs, screen=None, written=None)


def test_word_by_word_collisions_are_the_arrays():
    """The objects and their collision latches within random spans, word
    by word (`masks_by_word`, `collisions_by_word`) and as arrays."""
    rng = np.random.default_rng(1)
    count = 4096
    state = _random_registers(rng, count)
    x0 = jnp.asarray(rng.integers(0, WIDTH + 1, count), jnp.int32)
    x1 = jnp.minimum(x0 + jnp.asarray(rng.integers(0, WIDTH + 1, count),
                                      jnp.int32), WIDTH)

    def both(t, a, b):
        flags = (t.skip_p0, t.skip_p1, t.pf_reflect)
        masks = tia_objects.masks(t, *flags)
        words = tia_objects.masks_by_word(t, *flags)
        return (masks, jnp.stack([jnp.stack(w) for w in words]),
                tia_objects.collisions(masks, tia_objects.span(a, b)),
                tia_objects.collisions_by_word(
                    words, tia_objects.span_words(a, b)))
    masks, words, latches, latches_by_word = jax.device_get(
        jax.jit(jax.vmap(both))(state, x0, x1))
    np.testing.assert_array_equal(words, masks)
    np.testing.assert_array_equal(latches_by_word, latches)
    # the check saw collisions: most latches set somewhere, not everywhere
    seen = np.bitwise_or.reduce(latches)
    assert bin(int(seen)).count("1") == 15, bin(int(seen))
    assert (latches != latches[0]).any()
