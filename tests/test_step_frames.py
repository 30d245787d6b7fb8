"""A step's frames as one frame program or two (`AtariEnv.step_env`).

The CPU steps the frames before the pooled ones with the undrawn frame
program and the pooled ones with the drawn one (`_frames_apart`); an
accelerator steps them all with one program told by data whether to draw
(`_frames_by_flag`), which halves its compile. Both give the same bits,
and the jit cache keeps a frame traced in one branch apart.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxatari
from jaxatari import lowering


def test_a_step_gives_the_same_bits_as_one_frame_program_or_two():
    """The accelerator steps its frames as one frame program, whether to
    draw given as data (`AtariEnv._frames_by_flag`); the CPU as two
    (`_frames_apart`). 2 Breakout envs, a step of 4 frames with the last
    drawn (so an undrawn frame drawn would show in the other buffer),
    then one with the last 2 drawn and pooled (the preset's), each way."""
    env, params = jaxatari.make("breakout")
    keys = jax.random.split(jax.random.key(3), 2)
    _, state = jax.vmap(env.reset, in_axes=(0, None))(keys, params)

    def steps(keys, state):
        outs = []
        for pooled, action in ((1, 1), (2, 3)):   # fire first
            obs, state, reward, _, _ = jax.vmap(
                lambda k, s: env.step_env(k, s, jnp.int32(action), params,
                                          pooled=pooled))(keys, state)
            outs.append((obs, reward))
        return state, outs

    out = {}
    for variant in lowering.VARIANTS:
        with lowering.forced(variant):
            out[variant] = jax.device_get(jax.jit(steps)(keys, state))
    for path, x, y in zip(
            jax.tree_util.tree_leaves_with_path(out[lowering.CPU]),
            jax.tree.leaves(out[lowering.CPU]),
            jax.tree.leaves(out[lowering.ACCELERATOR])):
        np.testing.assert_array_equal(x, y, err_msg=jax.tree_util.keystr(
            path[0]))
    # The drawn frames were drawn: the observations differ step to step.
    observations = [obs for obs, _ in out[lowering.CPU][1]]
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
