"""The TIA's six objects as pixel masks, and their collisions.

A line's objects (P0, M0, P1, M1, BL, PF, in `enabled_objects` order) are
each a 160-pixel mask of five 32-bit words, pixel 32 * w + b at bit b of
word w: the object's shape drawn at pixel 0 (a table row, chosen by its
registers) and rotated to its position. A draw ORs into the 15 collision
latches the pairs of objects that overlap within the pixels it covers
(`span`). `jaxatari.tia` draws with them.

Two forms compute the same bits:

* arrays (`masks`, `span`, `collisions`): uint32[6, 5] masks, what a
  console drawn alone uses, since its pixels read them (`tia._line_pixels`);
* words (`masks_by_word`, `span_words`, `collisions_by_word`): every mask
  as 5 uint32 scalars, for a whole batch's undrawn draw in the CPU's
  lowering (`tia.draws_at_once`). Vmapped, each operation is then one over
  the batch. An undrawn frame of 256 Pong consoles in play took 0.170 s
  this way against 0.268 s with the arrays (BENCHMARKS.md, "Collisions
  word by word").
"""
from __future__ import annotations

import functools
import operator
from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

from jaxatari import folds, lowering
from jaxatari.tia_tables import (
    BL, M0, M0_HIDDEN, M0_STRETCHED, M1, MISSILE_MASKS, ONES, P0, P1, PAIR_A,
    PAIR_B, PF, PLAYER_MASKS, PLAYFIELD_MASKS, WIDTH, WORDS)

if TYPE_CHECKING:   # jaxatari.tia imports this module
    from jaxatari.tia import TIAState


def rotate(base: jax.Array, position: jax.Array) -> jax.Array:
    """Move a mask drawn at pixel 0 to `position` (in 0..159, as the TIA
    keeps every object's), wrapping at 160. No division: a vector CPU
    has no integer divide. (A whole batch's draw in the CPU's lowering
    rotates word by word instead: `rotated_words`.)"""
    word, bit = _word_and_bit(position)
    index = _wrapped_word(word + jnp.arange(WORDS))
    low, following = base[index], base[_wrapped_word(index + 1)]
    high = jnp.where(bit == 0, jnp.uint32(0),
                     following << ((32 - bit) & 31))
    return (low >> bit) | high


def _word_and_bit(position: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Where a mask placed at `position` reads its pixel 0 from: the
    word, and the bit within it."""
    start = jnp.where(position == 0, 0, WIDTH - position)
    return start >> 5, (start & 31).astype(jnp.uint32)


def _wrapped_word(index: jax.Array) -> jax.Array:
    """`index % WORDS` for an index in 0..2 * WORDS - 1."""
    return jnp.where(index >= WORDS, index - WORDS, index)


def _object_bases(tia: TIAState, skip_p0, skip_p1, reflect) -> list:
    """Each of P0, M0, P1, M1, BL, PF as its mask drawn at pixel 0
    (uint32[5]), its position (None: the playfield is not moved) and
    whether it shows (None: always)."""
    def missile(nusiz, on, pos, stretch=0):
        size = ((nusiz >> 4) & 3) | stretch
        return jnp.asarray(MISSILE_MASKS)[nusiz & 7, size], pos, on != 0

    ball_on = jnp.where(tia.vdelbl != 0, tia.denabl, tia.enabl)
    table = jnp.asarray(PLAYFIELD_MASKS)[reflect]
    pf = tia.pf
    playfield = (table[0, pf & 0xF] | table[1, (pf >> 4) & 0xFF]
                 | table[2, (pf >> 12) & 0xFF])
    return [
        (jnp.asarray(PLAYER_MASKS)[skip_p0, tia.nusiz0 & 7, tia.cur_grp0],
         tia.posp0, None),
        missile(tia.nusiz0, tia.enam0 * (1 - tia.resmp0) * (
            tia.m0_mask != M0_HIDDEN), tia.posm0,
            (tia.m0_mask == M0_STRETCHED).astype(jnp.int32)),
        (jnp.asarray(PLAYER_MASKS)[skip_p1, tia.nusiz1 & 7, tia.cur_grp1],
         tia.posp1, None),
        missile(tia.nusiz1, tia.enam1 * (1 - tia.resmp1), tia.posm1),
        (jnp.asarray(MISSILE_MASKS)[0, (tia.ctrlpf >> 4) & 3], tia.posbl,
         ball_on != 0),
        (playfield, None, None)]


def masks(tia: TIAState, skip_p0: jax.Array, skip_p1: jax.Array,
          reflect: jax.Array) -> jax.Array:
    """uint32[6, 5] masks of P0, M0, P1, M1, BL, PF, with the players'
    skip flags and the playfield's reflection given (a line's, or the
    next line's)."""
    placed = []
    for base, position, on in _object_bases(tia, skip_p0, skip_p1, reflect):
        mask = base if position is None else rotate(base, position)
        placed.append(mask if on is None else jnp.where(on, mask, 0))
    return jnp.stack(placed)


def masks_by_word(tia: TIAState, skip_p0: jax.Array, skip_p1: jax.Array,
                  reflect: jax.Array) -> list[list[jax.Array]]:
    """`masks` as 6 lists of 5 words (uint32 scalars; see the module
    docstring). Each mask is gathered from its table once
    (`lowering.computed_once`): XLA:CPU runs a gather element by element,
    and fused into the rotation it gathered again for every word."""
    placed = []
    for base, position, on in _object_bases(tia, skip_p0, skip_p1, reflect):
        base = lowering.computed_once(base)
        words = [base[w] for w in range(WORDS)]
        if position is not None:
            words = rotated_words(words, position)
        placed.append(words if on is None else
                      [jnp.where(on, word, jnp.uint32(0)) for word in words])
    return placed


def rotated_words(words: list[jax.Array], position: jax.Array
                  ) -> list[jax.Array]:
    """`rotate` of a mask given as its 5 words."""
    word, bit = _word_and_bit(position)
    low = []
    for w in range(WORDS):
        picked = words[w]
        for k in range(1, WORDS):
            picked = jnp.where(word == k, words[(w + k) % WORDS], picked)
        low.append(picked)
    return [(low[w] >> bit) | jnp.where(
        bit == 0, jnp.uint32(0), low[(w + 1) % WORDS] << ((32 - bit) & 31))
        for w in range(WORDS)]


def enabled_objects(tia: TIAState) -> jax.Array:
    """Stella's `myEnabledObjects`: which objects could draw at all."""
    ball_on = jnp.where(tia.vdelbl != 0, tia.denabl, tia.enabl)
    flags = [(tia.cur_grp0 != 0, P0), ((tia.enam0 != 0) & (tia.resmp0 == 0),
             M0), (tia.cur_grp1 != 0, P1),
             ((tia.enam1 != 0) & (tia.resmp1 == 0), M1),
             (ball_on != 0, BL), (tia.pf != 0, PF)]
    return sum(jnp.where(on, bit, 0) for on, bit in flags)


def span(x0: jax.Array, x1: jax.Array) -> jax.Array:
    """uint32[5] with pixels [x0, x1) set."""
    base = jnp.arange(WORDS) * 32
    hi = jnp.clip(x1 - base, 0, 32)
    lo = jnp.clip(x0 - base, 0, 32)
    ones = jnp.asarray(ONES)
    return ones[hi] & ~ones[lo]


def collisions(objects: jax.Array, within: jax.Array) -> jax.Array:
    """The collision latch bits that `objects` (`masks`) produce within
    the pixels `within` (`span`)."""
    hits = objects[PAIR_A] & objects[PAIR_B] & within
    bits = folds.any_along(hits != 0, axis=1).astype(jnp.int32)
    return folds.or_along(bits << jnp.arange(15))


def span_words(x0: jax.Array, x1: jax.Array) -> list[jax.Array]:
    """`span` as its 5 words."""
    def ones(count):   # the low `count` bits, count in 0..32
        shifted = jnp.left_shift(jnp.uint32(1),
                                 jnp.minimum(count, 31).astype(jnp.uint32))
        return jnp.where(count >= 32, jnp.uint32(0xFFFFFFFF),
                         shifted - jnp.uint32(1))
    return [ones(jnp.clip(x1 - 32 * w, 0, 32))
            & ~ones(jnp.clip(x0 - 32 * w, 0, 32)) for w in range(WORDS)]


def collisions_by_word(objects: list[list[jax.Array]],
                       within: list[jax.Array]) -> jax.Array:
    """`collisions` of objects and pixels given as words (`masks_by_word`,
    `span_words`)."""
    inside = [[word & within[w] for w, word in enumerate(words)]
              for words in objects]
    bits = jnp.int32(0)
    for pair, (a, b) in enumerate(zip(PAIR_A.tolist(), PAIR_B.tolist())):
        overlap = functools.reduce(operator.or_, [
            inside[a][w] & inside[b][w] for w in range(WORDS)])
        bits = bits | jnp.where(overlap != 0, 1 << pair, 0)
    return bits
