"""jaxatari: an Atari 2600 in pure JAX, bit-exact with ALE, and RL on top."""

from jaxatari import cpu6502, flatbus

__version__ = "0.1.0"

from jaxatari.environment import AtariEnv, EnvParams, EnvState, make  # noqa: E402,F401

__all__ = ["AtariEnv", "EnvParams", "EnvState", "cpu6502", "flatbus", "make"]
