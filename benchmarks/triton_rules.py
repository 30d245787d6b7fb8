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

`--semantics` instead runs `SEMANTICS`' integer edge cases in one
kernel and by XLA on the default device, and prints the lanes where
they differ: on a GPU (`gpu_session`'s `triton` stage), where Triton's
arithmetic could differ from XLA's; here, in Pallas's interpreter, the
test checks the probe itself.
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


def _uint8_add(x_ref, out_ref):
    x = x_ref[...]
    out_ref[...] = (x.astype(jnp.uint8) + jnp.uint8(200)).astype(I32)


def _uint8_bitwise(x_ref, out_ref):
    x = x_ref[...]
    out_ref[...] = (x.astype(jnp.uint8) ^ jnp.uint8(0x5A)).astype(I32)


def _int_to_bool(x_ref, out_ref):
    out_ref[...] = (x_ref[...] & 4).astype(bool).astype(I32)


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
        ("uint8 arithmetic (add)", _uint8_add, [lane], lane),
        ("uint8 bitwise (xor)", _uint8_bitwise, [lane], lane),
        ("int to bool by astype", _int_to_bool, [lane], lane),
    ]


def _triton_params():
    """Triton's parameters, a thread a lane. Without them JAX may lower a
    `pallas_call` for a GPU with Mosaic GPU instead, whose rules differ
    (8-bit arithmetic and bool casts, for one)."""
    from jax.experimental.pallas import triton as pallas_triton
    return pallas_triton.CompilerParams(num_warps=BLOCK // 32)


def lowers(kernel: Callable, inputs: list[tuple], output: tuple) -> dict:
    """Whether `kernel` compiles for an H100 as one Pallas Triton call."""
    from jax.experimental import pallas as pl
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gpu_aot
    sharding = gpu_aot.gpu_sharding()
    call = lambda *x: pl.pallas_call(
        kernel, grid=(1,), out_shape=jax.ShapeDtypeStruct(*output),
        compiler_params=_triton_params())(*x)
    specs = [jax.ShapeDtypeStruct(shape, dtype, sharding=sharding)
             for shape, dtype in inputs]
    try:
        jax.jit(call).lower(*specs).compile()
    except Exception as error:   # the lowering's own refusal
        return {"lowers": False, "error": f"{type(error).__name__}: "
                f"{str(error).splitlines()[0][:200]}"}
    return {"lowers": True}


SEMANTICS = {
    "rem": lambda x, y, s: jax.lax.rem(x, y),
    "div": lambda x, y, s: jax.lax.div(x, y),
    "shift_left": lambda x, y, s: jax.lax.shift_left(x, s),
    "shift_right_logical": lambda x, y, s: jax.lax.shift_right_logical(x, s),
    "shift_right_arithmetic":
        lambda x, y, s: jax.lax.shift_right_arithmetic(x, s),
    "uint32 shift_right": lambda x, y, s: jax.lax.shift_right_logical(
        x.astype(jnp.uint32), s.astype(jnp.uint32)).astype(I32),
    "to uint8": lambda x, y, s: x.astype(jnp.uint8).astype(I32),
    "to uint16": lambda x, y, s: x.astype(jnp.uint16).astype(I32),
    "to int8": lambda x, y, s: x.astype(jnp.int8).astype(I32),
    "sign": lambda x, y, s: jax.lax.sign(x),
    "uint8 add wraps": lambda x, y, s: (x.astype(jnp.uint8)
                                        + y.astype(jnp.uint8)).astype(I32),
    "bool from int": lambda x, y, s: (x & 4).astype(bool).astype(I32),
}
"""Integer operations the frame's jaxpr holds (`rem` 438 times, `div` 93,
shifts about 630, conversions 950), on edge cases: negative operands,
shift amounts of 32 and more (XLA defines them; C and PTX do not), and
narrowing conversions. XLA's results are the emulator's bits."""


def semantic_inputs(batch: int) -> tuple[jax.Array, jax.Array, jax.Array]:
    """x (negatives and values past 8 and 16 bits), y (nonzero, both
    signs) and shift amounts 0 to 39, `batch` lanes each."""
    lane = jnp.arange(batch, dtype=I32)
    x = (lane - batch // 2) * 977 + (lane % 7) * 65_536
    y = jnp.where(lane % 2 == 0, 1, -1) * (lane % 13 + 1)
    return x, y, lane % 40


def semantics_kernel(x_ref, y_ref, s_ref, *out_refs):
    x, y, s = x_ref[...], y_ref[...], s_ref[...]
    for out_ref, op in zip(out_refs, SEMANTICS.values()):
        out_ref[...] = op(x, y, s)


def semantics(batch: int = 4 * BLOCK, interpret: bool = False
              ) -> list[dict]:
    """Each of `SEMANTICS` computed in one Pallas kernel and by XLA, on
    the default device: per operation, the lanes that differ and the
    first of them. On a GPU, this is Triton's arithmetic against XLA's."""
    from jax.experimental import pallas as pl
    block = pl.BlockSpec((BLOCK,), lambda i: (i,))
    inputs = semantic_inputs(batch)
    kernel = pl.pallas_call(
        semantics_kernel, grid=(batch // BLOCK,), in_specs=[block] * 3,
        out_specs=[block] * len(SEMANTICS),
        out_shape=[jax.ShapeDtypeStruct((batch,), I32)] * len(SEMANTICS),
        interpret=interpret, compiler_params=None if interpret
        else _triton_params())
    got = jax.jit(kernel)(*inputs)
    rows = []
    for name, op, value in zip(SEMANTICS, SEMANTICS.values(), got):
        expected = jax.jit(op)(*inputs)
        differ = jnp.flatnonzero(value != expected)
        row = {"operation": name, "lanes": batch,
               "differing": int(differ.size),
               "backend": jax.default_backend()}
        if differ.size:
            k = int(differ[0])
            row["first"] = {"x": int(inputs[0][k]), "y": int(inputs[1][k]),
                            "shift": int(inputs[2][k]),
                            "kernel": int(value[k]),
                            "xla": int(expected[k])}
        rows.append(row)
    return rows


def interpreted(kernel: Callable, arrays: list[jax.Array],
                output: tuple) -> jax.Array:
    """`kernel` on `arrays` in Pallas's interpreter (any backend): what
    the probe computes, for checking it against numpy."""
    from jax.experimental import pallas as pl
    return pl.pallas_call(kernel, grid=(1,),
                          out_shape=jax.ShapeDtypeStruct(*output),
                          interpret=True)(*arrays)


def main() -> None:
    if "--semantics" in sys.argv:   # on a GPU: Triton's arithmetic
        for row in semantics():
            print(json.dumps(row), flush=True)
        return
    for construct, kernel, inputs, output in probes():
        print(json.dumps({"construct": construct, "jax": jax.__version__,
                          "target": "H100 (deviceless)",
                          **lowers(kernel, inputs, output)}), flush=True)


if __name__ == "__main__":
    main()
