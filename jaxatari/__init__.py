"""jaxatari: an Atari 2600 in pure JAX, bit-exact with ALE, and RL on top."""

from jaxatari import _config

_config.prefer_kernel_loops()   # before JAX's CPU backend starts

from jaxatari import cpu6502, flatbus  # noqa: E402

__version__ = "0.1.0"

from jaxatari.environment import (  # noqa: E402
    AtariEnv, EnvParams, EnvState, make, make_from_rom)
from jaxatari.games import list_games  # noqa: E402
from jaxatari.wrappers import make_atari  # noqa: E402

__all__ = ["AtariEnv", "EnvParams", "EnvState", "cpu6502", "flatbus",
           "list_games", "make", "make_atari", "make_from_rom"]
