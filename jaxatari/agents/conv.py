"""A 2-D convolution whose gradient XLA:CPU runs fast inside loops.

XLA:CPU hands a convolution to Eigen only in its canonical form: input
`[batch, h, w, features]`, kernel `[h, w, in, out]`, output like the input
(`dim_labels=b01f_01io->b01f`). Any other form is emitted as a naive loop
nest. Its `convolution-canonicalization` pass rewrites other forms into the
canonical one, but only for the module's top-level computation, never
inside a `while` body.

The two convolutions that JAX derives for an NHWC convolution's gradient
are not canonical: the kernel's gradient contracts over the batch
(`f01b_i01o->01bf`) and the input's takes the kernel with `in` and `out`
swapped (`b01f_01oi->b01f`). A training step runs them inside loops (the
updates' `scan`, PPO's epochs and minibatches), where they stay
non-canonical. Measured on this project's 2-core CPU (jax 0.10.2, the
Nature CNN at batch 256, `benchmarks/train.py conv`): one gradient takes
0.39 s under a plain `jit`, four unrolled 1.51 s, four in a `lax.scan`
14.4 s; with `conv2d`, four in a scan take 1.55 s.

`conv2d` is `lax.conv_general_dilated` for what the agents' networks use
(NHWC input, HWIO kernel, VALID padding, strides, no dilation or groups)
with a hand-written VJP whose convolutions are canonical, the layout
changes being explicit transposes:

* input gradient: the output gradient dilated by the stride and padded by
  the kernel's size less one (plus the rows the forward pass never read),
  correlated with the kernel flipped in space, `in` and `out` swapped;
* kernel gradient: the input with batch and features exchanged
  (`[in, h, w, batch]`) correlated with the output gradient as a kernel
  (`[ho, wo, batch, out]`, dilated by the stride), cropped to the kernel's
  size.

This is a per-backend choice (`jax.lax.platform_dependent`): the CPU gets
this VJP, other backends keep `lax`'s own, which cuDNN and the TPU take in
any layout. The forward convolution is the same operation on both.
"""
from __future__ import annotations

import functools
from typing import Any, Sequence

import jax
import jax.numpy as jnp
from jax import lax

_NHWC = lax.ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1),
                                 out_spec=(0, 3, 1, 2))


def _forward(x: jax.Array, kernel: jax.Array,
             strides: tuple[int, int]) -> jax.Array:
    return lax.conv_general_dilated(x, kernel, strides, "VALID",
                                    dimension_numbers=_NHWC)


def _input_grad(g: jax.Array, kernel: jax.Array, strides: tuple[int, int],
                in_hw: tuple[int, int]) -> jax.Array:
    """d(input) from d(output): a full correlation with the flipped kernel."""
    flipped = jnp.flip(kernel, (0, 1)).transpose(0, 1, 3, 2)
    padding = []
    for axis in range(2):
        size, stride = kernel.shape[axis], strides[axis]
        unread = in_hw[axis] - ((g.shape[1 + axis] - 1) * stride + size)
        padding.append((size - 1, size - 1 + unread))
    return lax.conv_general_dilated(g, flipped, (1, 1), padding,
                                    lhs_dilation=strides,
                                    dimension_numbers=_NHWC)


def _kernel_grad(x: jax.Array, g: jax.Array, strides: tuple[int, int],
                 kernel_hw: tuple[int, int]) -> jax.Array:
    """d(kernel) from d(output): the batch is the contracted feature."""
    lhs = x.transpose(3, 1, 2, 0)        # [in, h, w, batch]
    rhs = g.transpose(1, 2, 0, 3)        # [ho, wo, batch, out]
    full = lax.conv_general_dilated(lhs, rhs, (1, 1), "VALID",
                                    rhs_dilation=strides,
                                    dimension_numbers=_NHWC)
    return full[:, :kernel_hw[0], :kernel_hw[1], :].transpose(1, 2, 0, 3)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _conv_canonical_grad(x: jax.Array, kernel: jax.Array,
                         strides: tuple[int, int]) -> jax.Array:
    return _forward(x, kernel, strides)


def _fwd(x: jax.Array, kernel: jax.Array, strides: tuple[int, int]
         ) -> tuple[jax.Array, tuple[jax.Array, jax.Array]]:
    return _forward(x, kernel, strides), (x, kernel)


def _bwd(strides: tuple[int, int], residuals: tuple[jax.Array, jax.Array],
         g: jax.Array) -> tuple[jax.Array, jax.Array]:
    x, kernel = residuals
    dx = _input_grad(g, kernel, strides, x.shape[1:3])
    dkernel = _kernel_grad(x, g, strides, kernel.shape[:2])
    return dx.astype(x.dtype), dkernel.astype(kernel.dtype)


_conv_canonical_grad.defvjp(_fwd, _bwd)


def _check(padding: Any, lhs_dilation: Any, rhs_dilation: Any,
           dimension_numbers: Any, feature_group_count: int) -> None:
    unit = (None, (1, 1), [1, 1])
    if isinstance(padding, str):
        valid = padding.upper() == "VALID"
    else:
        valid = all(tuple(pair) == (0, 0) for pair in padding)
    nhwc = (dimension_numbers is not None
            and lax.conv_dimension_numbers((1, 1, 1, 1), (1, 1, 1, 1),
                                           dimension_numbers) == _NHWC)
    if not (valid and lhs_dilation in unit and rhs_dilation in unit
            and nhwc and feature_group_count == 1):
        raise ValueError(
            "conv2d takes NHWC input, an HWIO kernel, VALID padding and no "
            "dilation or groups; use lax.conv_general_dilated for others")


def conv2d(x: jax.Array, kernel: jax.Array, strides: Sequence[int],
           padding: Any = "VALID", lhs_dilation: Any = None,
           rhs_dilation: Any = None, dimension_numbers: Any = _NHWC,
           feature_group_count: int = 1, precision: Any = None
           ) -> jax.Array:
    """`lax.conv_general_dilated`, with a gradient that is fast on the CPU.

    The signature is the one `flax.linen.Conv(conv_general_dilated=...)`
    calls; only the options the agents' networks use are accepted.

    Args:
        x: input, `[batch, h, w, in]`.
        kernel: `[kh, kw, in, out]`.
        strides: the window's strides, `(sh, sw)`.
        padding: "VALID" (or all-zero pairs).
        lhs_dilation: None or ones.
        rhs_dilation: None or ones.
        dimension_numbers: NHWC / HWIO / NHWC, as Flax gives them.
        feature_group_count: 1.
        precision: ignored (the CPU's float32 convolution).

    Returns:
        `[batch, ho, wo, out]`, the same forward values as `lax`'s.

    Raises:
        ValueError: any other padding, dilation, layout or grouping.
    """
    del precision
    _check(padding, lhs_dilation, rhs_dilation, dimension_numbers,
           feature_group_count)
    stride = (int(strides[0]), int(strides[1]))
    return lax.platform_dependent(
        x, kernel,
        cpu=lambda a, k: _conv_canonical_grad(a, k, stride),
        default=lambda a, k: _forward(a, k, stride))
