"""Population training in one program: search spaces, Population Based
Training, HyperTrick and evolution strategies.

* `spaces`: search spaces as data (`LogUniform`, `QLogUniform`,
  `Categorical`) and the pure functions that sample, clip and perturb
  them; the presets `GA3C_HYPERTRICK` and `PPO_DEFAULT`.
* `pbt`: Population Based Training (Jaderberg et al. 2017), exploit and
  explore as gathers over the member axis inside the jitted program; the
  random-search baseline is the same program with both off.
* `hypertrick`: HyperTrick (Heinrich and Frosio 2019), phase-wise
  eviction with a history table, freed slots restarting fresh
  configurations from a budget.
* `es`: OpenAI-ES and SNES (evosax) over the policy's parameters, fitness
  from vmapped rollouts, the whole loop one program.
* `sweep` (`jaxatari sweep`) runs any of them with records, checkpoints
  and plots (`reports`).

Each takes an agent from `jaxatari.agents` (`Agent(init, update, ...)`)
and vmaps it over members, so a whole population trains as one XLA
program.
"""
import importlib
from typing import Any

__all__ = ["es", "hypertrick", "pbt", "reports", "spaces", "sweep"]


def __getattr__(name: str) -> Any:
    """The submodules, imported on first use: evosax (under `es`) starts
    JAX's backend when imported, and a sweep across processes must call
    `jax.distributed.initialize` before that."""
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
