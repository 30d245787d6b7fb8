"""gymnax's spaces on jaxatari's envs (`jaxatari.spaces`): what gymnax and
PureJaxRL code reads to size a network and sample random actions."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxatari
from jaxatari import wrappers


@pytest.fixture(scope="module")
def pong():
    return jaxatari.make("pong")


def test_the_action_space_indexes_the_action_set(pong):
    env, params = pong
    space = env.action_space(params)
    assert space.n == env.num_actions == len(env.action_set) == 6
    full, _ = jaxatari.make("pong", full_action_space=True)
    assert full.action_space().n == 18
    actions = jax.vmap(space.sample)(jax.random.split(jax.random.key(0), 64))
    assert set(np.asarray(actions).tolist()) == set(range(6))
    assert env.name == "pong"


@pytest.mark.parametrize("obs_type, shape", [
    ("rgb", (210, 160, 3)), ("grayscale", (210, 160)), ("ram", (128,))])
def test_the_observation_space_is_the_resets_observation(pong, obs_type,
                                                         shape):
    env, params = pong
    params = params.replace(obs_type=obs_type)
    space = env.observation_space(params)
    obs, _ = env.reset(jax.random.key(0), params)
    assert space.shape == obs.shape == shape
    assert space.dtype == obs.dtype == jnp.uint8
    assert (space.low, space.high) == (0, 255)
    assert bool(space.contains(obs))


def test_a_vector_preset_gives_one_envs_spaces(pong):
    """As gymnax's and PureJaxRL's vector wrappers do; the observation is
    the preset's stack of 4 grey 84x84 frames (traced, not run)."""
    env, params = jaxatari.make_atari("pong", num_envs=8)
    assert env.action_space(params).n == 6
    space = env.observation_space(params)
    assert space.shape == (4, 84, 84) and space.dtype == jnp.uint8
    scaled = wrappers.AtariPreprocessing(pong[0], scale_obs=True)
    space = scaled.observation_space(scaled.make_params())
    assert space.shape == (84, 84) and space.dtype == jnp.float32
    assert space.high == 1.0
