"""The accelerator's lowering compiled on the CPU, only to check its bits.

No user runs the accelerator's lowering on a CPU: a CPU process traces
the CPU's variant alone (`lowering.cpu_alone`). The suite compiles it
there to compare its bits with the CPU's lowering, and those compiles
are among its costliest (a Breakout step of 2 envs: 65 to 68 s).
XLA:CPU's backend optimization level sets how much LLVM optimizes the
generated code, not what the HLO computes; at level 0 such a step
compiled in 48 to 51 s and ran 3 times slower, with the same
observations (BENCHMARKS.md, "The cold suite, compile by compile").
Checks that run a frame or two of a few consoles compile it that way
(the plain kernel's frames, `test_tia_gather`'s consoles in step,
`test_tia_log`'s console); `test_lowering`'s mixed batch of 9 consoles,
4 frames in 2 loop shapes, ran longer than it saved, so it compiles as
the CPU's lowering does.
"""
from __future__ import annotations

from typing import Any, Callable

import jax

from jaxatari import lowering

CHECK_ONLY_OPTIONS: dict[str, Any] = {"xla_backend_optimization_level": 0}
"""XLA compile options for programs of the accelerator's lowering that
the suite runs on the CPU only to compare their bits."""


def jit(fun: Callable, variant: str = lowering.ACCELERATOR,
        **kwargs: Any) -> Callable:
    """`jax.jit(fun, **kwargs)`, compiled with `CHECK_ONLY_OPTIONS` where
    `variant` (the lowering it is traced in) is the accelerator's; the
    CPU's lowering compiles as users compile it."""
    options = CHECK_ONLY_OPTIONS if variant == lowering.ACCELERATOR else None
    return jax.jit(fun, compiler_options=options, **kwargs)
