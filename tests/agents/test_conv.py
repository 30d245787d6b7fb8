"""`jaxatari.agents.conv`: `conv2d` against `lax.conv_general_dilated`
(values and gradients, alone, in a scan and under a vmap over kernels, on
the Nature CNN's layer shapes and on windows that leave input rows
unread), its bad arguments, and the reason it exists: XLA:CPU's compiled
training loop holds only canonical (Eigen) convolutions."""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from jaxatari.agents import conv, networks

NHWC = ("NHWC", "HWIO", "NHWC")

# (batch, h, w, in, out, kernel, stride): the Nature CNN's three layers,
# then windows whose strides leave the last rows or columns unread.
SHAPES = [(3, 84, 84, 4, 32, 8, 4), (3, 20, 20, 32, 64, 4, 2),
          (2, 9, 9, 64, 64, 3, 1), (2, 12, 14, 3, 5, 3, 2),
          (2, 86, 85, 2, 3, 8, 4)]


def _arrays(shape, members=None):
    batch, h, w, cin, cout, size, _ = shape
    rng = np.random.default_rng(sum(shape))
    x = rng.normal(size=(batch, h, w, cin)).astype(np.float32)
    lead = () if members is None else (members,)
    k = rng.normal(size=lead + (size, size, cin, cout)).astype(np.float32)
    return jnp.asarray(x), jnp.asarray(k)


def _losses(stride):
    def reference(x, k):
        y = lax.conv_general_dilated(x, k, (stride, stride), "VALID",
                                     dimension_numbers=NHWC)
        return jnp.sum(jnp.sin(y))

    def ours(x, k):
        y = conv.conv2d(x, k, (stride, stride), "VALID",
                        dimension_numbers=NHWC)
        return jnp.sum(jnp.sin(y))
    return reference, ours


def _close(a, b, rtol=2e-5):
    """Equal up to float32 summation order, relative to the largest."""
    scale = float(jnp.max(jnp.abs(a)))
    np.testing.assert_allclose(np.asarray(b), np.asarray(a),
                               atol=rtol * scale, rtol=0)


@pytest.mark.parametrize("shape", SHAPES)
def test_value_and_grads_match_lax(shape):
    x, k = _arrays(shape)
    reference, ours = _losses(shape[-1])
    want = jax.jit(jax.value_and_grad(reference, (0, 1)))(x, k)
    got = jax.jit(jax.value_and_grad(ours, (0, 1)))(x, k)
    _close(want[0], got[0])
    for w, g in zip(want[1], got[1]):
        _close(w, g)


@pytest.mark.parametrize("shape", [SHAPES[1], SHAPES[3]])
def test_grads_in_scan_under_vmap_match_lax(shape):
    """A population's shape: kernels vmapped, gradient steps in a scan."""
    x, k = _arrays(shape, members=3)

    def descend(loss):
        def run(x, kernel):
            def body(kernel, _):
                dx, dk = jax.grad(loss, (0, 1))(x, kernel)
                return kernel - 1e-3 * dk, dx
            return lax.scan(body, kernel, None, length=2)
        return jax.jit(jax.vmap(run, (None, 0)))

    reference, ours = _losses(shape[-1])
    for w, g in zip(descend(reference)(x, k), descend(ours)(x, k)):
        _close(w, g, rtol=1e-4)


@pytest.mark.parametrize("kwargs", [
    {"padding": "SAME"}, {"padding": [(1, 1), (0, 0)]},
    {"lhs_dilation": (2, 2)}, {"rhs_dilation": (2, 1)},
    {"feature_group_count": 2}, {"dimension_numbers": ("NCHW", "OIHW",
                                                       "NCHW")}])
def test_unsupported_options_raise(kwargs):
    x, k = _arrays(SHAPES[3])
    args = {"padding": "VALID", "dimension_numbers": NHWC, **kwargs}
    with pytest.raises(ValueError, match="lax.conv_general_dilated"):
        conv.conv2d(x, k, (1, 1), **args)


def test_scanned_cnn_gradient_has_only_canonical_convolutions():
    """The Nature CNN's gradient inside a scan, compiled for the CPU: every
    convolution is Eigen's canonical form (with `lax`'s own VJP, all 5
    gradient convolutions were not, and ran ~10x slower)."""
    net = networks.NatureCNN(3)
    obs = jnp.zeros((2, 4, 84, 84), jnp.uint8)
    params = jax.jit(net.init)(jax.random.key(0), obs)

    def steps(params):
        def body(params, _):
            grads = jax.grad(lambda p: jnp.sum(net.apply(p, obs)[0]))(params)
            return jax.tree.map(lambda p, g: p - g, params, grads), None
        return lax.scan(body, params, None, length=2)[0]

    text = jax.jit(steps).lower(params).compile().as_text()
    labels = re.findall(r"convolution\(.*dim_labels=([^,\s]+)", text)
    assert len(labels) == 8  # 3 forward, 3 kernel grads, 2 input grads
    assert set(labels) == {"b01f_01io->b01f"}
