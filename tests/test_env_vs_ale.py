"""The environment as users drive it, against ale-py: sticky actions, modes.

With repeat_action_probability 0.25 and frameskip 4, `env.step` reports in
`info["applied_actions"]` the ALE action each emulated frame got. Fed to
ale-py one frame at a time with stickiness off, from the same reset, those
actions must reproduce jaxatari's RAM after every step, its summed rewards
and its lives. The draws themselves (JAX keys, not ALE's mt19937) are
checked for their rate in tests/test_environment.py and
tests/test_vmap_parity.py.

A mode and difficulty other than the defaults must give the reset ALE gives
after `setMode` and `setDifficulty` (loadROM's reset in the defaults, then
`reset_game()` in the new settings, as Gymnasium's AtariEnv does), and the
difficulty switches must stay set in play.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxatari
from jaxatari import parity

STEPS = 25


@functools.cache
def _env(game: str, mode: int | None = None, difficulty: int | None = None):
    return jaxatari.make(game, num_reset_states=1, mode=mode,
                         difficulty=difficulty)


@functools.cache
def _jitted_step(env):
    """One compiled `env.step` per env, shared by the tests."""
    return jax.jit(env.step)


def _replay_in_ale(env, params, ale, steps: int) -> None:
    """Plays `steps` random steps from reset state 0 in both emulators."""
    state = jax.tree.map(lambda x: x[0], params.reset_states)
    np.testing.assert_array_equal(np.asarray(env.ram(state)), ale.getRAM())
    np.testing.assert_array_equal(np.asarray(env.screen(state)),
                                  ale.getScreen())
    actions = jax.random.randint(jax.random.key(1), (steps,), 0,
                                 len(env.action_set))
    keys = jax.random.split(jax.random.key(2), steps)
    step = _jitted_step(env)
    repeats = 0
    for t in range(steps):
        previous = int(state.action)
        _, state, reward, done, info = step(keys[t], state, actions[t],
                                            params)
        applied = [int(a) for a in info["applied_actions"]]
        assert len(applied) == params.frameskip
        assert set(applied) <= {previous, env.action_set[int(actions[t])]}
        repeats += applied[0] == previous != applied[-1]
        total = sum(ale.act(a) for a in applied)
        assert not bool(done), "the episode ended; pick fewer steps"
        np.testing.assert_array_equal(np.asarray(env.ram(state)),
                                      ale.getRAM(), err_msg=f"step {t}")
        assert int(reward) == total, t
        assert int(info["lives"]) == ale.lives(), t
    assert repeats > 0, "no frame kept the previous action"


@pytest.mark.parametrize("game", ["breakout", "freeway", "pong"])
def test_applied_actions_replay_in_ale(game: str) -> None:
    env, params = _env(game)
    assert (params.frameskip, params.repeat_action_probability) == (4, 0.25)
    _replay_in_ale(env, params, parity.make_ale(game, 0), STEPS)


def test_mode_and_difficulty_reset_like_ale() -> None:
    env, params = _env("pong", mode=1, difficulty=3)
    assert (params.mode, params.difficulty) == (1, 3)
    ale = parity.make_ale("pong", 0)
    ale.setMode(1)
    ale.setDifficulty(3)
    ale.reset_game()
    _replay_in_ale(env, params, ale, 10)


def test_checked_step_raises_for_an_action_out_of_range() -> None:
    env, params = _env("pong")
    _, state = env.reset(jax.random.key(0), params)
    out = env.checked_step(jax.random.key(1), state, jnp.int32(1), params)
    step = _jitted_step(env)
    plain = step(jax.random.key(1), state, jnp.int32(1), params)
    for a, b in zip(jax.tree.leaves(out), jax.tree.leaves(plain)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    with pytest.raises(Exception, match="out of range for pong"):
        env.checked_step(jax.random.key(1), state, jnp.int32(6), params)
    # Inside jit the same index plays NOOP, as ALE plays an illegal action.
    noop = step(jax.random.key(1), state, jnp.int32(6), params)
    assert set(noop[4]["applied_actions"].tolist()) <= {0, int(state.action)}
