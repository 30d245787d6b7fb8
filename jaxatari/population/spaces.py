"""Hyperparameter search spaces as data, and the pure functions that draw
from them, keep values inside them and perturb them.

A `SearchSpace` maps `HParams` field names to one of three priors:

* `LogUniform(low, high)`: `exp(U(log low, log high))`;
* `QLogUniform(low, high, q)`: log-uniform, then rounded to a multiple of
  `q` and clipped to the multiples of `q` inside `[low, high]` (hyperopt's
  `qloguniform`, kept in range). `t_max` is one: `QLogUniform(2, 100)`;
* `Categorical(values)`: one of a list, uniformly.

Values travel as a `dict[str, jax.Array]` with one entry per member
(float32; `to_hparams` rounds `t_max` to int32). `sample`, `clip` and
`perturb` are pure and jittable and work elementwise over the member axis,
so PBT, HyperTrick and evolution strategies call them inside their
programs. `validate` is the host-side check that a space fits an agent's
config; the population modules call it before building anything.

Each hyperparameter draws from its own stream, `fold_in(key,
crc32(name))`, so adding a field to a space leaves the others' draws as
they were.
"""
from __future__ import annotations

import dataclasses
import math
import types
import zlib
from typing import Any, Mapping, Union

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari.agents import core
from jaxatari.agents.core import HParams


@dataclasses.dataclass(frozen=True)
class LogUniform:
    """Log-uniform on `[low, high]`, `0 < low < high`."""
    low: float
    high: float


@dataclasses.dataclass(frozen=True)
class QLogUniform:
    """Log-uniform on `[low, high]`, rounded to a multiple of `q` and
    clipped to the multiples of `q` in the range."""
    low: float
    high: float
    q: float = 1


@dataclasses.dataclass(frozen=True)
class Categorical:
    """One of `values`, uniformly; perturbation moves along the sorted
    list."""
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", tuple(self.values))


Space = Union[LogUniform, QLogUniform, Categorical]
SearchSpace = Mapping[str, Space]
Values = dict[str, jax.Array]

HPARAM_NAMES: tuple[str, ...] = tuple(
    field.name for field in dataclasses.fields(HParams))
"""The names a search space may use: `HParams`' fields."""

GA3C_HYPERTRICK: SearchSpace = types.MappingProxyType({
    "learning_rate": LogUniform(1e-5, 1e-2),
    "t_max": QLogUniform(2, 100, 1),
    "gamma": Categorical((0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999)),
})
"""HyperTrick's space for GA3C (Heinrich and Frosio's GTC 2019 slides).
t_max reaches 100, so the agent's `config.num_steps` must be >= 100
(`ga3c.GA3CConfig(num_steps=100)`): every update then runs 100 steps and
masks those past a member's t_max, so all members pay the longest
rollout's compute (see `core`)."""

PPO_DEFAULT: SearchSpace = types.MappingProxyType({
    "learning_rate": LogUniform(1e-4, 3e-3),
    "ent_coef": LogUniform(1e-4, 0.05),
})
"""A small PPO space around CleanRL's Atari settings (2.5e-4, 0.01)."""


def _stream(key: jax.Array, name: str) -> jax.Array:
    """The hyperparameter's own key: independent of the space's other
    names and their order."""
    return jax.random.fold_in(key, zlib.crc32(name.encode()) & 0x7FFFFFFF)


def _quantised_range(space: QLogUniform) -> tuple[float, float]:
    """The smallest and largest multiples of `q` inside `[low, high]`."""
    return (math.ceil(space.low / space.q - 1e-9) * space.q,
            math.floor(space.high / space.q + 1e-9) * space.q)


def _sorted_values(space: Categorical) -> jax.Array:
    return jnp.asarray(sorted(space.values), jnp.float32)


def _nearest_index(space: Categorical, values: jax.Array) -> jax.Array:
    """Index in the sorted list of the allowed value nearest each value
    (ties to the smaller)."""
    allowed = _sorted_values(space)
    distance = jnp.abs(values[..., None] - allowed)
    return jnp.argmin(distance, axis=-1)


def clip_one(space: Space, values: jax.Array) -> jax.Array:
    """Values moved into one space: clipped into a range (quantised ones
    rounded to `q` first), or snapped to the nearest allowed value."""
    values = jnp.asarray(values, jnp.float32)
    if isinstance(space, LogUniform):
        return jnp.clip(values, space.low, space.high)
    if isinstance(space, QLogUniform):
        low, high = _quantised_range(space)
        return jnp.clip(jnp.round(values / space.q) * space.q, low, high)
    if isinstance(space, Categorical):
        return _sorted_values(space)[_nearest_index(space, values)]
    raise TypeError(f"not a search space: {space!r}")


def sample_one(space: Space, key: jax.Array,
               shape: tuple[int, ...]) -> jax.Array:
    """Draws from one space's prior (float32)."""
    if isinstance(space, (LogUniform, QLogUniform)):
        log_values = jax.random.uniform(key, shape, jnp.float32,
                                        math.log(space.low),
                                        math.log(space.high))
        return clip_one(space, jnp.exp(log_values))
    if isinstance(space, Categorical):
        allowed = jnp.asarray(space.values, jnp.float32)
        return allowed[jax.random.randint(key, shape, 0, len(space.values))]
    raise TypeError(f"not a search space: {space!r}")


def perturb_one(space: Space, key: jax.Array, values: jax.Array,
                factors: tuple[float, ...] = (0.8, 1.2),
                resample_probability: float = 0.25) -> jax.Array:
    """One hyperparameter's explore step, elementwise.

    With probability `resample_probability` a value is redrawn from the
    prior. Otherwise a range value is multiplied by a factor drawn
    uniformly from `factors` and clipped; a quantised value that the
    factor and rounding leave where it was moves one `q` in the factor's
    direction (else t_max 2 could never grow: 2 * 1.2 rounds to 2); a
    categorical value moves to the previous or next value of the sorted
    list (equally likely; at an end, moving out stays at the end).
    """
    values = jnp.asarray(values, jnp.float32)
    resample_key, move_key, prior_key = jax.random.split(key, 3)
    resample = jax.random.bernoulli(resample_key, resample_probability,
                                    values.shape)
    fresh = sample_one(space, prior_key, values.shape)
    if isinstance(space, Categorical):
        step = jnp.where(jax.random.bernoulli(move_key, 0.5, values.shape),
                         1, -1)
        index = jnp.clip(_nearest_index(space, values) + step, 0,
                         len(space.values) - 1)
        moved = _sorted_values(space)[index]
    else:
        factor = jnp.asarray(factors, jnp.float32)[
            jax.random.randint(move_key, values.shape, 0, len(factors))]
        moved = clip_one(space, values * factor)
        if isinstance(space, QLogUniform):
            stuck = moved == clip_one(space, values)
            nudged = values + jnp.sign(factor - 1.0) * space.q
            moved = jnp.where(stuck, clip_one(space, nudged), moved)
    return clip_one(space, jnp.where(resample, fresh, moved))


def sample(space: SearchSpace, key: jax.Array, count: int) -> Values:
    """`count` draws of every hyperparameter in the space.

    Args:
        space: the search space.
        key: a PRNG key.
        count: members to draw for (static).

    Returns:
        `{name: float32[count]}`.
    """
    return {name: sample_one(prior, _stream(key, name), (count,))
            for name, prior in space.items()}


def clip(space: SearchSpace, values: Mapping[str, jax.Array]) -> Values:
    """Values moved into the space (ranges clipped, quantised values
    rounded to `q`, categoricals snapped to the nearest allowed value);
    names outside the space pass through unchanged."""
    return {name: clip_one(space[name], value) if name in space else value
            for name, value in values.items()}


def perturb(space: SearchSpace, key: jax.Array,
            values: Mapping[str, jax.Array],
            factors: tuple[float, ...] = (0.8, 1.2),
            resample_probability: float = 0.25) -> Values:
    """PBT's explore: each hyperparameter of each member independently
    resampled from the prior (probability `resample_probability`) or
    perturbed (`perturb_one`). Names outside the space pass through.

    Args:
        space: the search space.
        key: a PRNG key.
        values: `{name: float32[count]}`, inside the space.
        factors: the multiplicative factors, drawn uniformly.
        resample_probability: the chance of a fresh draw instead.

    Returns:
        The perturbed values, inside the space.
    """
    return {name: perturb_one(space[name], _stream(key, name), value,
                              factors, resample_probability)
            if name in space else value
            for name, value in values.items()}


def _as_field(name: str, value: jax.Array) -> jax.Array:
    if name == "t_max":
        return jnp.round(jnp.asarray(value)).astype(jnp.int32)
    return jnp.asarray(value, jnp.float32)


def to_hparams(config: core.Config, values: Mapping[str, jax.Array],
               count: int) -> HParams:
    """A batch of `count` `HParams`: `values` where given, the config's
    defaults elsewhere (t_max int32, rounded; the others float32).

    Raises:
        ValueError: a name that is not an `HParams` field.
    """
    unknown = sorted(set(values) - set(HPARAM_NAMES))
    if unknown:
        raise ValueError(f"{unknown} are not HParams fields; known: "
                         f"{list(HPARAM_NAMES)}")
    defaults = config.hparams()
    fields = {name: jnp.broadcast_to(
        _as_field(name, values.get(name, getattr(defaults, name))), (count,))
        for name in HPARAM_NAMES}
    return HParams(**fields)


def from_hparams(hparams: HParams, names: Any = HPARAM_NAMES) -> Values:
    """The named fields of (batched) `HParams` as float32 values."""
    return {name: jnp.asarray(getattr(hparams, name), jnp.float32)
            for name in names}


def replace_hparams(hparams: HParams,
                    values: Mapping[str, jax.Array]) -> HParams:
    """`hparams` with the named fields replaced (t_max rounded to
    int32)."""
    return hparams.replace(**{name: _as_field(name, value)
                              for name, value in values.items()})


def _bounds(name: str, prior: Space) -> list[float]:
    """The values a prior can produce at its extremes (host-side)."""
    if isinstance(prior, (LogUniform, QLogUniform)):
        if not (np.isfinite(prior.low) and np.isfinite(prior.high)):
            raise ValueError(f"space[{name!r}]: low and high must be finite, "
                             f"got {prior}")
        if prior.low <= 0:
            raise ValueError(f"space[{name!r}]: a log space needs low > 0, "
                             f"got low={prior.low}")
        if prior.low >= prior.high:
            raise ValueError(f"space[{name!r}]: needs low < high, got "
                             f"low={prior.low}, high={prior.high}")
        if isinstance(prior, LogUniform):
            return [prior.low, prior.high]
        if not (np.isfinite(prior.q) and prior.q > 0):
            raise ValueError(f"space[{name!r}]: q must be > 0, got {prior.q}")
        low, high = _quantised_range(prior)
        if low > high:
            raise ValueError(f"space[{name!r}]: no multiple of q={prior.q} "
                             f"in [{prior.low}, {prior.high}]")
        return [low, high]
    if isinstance(prior, Categorical):
        if not prior.values:
            raise ValueError(f"space[{name!r}]: an empty Categorical")
        return list(prior.values)
    raise ValueError(f"space[{name!r}] must be a LogUniform, QLogUniform or "
                     f"Categorical, got {prior!r}")


def _check_t_max(prior: Space, extremes: list[float],
                 config: core.Config) -> None:
    """t_max takes integers in [1, config.num_steps]."""
    integral = (isinstance(prior, Categorical)
                or (isinstance(prior, QLogUniform)
                    and float(prior.q).is_integer()))
    if not integral or not all(float(v).is_integer() for v in extremes):
        raise ValueError("space['t_max'] must give integers: a QLogUniform "
                         "with an integer q or a Categorical of integers, "
                         f"got {prior!r}")
    if min(extremes) < 1 or max(extremes) > config.num_steps:
        raise ValueError(
            f"space['t_max'] reaches [{min(extremes)}, {max(extremes)}], "
            f"outside [1, config.num_steps = {config.num_steps}]: raise "
            f"the agent's num_steps or lower the t_max bounds")


def validate(space: SearchSpace, config: core.Config) -> None:
    """Host-side checks that `space` fits an agent's `config`.

    Raises:
        ValueError: naming the field: a name that is not an `HParams`
            field; an empty or inverted range (low >= high, or low <= 0
            in a log space); no multiple of q in a quantised range; an
            empty categorical; a bound that the agents refuse
            (`core.check_hparams`: gamma above 1, say); t_max not integer
            or outside [1, config.num_steps].
    """
    if not space:
        raise ValueError("the search space is empty: name at least one "
                         f"of {list(HPARAM_NAMES)}")
    for name, prior in space.items():
        if name not in HPARAM_NAMES:
            raise ValueError(f"space[{name!r}]: not an HParams field; "
                             f"known: {list(HPARAM_NAMES)}")
        extremes = _bounds(name, prior)
        if name == "t_max":
            _check_t_max(prior, extremes, config)
            continue
        for value in extremes:
            try:
                config.hparams(**{name: value})
            except ValueError as error:
                raise ValueError(f"space[{name!r}]: {error}") from error


def to_dict(space: SearchSpace) -> dict[str, dict[str, Any]]:
    """The space as JSON-ready values (`from_dict` reads them back)."""
    kinds = {LogUniform: "log_uniform", QLogUniform: "q_log_uniform",
             Categorical: "categorical"}
    return {name: {"kind": kinds[type(prior)], **dataclasses.asdict(prior)}
            for name, prior in space.items()}


def from_dict(described: Mapping[str, Mapping[str, Any]]) -> dict[str, Space]:
    """The space `to_dict` wrote.

    Raises:
        ValueError: an unknown kind.
    """
    classes = {"log_uniform": LogUniform, "q_log_uniform": QLogUniform,
               "categorical": Categorical}
    space = {}
    for name, fields in described.items():
        fields = dict(fields)
        kind = fields.pop("kind", None)
        if kind not in classes:
            raise ValueError(f"space[{name!r}]: unknown kind {kind!r}; "
                             f"known: {sorted(classes)}")
        space[name] = classes[kind](**fields)
    return space
