"""`checkpoints.save_learned` / `load_learned`: an agent's learned parts
without its envs, one `.npz` a part, replaced as a whole."""
from __future__ import annotations

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari.agents import checkpoints, core


def _state(scale: float = 1.0, width: int = 3, extra: bool = False
           ) -> core.AgentState:
    params = {"dense": {"kernel": scale * jnp.ones((2, width)),
                        "bias": jnp.arange(width, dtype=jnp.float32)}}
    return core.AgentState(
        params=params, opt_state=(jnp.int32(7), jax.tree.map(
            lambda p: scale * p, params)),
        hparams=None, key=jax.random.key(0), env_state=jnp.zeros(4),
        obs=jnp.zeros((4, 2)), episode_return=jnp.zeros(4),
        episode_length=jnp.zeros(4, jnp.int32), update=jnp.int32(5),
        env_steps=jnp.int32(40),
        extra=jax.tree.map(lambda p: p[None], params) if extra else None)


def _equal(a, b):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_the_learned_parts_round_trip_and_nothing_else(tmp_path):
    saved = _state(2.0, extra=True)
    checkpoints.save_learned(tmp_path / "agent", saved, {"update": 5})
    assert sorted(p.name for p in (tmp_path / "agent").iterdir()) == [
        "extra.npz", "learned.json", "opt_state.npz", "params.npz"]
    like = _state(1.0, extra=True).replace(env_state=jnp.ones(4))
    loaded, meta = checkpoints.load_learned(tmp_path / "agent", like)
    assert meta == {"update": 5}
    _equal(loaded.params, saved.params)
    _equal(loaded.opt_state, saved.opt_state)
    _equal(loaded.extra, saved.extra)
    _equal(loaded.env_state, like.env_state)      # the envs are not saved


def test_a_save_replaces_the_old_agent_whole(tmp_path):
    """A new save leaves no file of the old one behind, and a kill between
    the two renames (the old directory moved aside, the new one not yet in
    place) still loads the old agent."""
    directory = tmp_path / "agent"
    checkpoints.save_learned(directory, _state(1.0, extra=True), {"n": 1})
    checkpoints.save_learned(directory, _state(3.0), {"n": 2})
    assert not (directory / "extra.npz").exists()
    assert not directory.with_name("agent.old").exists()
    os.replace(directory, directory.with_name("agent.old"))
    loaded, meta = checkpoints.load_learned(directory, _state(1.0))
    assert meta["n"] == 2
    _equal(loaded.params, _state(3.0).params)


@pytest.mark.parametrize("like, message", [
    (_state(width=4), r"params\['dense'\]\['bias'\]: saved float32\[3\], "
     r"this run's float32\[4\]"),
    (_state(extra=True), "extra: the saved agent has none and this run's "
     "agent has one"),
    (_state().replace(opt_state=(jnp.int32(0),)),
     r"opt_state: the saved agent's structure differs"),
])
def test_an_agent_that_does_not_fit_is_refused(tmp_path, like, message):
    checkpoints.save_learned(tmp_path / "agent", _state(), {})
    with pytest.raises(ValueError, match=message):
        checkpoints.load_learned(tmp_path / "agent", like)


def test_a_directory_without_an_agent_is_refused(tmp_path):
    with pytest.raises(ValueError, match="holds no saved agent"):
        checkpoints.load_learned(tmp_path, _state())
    (tmp_path / "learned.json").write_text(json.dumps({"parts": []}))
    with pytest.raises(ValueError, match="params: the saved agent has "
                       "none"):
        checkpoints.load_learned(tmp_path, _state())
