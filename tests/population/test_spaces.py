"""Search spaces: draws in range and with the right law, quantisation,
categoricals, clipping, perturbation's factors and resample rate, the
conversion to HParams, and validation's errors."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jaxatari.agents import a2c, core, ga3c, ppo
from jaxatari.population import spaces
from jaxatari.population.spaces import Categorical, LogUniform, QLogUniform

COUNT = 20_000
GAMMAS = (0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999)


def draws(prior, seed=0, count=COUNT):
    return np.asarray(spaces.sample({"x": prior}, jax.random.key(seed),
                                    count)["x"])


def test_log_uniform_is_uniform_in_log_space():
    values = draws(LogUniform(1e-5, 1e-2))
    assert values.dtype == np.float32 and values.shape == (COUNT,)
    assert values.min() >= np.float32(1e-5)
    assert values.max() <= np.float32(1e-2)
    logs = np.log(values.astype(np.float64))
    low, high = math.log(1e-5), math.log(1e-2)
    assert stats.kstest(logs, stats.uniform(low, high - low).cdf).pvalue \
        > 0.01
    # The same test tells a uniform law on the raw values apart.
    assert stats.kstest(values, stats.uniform(1e-5, 1e-2 - 1e-5).cdf
                        ).pvalue < 1e-6
    # A decade holds a third of the draws.
    assert abs(np.mean(values < 1e-4) - 1 / 3) < 0.015


def test_quantised_log_uniform():
    values = draws(QLogUniform(2, 100, 1))
    assert np.all(values == np.round(values))
    assert values.min() == 2 and values.max() == 100
    assert set(np.unique(values)) == set(range(2, 101))
    # Log-uniform then rounded: 2 takes [2, 2.5), 10 [9.5, 10.5).
    scale = math.log(50)
    assert abs(np.mean(values == 2) - math.log(2.5 / 2) / scale) < 0.006
    assert abs(np.mean(values == 10) - math.log(10.5 / 9.5) / scale) < 0.006


def test_quantised_range_keeps_to_multiples_inside():
    values = draws(QLogUniform(3, 50, 4))
    assert np.all(values % 4 == 0)
    assert values.min() == 4 and values.max() == 48


def test_categorical_draws_only_listed_values_evenly():
    values = draws(Categorical(GAMMAS))
    allowed = np.asarray(GAMMAS, np.float32)
    assert np.all(np.isin(values, allowed))
    shares = np.array([np.mean(values == v) for v in allowed])
    assert np.all(np.abs(shares - 1 / len(GAMMAS)) < 0.015)


def test_each_name_has_its_own_stream():
    key = jax.random.key(3)
    alone = spaces.sample({"learning_rate": LogUniform(1e-4, 1e-2)}, key, 8)
    together = spaces.sample({"ent_coef": LogUniform(1e-4, 1e-1),
                              "learning_rate": LogUniform(1e-4, 1e-2)},
                             key, 8)
    np.testing.assert_array_equal(alone["learning_rate"],
                                  together["learning_rate"])
    assert not np.allclose(together["learning_rate"], together["ent_coef"])


def test_clip():
    space = {"learning_rate": LogUniform(1e-4, 1e-2),
             "t_max": QLogUniform(2, 100, 1),
             "gamma": Categorical(GAMMAS)}
    clipped = spaces.clip(space, {
        "learning_rate": jnp.array([1e-6, 1e-3, 1.0]),
        "t_max": jnp.array([0.0, 7.4, 7.6, 250.0]),
        "gamma": jnp.array([0.5, 0.96, 0.9996, 1.0]),
        "ent_coef": jnp.array([5.0])})
    np.testing.assert_allclose(clipped["learning_rate"], [1e-4, 1e-3, 1e-2],
                               rtol=1e-6)
    np.testing.assert_array_equal(clipped["t_max"], [2, 7, 8, 100])
    np.testing.assert_array_equal(
        clipped["gamma"], np.float32([0.9, 0.95, 0.9995, 0.9999]))
    np.testing.assert_array_equal(clipped["ent_coef"], [5.0])


def perturbed(prior, start, probability, seed=1, count=COUNT):
    values = jnp.full((count,), start, jnp.float32)
    return np.asarray(spaces.perturb({"x": prior}, jax.random.key(seed),
                                     {"x": values},
                                     resample_probability=probability)["x"])


def test_perturb_multiplies_by_the_factors():
    out = perturbed(LogUniform(1e-5, 1e-1), 1e-3, 0.0)
    down = np.isclose(out, 0.8e-3, rtol=1e-6)
    up = np.isclose(out, 1.2e-3, rtol=1e-6)
    assert np.all(down | up)
    assert abs(np.mean(up) - 0.5) < 0.015


def test_perturb_resamples_with_its_probability():
    out = perturbed(LogUniform(1e-5, 1e-1), 1e-3, 0.25)
    moved = np.isclose(out, 0.8e-3, rtol=1e-6) | np.isclose(out, 1.2e-3,
                                                            rtol=1e-6)
    assert abs(np.mean(~moved) - 0.25) < 0.015
    fresh = np.log(out[~moved].astype(np.float64))
    low, high = math.log(1e-5), math.log(1e-1)
    assert stats.kstest(fresh, stats.uniform(low, high - low).cdf).pvalue \
        > 0.01


def test_perturb_clips_into_the_range():
    out = perturbed(LogUniform(1e-5, 1e-3), 1e-3, 0.0)
    assert out.max() == np.float32(1e-3)
    assert np.all(np.isclose(out, 0.8e-3, rtol=1e-6) | (out == out.max()))


def test_perturb_moves_quantised_values_at_least_one_step():
    out = perturbed(QLogUniform(2, 100, 1), 2.0, 0.0)
    assert set(np.unique(out)) == {2.0, 3.0}     # 2 * 0.8 clips to 2
    out = perturbed(QLogUniform(2, 100, 1), 20.0, 0.0)
    assert set(np.unique(out)) == {16.0, 24.0}


def test_perturb_categorical_moves_to_a_neighbour():
    prior = Categorical(GAMMAS)
    allowed = np.asarray(GAMMAS, np.float32)
    for index in (0, 3, 6):
        out = perturbed(prior, allowed[index], 0.0)
        moved = np.searchsorted(allowed, out)
        expected = {max(index - 1, 0), min(index + 1, len(GAMMAS) - 1)}
        assert set(np.unique(moved)) == expected
    out = perturbed(prior, allowed[3], 1.0)
    assert len(np.unique(out)) == len(GAMMAS)


def test_perturb_leaves_names_outside_the_space():
    values = {"learning_rate": jnp.full((4,), 1e-3), "gamma": jnp.zeros(4)}
    out = spaces.perturb({"learning_rate": LogUniform(1e-5, 1e-1)},
                         jax.random.key(0), values)
    assert out["gamma"] is values["gamma"]


def test_functions_jit():
    space = dict(spaces.GA3C_HYPERTRICK)
    key = jax.random.key(7)
    eager = spaces.sample(space, key, 16)
    jitted = jax.jit(lambda k: spaces.sample(space, k, 16))(key)
    for name in space:
        np.testing.assert_array_equal(eager[name], jitted[name])
    moved = jax.jit(lambda k, v: spaces.perturb(space, k, v))(key, eager)
    for name, value in moved.items():
        np.testing.assert_array_equal(value, spaces.clip(space, moved)[name])


def test_to_hparams_fills_defaults():
    config = a2c.A2CConfig(num_steps=20)
    hparams = spaces.to_hparams(
        config, {"learning_rate": jnp.array([1e-3, 2e-3, 3e-3]),
                 "t_max": jnp.array([2.0, 7.0, 20.0])}, 3)
    assert hparams.t_max.dtype == jnp.int32
    np.testing.assert_array_equal(hparams.t_max, [2, 7, 20])
    np.testing.assert_allclose(hparams.learning_rate, [1e-3, 2e-3, 3e-3])
    for name in ("gamma", "ent_coef", "vf_coef", "max_grad_norm"):
        value = getattr(hparams, name)
        assert value.dtype == jnp.float32 and value.shape == (3,)
        np.testing.assert_allclose(value, getattr(config, name))
    core.check_hparams(hparams, config)
    with pytest.raises(ValueError, match="learnig_rate"):
        spaces.to_hparams(config, {"learnig_rate": jnp.ones(3)}, 3)


def test_from_and_replace_hparams_round_trip():
    config = ppo.PPOConfig(num_steps=32)
    hparams = spaces.to_hparams(config, {"t_max": jnp.array([4.0, 9.0])}, 2)
    values = spaces.from_hparams(hparams, ("t_max", "gamma"))
    again = spaces.replace_hparams(hparams, values)
    for x, y in zip(jax.tree.leaves(hparams), jax.tree.leaves(again)):
        np.testing.assert_array_equal(x, y)
        assert x.dtype == y.dtype


def test_presets_validate():
    spaces.validate(spaces.GA3C_HYPERTRICK, ga3c.GA3CConfig(num_steps=100))
    spaces.validate(spaces.PPO_DEFAULT, ppo.PPOConfig())
    with pytest.raises(ValueError, match=r"t_max.*num_steps = 5"):
        spaces.validate(spaces.GA3C_HYPERTRICK, ga3c.GA3CConfig())


@pytest.mark.parametrize("space, match", [
    ({}, "empty"),
    ({"learnig_rate": LogUniform(1e-4, 1e-2)}, "'learnig_rate'.*not an "
                                               "HParams field"),
    ({"learning_rate": LogUniform(1e-2, 1e-4)}, "'learning_rate'.*low < "
                                                "high"),
    ({"learning_rate": LogUniform(1e-3, 1e-3)}, "'learning_rate'.*low < "
                                                "high"),
    ({"ent_coef": LogUniform(0.0, 1e-2)}, "'ent_coef'.*low > 0"),
    ({"ent_coef": LogUniform(-1.0, 1e-2)}, "'ent_coef'.*low > 0"),
    ({"gamma": Categorical(())}, "'gamma'.*empty"),
    ({"gamma": LogUniform(0.9, 1.5)}, "'gamma'.*gamma must be in"),
    ({"t_max": QLogUniform(2, 100, 1)}, r"'t_max'.*\[2, 100\].*"
                                        r"num_steps = 32"),
    ({"t_max": QLogUniform(0.5, 16, 0.5)}, "'t_max'.*integers"),
    ({"t_max": LogUniform(2, 16)}, "'t_max'.*integers"),
    ({"t_max": Categorical((0, 4))}, r"'t_max'.*\[1, config.num_steps"),
    ({"t_max": QLogUniform(5, 7, 8)}, "'t_max'.*no multiple of q"),
    ({"learning_rate": QLogUniform(1e-4, 1e-2, 0.0)}, "q must be > 0"),
    ({"learning_rate": (1e-4, 1e-2)}, r"'learning_rate'\] must be a "
                                      "LogUniform"),
])
def test_validate_names_the_field(space, match):
    with pytest.raises(ValueError, match=match):
        spaces.validate(space, ppo.PPOConfig(num_steps=32))


def test_dict_round_trip():
    space = dict(spaces.GA3C_HYPERTRICK)
    described = spaces.to_dict(space)
    assert described["t_max"] == {"kind": "q_log_uniform", "low": 2,
                                  "high": 100, "q": 1}
    described["gamma"]["values"] = list(described["gamma"]["values"])
    assert spaces.from_dict(described) == space
    with pytest.raises(ValueError, match="'x'.*unknown kind"):
        spaces.from_dict({"x": {"kind": "uniform"}})
