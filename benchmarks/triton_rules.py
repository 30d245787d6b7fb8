"""Which constructs Pallas's Triton lowering accepts, compiled for an H100.

A one-kernel frame (BENCHMARKS.md, "On an H100") would run the emulator's
code inside a Pallas kernel, a block of consoles a program. What that code
may contain there is decided by Pallas's Triton lowering, which this
script asks directly: each probe is a tiny kernel of `BLOCK` lanes (one
console a lane) that uses one construct the emulator uses, compiled for an
H100 without one (`gpu_aot`'s deviceless target). It needs `gpu_aot`'s
CUDA-plugin environment:

    JAX_SKIP_CUDA_CONSTRAINTS_CHECK=1 python benchmarks/triton_rules.py

and prints one JSON line per probe: the construct, whether it lowered,
and the first line of the error when it did not.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Callable

import jax
import jax.numpy as jnp

BLOCK = 128
"""Lanes (consoles) of a probe's program."""
I32 = jnp.int32


def _one_hot_sum(width: int) -> Callable:
    """A console's small array held as a value of `width` columns, read
    at a per-lane index by a one-hot sum (what `folds` does)."""
    def kernel(array_ref, index_ref, out_ref):
        hot = jax.lax.broadcasted_iota(I32, (BLOCK, width), 1) == \
            index_ref[...][:, None]
        out_ref[...] = jnp.sum(jnp.where(hot, array_ref[...], 0), axis=1)
    return kernel


def _ref_row_load(array_ref, index_ref, out_ref):
    lanes = jnp.arange(BLOCK, dtype=I32)
    out_ref[...] = array_ref[lanes, index_ref[...]].astype(I32)


def _shared_table_load(table_ref, index_ref, out_ref):
    out_ref[...] = table_ref[index_ref[...]]


def _gather_on_value(array_ref, index_ref, out_ref):
    out_ref[...] = jnp.take_along_axis(
        array_ref[...], index_ref[...][:, None], axis=1)[:, 0]


def _store_then_load(index_ref, ram_ref, out_ref):
    lanes, index = jnp.arange(BLOCK, dtype=I32), index_ref[...]
    old = ram_ref[lanes, index & 127]
    ram_ref[lanes, index & 127] = jnp.where(
        index > 5, (index & 255).astype(jnp.uint8), old)
    out_ref[...] = ram_ref[lanes, (index + 1) & 127].astype(I32)


def _while(predicate: Callable) -> Callable:
    def kernel(x_ref, out_ref):
        x = x_ref[...]
        out_ref[...] = jax.lax.while_loop(
            lambda c: predicate(c[0] < 100),
            lambda c: (c[0] + c[1], c[1]), (x, x + 1))[0]
    return kernel


def _cond(predicate: Callable) -> Callable:
    def kernel(x_ref, out_ref):
        x = x_ref[...]
        out_ref[...] = jax.lax.cond(predicate(x > 3), lambda: x * 2,
                                    lambda: x)
    return kernel


def _select_n_three(x_ref, out_ref):
    x = x_ref[...]
    out_ref[...] = jax.lax.select_n(jnp.clip(x % 3, 0, 2), x >> 1, x << 2,
                                    x // 7)


def _nested_where(x_ref, out_ref):
    x = x_ref[...]
    out_ref[...] = jnp.where(x % 3 == 0, x >> 1,
                             jnp.where(x % 3 == 1, x << 2, x // 7))


def _any(flags: jax.Array) -> jax.Array:
    return jnp.any(flags)


def _max(flags: jax.Array) -> jax.Array:
    return jnp.max(flags.astype(I32)) > 0


def probes() -> list[tuple[str, Callable, list[tuple], tuple]]:
    """(construct, kernel, input shapes and dtypes, output shape)."""
    lane = ((BLOCK,), I32)
    return [
        ("value [B,15] (not a power of 2), one-hot read", _one_hot_sum(15),
         [((BLOCK, 15), I32), lane], lane),
        ("value [B,16], one-hot read", _one_hot_sum(16),
         [((BLOCK, 16), I32), lane], lane),
        ("ref [B,15], a lane's own row at a lane's index", _ref_row_load,
         [((BLOCK, 15), I32), lane], lane),
        ("ref [33] shared, a lane's index", _shared_table_load,
         [((33,), I32), lane], lane),
        ("ref [B,128] uint8, a lane's index", _ref_row_load,
         [((BLOCK, 128), jnp.uint8), lane], lane),
        ("gather on a value [B,16]", _gather_on_value,
         [((BLOCK, 16), I32), lane], lane),
        ("uint8 ref store, then load", _store_then_load,
         [lane, ((BLOCK, 128), jnp.uint8)], lane),
        ("while_loop, predicate jnp.any", _while(_any), [lane], lane),
        ("while_loop, predicate max of ints", _while(_max), [lane], lane),
        ("cond, predicate jnp.any", _cond(_any), [lane], lane),
        ("cond, predicate max of ints", _cond(_max), [lane], lane),
        ("select_n of 3 cases", _select_n_three, [lane], lane),
        ("nested where, shifts, rem, div", _nested_where, [lane], lane),
    ]


def lowers(kernel: Callable, inputs: list[tuple], output: tuple) -> dict:
    """Whether `kernel` compiles for an H100 as one Pallas Triton call."""
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import triton as pallas_triton
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gpu_aot
    sharding = gpu_aot.gpu_sharding()
    call = lambda *x: pl.pallas_call(
        kernel, grid=(1,), out_shape=jax.ShapeDtypeStruct(*output),
        compiler_params=pallas_triton.CompilerParams(num_warps=BLOCK // 32)
    )(*x)
    specs = [jax.ShapeDtypeStruct(shape, dtype, sharding=sharding)
             for shape, dtype in inputs]
    try:
        jax.jit(call).lower(*specs).compile()
    except Exception as error:   # the lowering's own refusal
        return {"lowers": False, "error": f"{type(error).__name__}: "
                f"{str(error).splitlines()[0][:200]}"}
    return {"lowers": True}


def interpreted(kernel: Callable, arrays: list[jax.Array],
                output: tuple) -> jax.Array:
    """`kernel` on `arrays` in Pallas's interpreter (any backend): what
    the probe computes, for checking it against numpy."""
    from jax.experimental import pallas as pl
    return pl.pallas_call(kernel, grid=(1,),
                          out_shape=jax.ShapeDtypeStruct(*output),
                          interpret=True)(*arrays)


def main() -> None:
    for construct, kernel, inputs, output in probes():
        print(json.dumps({"construct": construct, "jax": jax.__version__,
                          "target": "H100 (deviceless)",
                          **lowers(kernel, inputs, output)}), flush=True)


if __name__ == "__main__":
    main()
