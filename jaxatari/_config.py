"""Process-wide JAX settings that jaxatari's entry points share."""

from __future__ import annotations

import os
import pathlib

import jax


def cache_dir() -> pathlib.Path:
    """jaxatari's directory under the user's cache directory."""
    base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "jaxatari"


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
