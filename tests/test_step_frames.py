"""A step's frames as one frame program (`AtariEnv.step_env`).

A step runs its frames with one frame program told by data whether to
draw (`AtariEnv._frames`), in both lowerings, which halves its compile.
It gives the bits of the same frames run one at a time with whether to
draw fixed while tracing (the drawn and the undrawn frame programs), and
the jit cache keeps a frame traced in one branch apart.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

import jaxatari
from jaxatari import lowering


def _frames_one_at_a_time(env, params, state, applied, pooled):
    """The reference: each console alone, each frame its own program
    (`_shared_console_frame`'s, as the boot runs them), drawn (a Python
    bool) only if pooled; the observation the pooled frames' maximum."""
    consoles = []
    for lane in range(applied.shape[0]):
        carry = (jax.tree.map(lambda x: x[lane], state), jnp.int32(0))
        observations = []
        for k in range(params.frameskip):
            drawn = k >= params.frameskip - pooled
            carry = env._skip_frame(carry, applied[lane, k], params, drawn)
            if drawn:
                observations.append(env.observation(carry[0], params))
        consoles.append((np.max(np.stack(observations), axis=0),) + carry)
    return jax.tree.map(lambda *x: np.stack(x), *consoles)


SCHEDULES = {lowering.CPU: ((1, 1), (2, 3)), lowering.ACCELERATOR: ((2, 1),)}
"""Each lowering's steps, as (pooled, action), fire first: the CPU's a step
of 4 frames with the last drawn (so an undrawn frame drawn would show in
the other buffer), then one with the last 2 drawn and pooled (the
preset's); the accelerator's the preset's step alone (each step is a
frame loop more to compile: 20 to 40 s on 2 cores)."""


def test_a_step_gives_the_bits_of_its_frames_one_at_a_time():
    """2 Breakout envs (sticky actions on), `SCHEDULES`' steps in each
    lowering, against the frames run one at a time."""
    env, params = jaxatari.make("breakout")
    keys = jax.random.split(jax.random.key(3), 2)
    _, start = jax.vmap(env.reset, in_axes=(0, None))(keys, params)

    def steps(schedule, keys, state):
        outs = []
        for pooled, action in schedule:
            obs, state, reward, _, info = jax.vmap(
                lambda k, s: env.step_env(k, s, jnp.int32(action), params,
                                          pooled=pooled))(keys, state)
            outs.append((obs, reward, state, info["applied_actions"]))
        return outs

    observations = []
    for variant, schedule in SCHEDULES.items():
        with lowering.forced(variant):
            got = jax.device_get(jax.jit(functools.partial(
                steps, schedule))(keys, start))
        state = start
        with lowering.forced(lowering.CPU):
            for (obs, reward, after, applied), (pooled, _) in zip(
                    got, schedule):
                expected = _frames_one_at_a_time(env, params, state,
                                                 applied, pooled)
                for path, x, y in zip(
                        jax.tree_util.tree_leaves_with_path(expected),
                        jax.tree.leaves(expected),
                        jax.tree.leaves((obs, after, reward))):
                    np.testing.assert_array_equal(x, y, err_msg=(
                        f"{variant}, pooled {pooled}: "
                        f"{jax.tree_util.keystr(path[0])}"))
                state = after
                observations.append(obs)
    # The drawn frames were drawn: the observations differ step to step.
    assert np.any(observations[0] != observations[1])


def test_a_shared_frame_traced_in_one_branch_is_kept_apart(monkeypatch):
    """A step traced for both backends puts the CPU's frames in the jit
    cache of `environment._shared_console_frame` with the CPU's loop
    alone; `AtariEnv._frame` called outside any branch must trace anew,
    and a second call must not. (The console is a stand-in that notes the
    variant it is traced as, in a fresh jit cache.)"""
    from jaxatari import environment
    env = environment.AtariEnv("pong")   # booted before the stand-in
    state = env.initial_state()
    traced = []

    def console_frame(board, controls, machine, paddles, *_):
        traced.append(lowering.tracing_variant())
        return machine, paddles

    def frame_as(*args):   # a function of its own: jit's trace cache is
        return environment._console_frame_as(*args)   # the function's

    monkeypatch.setattr(environment, "console_frame", console_frame)
    monkeypatch.setattr(environment, "_shared_console_frame", jax.jit(
        frame_as, static_argnums=(6, 7)))

    def frame():
        return env._frame(state, jnp.int32(0), jnp.int32(0), jnp.int32(0),
                          False)

    for variant in (lowering.CPU, None, lowering.ACCELERATOR, None):
        jax.eval_shape(lambda: lowering.traced_as(variant, frame))
    assert traced == [lowering.CPU, None, lowering.ACCELERATOR]
