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

INTEGER_SETTINGS = {
    "frameskip": (1, "the frames each step emulates: ALE v5 uses 4, 1 "
                     "steps every frame"),
    "max_num_frames_per_episode": (
        0, "the frames after which an episode is truncated: ALE v5 uses "
           "108,000, 0 for no limit"),
    "num_envs": (1, "the batch size"),
    "stack_num": (1, "the frames stacked in an observation: 4 in most "
                     "papers, 1 for none"),
    "screen_size": (1, "the side of the resized screen in pixels: 84 in "
                       "most papers"),
    "noop_max": (0, "the most NOOP frames at a reset: 30 in most papers, "
                    "0 for none"),
}
"""Integer settings: (the least allowed value, what the setting means)."""


def check_settings(settings: Mapping[str, Any]) -> None:
    """Refuses the bad values among `settings`; other keys are ignored.

    Checked: the integers of `INTEGER_SETTINGS` (frameskip, the episode
    frame limit, and `make_atari`'s batch size, stack, screen size and
    NOOP count), `repeat_action_probability` (a number in [0, 1], or an
    array of them) and `obs_type` (one of `OBS_TYPES`). A traced value is
    not checked.

    Args:
        settings: `EnvParams` field names and values, as given.

    Raises:
        ValueError: a value out of range; the message names it and says
            what to pass instead.
    """
    for name, (least, meaning) in INTEGER_SETTINGS.items():
        value = settings.get(name, least)
        if not (isinstance(value, jax.core.Tracer)
                or _is_integer_from(value, least)):
            raise ValueError(f"{name} must be an integer >= {least} "
                             f"({meaning}), got {value!r}")
    chance = settings.get("repeat_action_probability", 0.0)
    if not (isinstance(chance, jax.core.Tracer) or _is_probability(chance)):
        raise ValueError(
            f"repeat_action_probability must be a number in [0, 1] (the "
            f"chance a frame repeats the previous action: ALE v5 uses 0.25,"
            f" 0 turns sticky actions off), got {chance!r}")
    if settings.get("obs_type", OBS_TYPES[0]) not in OBS_TYPES:
        raise ValueError(f"obs_type must be one of {OBS_TYPES}, got "
                         f"{settings['obs_type']!r}")


def _is_integer_from(value: Any, least: int) -> bool:
    """Whether `value` is an integer >= `least` (not a bool, not a float;
    a 0-d integer array counts)."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (np.ndarray, jax.Array)) and value.shape == ():
        if not np.issubdtype(value.dtype, np.integer):
            return False
        value = int(value)
    return isinstance(value, (int, np.integer)) and value >= least


def _is_probability(value: Any) -> bool:
    """Whether `value` is a real number in [0, 1], or an array of them."""
    if isinstance(value, (str, bytes, bool)):
        return False
    try:
        number = np.asarray(value, np.float64)
    except (TypeError, ValueError):
        return False
    return bool(np.all((number >= 0) & (number <= 1)))   # NaN is not
