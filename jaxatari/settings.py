"""Host-side checks of the settings that `make` and the wrappers take.

`EnvParams` fields are plain values that `jit` cannot check: a frameskip
of 0 would emulate nothing and a repeat probability of 2 would make every
action sticky. `check_settings` refuses them on the host, before the boot,
wherever they come in (`make`, `AtariEnv.make_params`,
`AtariPreprocessing.make_params`, `make_atari`).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jax
import numpy as np

OBS_TYPES = ("rgb", "grayscale", "ram")
"""The observation types `AtariEnv.observation` knows."""


def check_settings(settings: Mapping[str, Any]) -> None:
    """Refuses the bad values among `settings`; other keys are ignored.

    Checked: `frameskip` (an integer >= 1), `repeat_action_probability`
    (a number in [0, 1], or an array of them; a traced value is not
    checked) and `obs_type` (one of `OBS_TYPES`).

    Args:
        settings: `EnvParams` field names and values, as given.

    Raises:
        ValueError: a value out of range; the message names it and says
            what to pass instead.
    """
    if "frameskip" in settings and not _is_frameskip(settings["frameskip"]):
        raise ValueError(
            f"frameskip must be an integer >= 1 (the frames each step "
            f"emulates: ALE v5 uses 4, 1 steps every frame), got "
            f"{settings['frameskip']!r}")
    chance = settings.get("repeat_action_probability", 0.0)
    if not (isinstance(chance, jax.core.Tracer) or _is_probability(chance)):
        raise ValueError(
            f"repeat_action_probability must be a number in [0, 1] (the "
            f"chance a frame repeats the previous action: ALE v5 uses 0.25,"
            f" 0 turns sticky actions off), got {chance!r}")
    if settings.get("obs_type", OBS_TYPES[0]) not in OBS_TYPES:
        raise ValueError(f"obs_type must be one of {OBS_TYPES}, got "
                         f"{settings['obs_type']!r}")


def _is_frameskip(value: Any) -> bool:
    """Whether `value` is an integer >= 1 (not a bool, not a float)."""
    return (isinstance(value, (int, np.integer))
            and not isinstance(value, bool) and value >= 1)


def _is_probability(value: Any) -> bool:
    """Whether `value` is a real number in [0, 1], or an array of them."""
    if isinstance(value, (str, bytes, bool)):
        return False
    try:
        number = np.asarray(value, np.float64)
    except (TypeError, ValueError):
        return False
    return bool(np.all((number >= 0) & (number <= 1)))   # NaN is not
