"""A TIA draw's pixels (`tia._span_pixels`): in the CPU's lowering a
console's narrow span computes only a window of pixels around it; on
random registers and spans, the span's pixels are the whole line's in
both lowerings, alone and under vmap."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import lowering, tia, tia_objects
from jaxatari.tia_tables import WIDTH
from tests.test_tia_objects import _random_registers


def _spans(rng: np.random.Generator, count: int) -> tuple[np.ndarray, ...]:
    """`count` spans [x0, x1) in a line, half of them at most a window
    wide and some against either edge."""
    width = np.where(rng.random(count) < 0.5,
                     rng.integers(1, tia.PIXEL_WINDOW + 1, count),
                     rng.integers(1, WIDTH + 1, count))
    x0 = rng.integers(0, WIDTH - width + 1)
    x0[:8] = 0
    x0[8:16] = WIDTH - width[8:16]
    return x0.astype(np.int32), (x0 + width).astype(np.int32)


@pytest.fixture(scope="module")
def drawn() -> dict:
    """Random registers with random colours, spans, and each console's
    whole line and span pixels, one console at a time (`lax.map`) and
    vmapped, in both lowerings."""
    rng = np.random.default_rng(7)
    count = 512
    state = _random_registers(rng, count)
    colours = {name: jnp.asarray(rng.integers(0, 256, count), jnp.int32)
               for name in ("colubk", "colupf", "colup0", "colup1")}
    state = state.set(**colours)
    x0, x1 = _spans(rng, count)

    def line(t):
        masks = tia_objects.masks(t, t.skip_p0, t.skip_p1, t.pf_reflect)
        return tia._line_pixels(t, masks)

    def span(args):
        t, a, b = args
        masks = tia_objects.masks(t, t.skip_p0, t.skip_p1, t.pf_reflect)
        return tia._span_pixels(t, masks, a, b)

    out = {"x0": x0, "x1": x1,
           "line": np.asarray(jax.jit(jax.vmap(line))(state))}
    for variant in lowering.VARIANTS:
        with lowering.forced(variant):
            args = (state, jnp.asarray(x0), jnp.asarray(x1))
            out[variant, "alone"] = np.asarray(
                jax.jit(lambda a: jax.lax.map(span, a))(args))
            out[variant, "vmap"] = np.asarray(jax.jit(jax.vmap(
                lambda *a: span(a)))(*args))
    return out


@pytest.mark.parametrize("variant", lowering.VARIANTS)
@pytest.mark.parametrize("batching", ["alone", "vmap"])
def test_span_pixels_are_the_lines(drawn, variant, batching):
    pixels = drawn[variant, batching]
    for k, (a, b) in enumerate(zip(drawn["x0"], drawn["x1"])):
        np.testing.assert_array_equal(
            pixels[k, a:b], drawn["line"][k, a:b],
            err_msg=f"{variant} {batching}: console {k}, span [{a}, {b})")


def test_only_a_narrow_span_alone_on_the_cpu_computes_a_window(drawn):
    """The window is taken: in the CPU's lowering, one console's narrow
    span leaves the pixels outside its window 0 where the line has
    colour; a wide span, a vmapped one and the accelerator's are the
    whole line."""
    x0, x1, line = drawn["x0"], drawn["x1"], drawn["line"]
    narrow = x1 - x0 <= tia.PIXEL_WINDOW
    start = np.clip(x0, 0, WIDTH - tia.PIXEL_WINDOW)
    inside = ((np.arange(WIDTH) >= start[:, None])
              & (np.arange(WIDTH) < start[:, None] + tia.PIXEL_WINDOW))
    alone = drawn[lowering.CPU, "alone"]
    outside = narrow[:, None] & ~inside
    assert (line[outside] != 0).sum() > 1000
    assert (alone[outside] == 0).all()
    np.testing.assert_array_equal(alone[~narrow], line[~narrow])
    for key in ((lowering.CPU, "vmap"), (lowering.ACCELERATOR, "alone"),
                (lowering.ACCELERATOR, "vmap")):
        np.testing.assert_array_equal(drawn[key], line, err_msg=str(key))
