"""Process-wide JAX settings that jaxatari's entry points share."""

from __future__ import annotations

import contextlib
import os
import pathlib

import jax

KERNEL_LOOPS = ("--xla_backend_extra_options="
                "xla_cpu_small_while_loop_byte_threshold=1000000000")
"""The XLA flag `prefer_kernel_loops` adds."""


def prefer_kernel_loops() -> None:
    """Let XLA:CPU compile whole while loops into single kernels.

    XLA:CPU runs a program as a sequence of thunks, each with a fixed cost
    (a fraction of a microsecond). The frame loop runs thousands of
    instructions a frame, each a few hundred small operations, so for one
    console or a few, those costs were most of a frame. XLA can instead
    compile a loop into one kernel, but by default only loops touching
    under 1 kB (`xla_cpu_small_while_loop_byte_threshold`). This raises
    the limit, in `XLA_FLAGS`, unless the user passes
    `--xla_backend_extra_options` already. XLA reads the flags when its
    CPU backend starts, so this counts only if jaxatari is imported before
    any JAX computation; loops that contain a scatter are never hoisted
    (which is why the frame loop writes rows and RAM without one).
    """
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_backend_extra_options" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {KERNEL_LOOPS}".strip()


def cache_dir() -> pathlib.Path:
    """jaxatari's directory under the user's cache directory."""
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "jaxatari"


def default_backend_lowering() -> contextlib.AbstractContextManager[str]:
    """A context in which the frame loop is traced for JAX's default
    backend alone (`lowering.default_backend_only`), for entry points
    whose programs all run there; it yields the variant."""
    from jaxatari import lowering   # the emulator's; imported on use
    return lowering.default_backend_only()


def enable_compilation_cache() -> None:
    """Turn on JAX's persistent compilation cache, unless the user set one.

    Compiled XLA programs are kept under `cache_dir() / "xla"`, so a second
    run of the tests or a benchmark skips most compilation.
    """
    if jax.config.jax_compilation_cache_dir:  # set by the user (or env)
        return
    path = cache_dir() / "xla"
    path.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
