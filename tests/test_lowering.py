"""The frame loop's two lowerings (`jaxatari.lowering`).

* The accelerator's program, exported for CUDA on this CPU-only machine
  (`jax.export`), has no conditional inside its instruction loop, whose
  trip count is static; the CPU's has (so the audit can fail).
* Both programs give the same bits on the CPU, for a batch mixing games
  with every board feature (Superchip RAM, the DPC chip, PAL's 250 rows,
  the Cosmic Ark motion).
* The audit itself, on small programs.
"""
from __future__ import annotations

import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxatari
from jaxatari import console, lowering
from tests import jaxprs

MIXED_GAMES = ("pong", "journey_escape", "pitfall2", "klax", "qbert",
               "montezuma_revenge", "ms_pacman", "space_invaders",
               "breakout")
"""Nine consoles: at most `updates.KERNEL_MAX_BATCH`, so the CPU's frame
loop is one kernel. (Until 2026-11-28 nine were more, and the CPU drew
their writes compacted. The compacted draws are checked against each
console alone in `tests/console/test_frame_vmap.py`, and against ALE in
the lock-step parity batch of 60 consoles.)"""
FRAMES = 4   # 6 until 2026-11-27 (CI's 20 minutes)


def _export_preset_step(variant: str | None) -> str:
    env, params = jaxatari.make_atari("pong", num_envs=2)
    key = jax.random.key(0)
    _, state = env.reset(key, params)
    action = jnp.zeros((2,), jnp.int32)

    # None: per backend, with the plain kernel's default mode, as users
    # get it (the suite turns the kernel off: tests/conftest.py)
    with lowering.forced(variant), lowering.plain_kernel("gpu"):
        return lowering.cuda_text(env.step, key, state, action, params)


def test_cuda_lowering_has_no_conditional_in_the_instruction_loop():
    text = _export_preset_step(None)
    loops = lowering.audit(text)
    # The loop's plain instructions run in the Pallas kernel on a GPU
    # (`plain_kernel`): one Triton call.
    assert text.count(lowering.TRITON_CALL) == 1
    instruction = lowering.in_scope(loops, lowering.INSTRUCTION_LOOP)
    chunks = lowering.in_scope(loops, lowering.INSTRUCTION_CHUNKS)
    # One frame program: whether a frame is drawn is data
    # (`AtariEnv._frames`).
    assert len(instruction) == 1 and len(chunks) == 1
    for loop in instruction:
        assert loop.static_trip_count, loop
        assert loop.conditionals == 0, loop
        # Only static loops inside (the TIA writes' fori_loop in the
        # `loop` shape; none in the default's).
        assert all(inner.static_trip_count for inner in loop.whiles), loop
    for loop in chunks:
        assert loop.conditionals == 0, loop
        assert any(inner in instruction for inner in loop.whiles)
    # The drawn frame's pixels: a loop over its TIA log, in chunks of a
    # static trip count, with no conditional either.
    render = lowering.in_scope(loops, lowering.RENDER_LOOP)
    assert render and all(loop.conditionals == 0 for loop in render)
    assert all(inner.static_trip_count and not inner.conditionals
               for loop in render for inner in loop.whiles), render
    assert any(loop.whiles for loop in render), render


def test_unrolled_write_slots_leave_no_loop_in_the_instruction_loop():
    with lowering.loop_shape("unrolled"):
        loops = lowering.audit(_export_preset_step(None))
    instruction = lowering.in_scope(loops, lowering.INSTRUCTION_LOOP)
    assert len(instruction) == 1
    for loop in instruction:
        assert loop.static_trip_count and not loop.conditionals, loop
        assert not loop.whiles, loop


def test_cpu_lowering_keeps_its_batch_wide_conditionals():
    loops = lowering.audit(_export_preset_step(lowering.CPU))
    instruction = lowering.in_scope(loops, lowering.INSTRUCTION_LOOP)
    # One frame program, whether a frame is drawn given as data
    # (`AtariEnv._frames`), as the accelerator's.
    assert len(instruction) == 1 and all(not loop.static_trip_count
                                         for loop in instruction)
    assert all(loop.conditionals >= 12 for loop in instruction), [
        loop.conditionals for loop in instruction]


@pytest.fixture(scope="module")
def mixed_batch():
    """Boards, console states (after each game's reset) and per-frame
    joystick inputs for `MIXED_GAMES`, widened to one program."""
    made = [jaxatari.make(game) for game in MIXED_GAMES]
    features = console.union_features([e.board.features for e, _ in made])
    boards, machines = [], []
    for env, params in made:
        machine = jax.tree.map(lambda x: x[0], params.reset_states.machine)
        boards.append(console.widen_board(env.board, features))
        machines.append(console.refit(machine, features))
    stack = lambda xs: jax.tree.map(lambda *x: jnp.stack(x), *xs)
    rng = np.random.default_rng(0)
    size = len(MIXED_GAMES)
    inputs = [console.Inputs(
        swcha=jnp.asarray(rng.choice([0xFF, 0x7F, 0xBF, 0xDF, 0xEF], size),
                          jnp.int32),
        swchb=jnp.full((size,), 0x0B, jnp.int32),
        fire=jnp.asarray(rng.integers(0, 2, (size, 2)), jnp.int32),
        paddle_needed=jnp.full((size, 4), -2, jnp.int32))
        for _ in range(FRAMES)]
    return stack(boards), stack(machines), inputs


def _frames(board, state, inputs, variant, shape=None, shares=None):
    """The states after each frame (all rendered: the frames not rendered
    run the same program less its pixels); `shares`: the accelerator's
    `lowering.gather_shares`."""
    with lowering.forced(variant), lowering.loop_shape(
            shape or lowering.DEFAULT_LOOP_SHAPE), \
            lowering.gather_shares(**(shares or {})):
        step = jax.jit(jax.vmap(console.frame))
        states = []
        for frame_inputs in inputs:
            state = step(board, state, frame_inputs)
            states.append(jax.device_get(state))
    return states


@pytest.mark.slow
def test_both_lowerings_give_the_same_bits(mixed_batch):
    board, state, inputs = mixed_batch
    cpu = _frames(board, state, inputs, lowering.CPU)
    # The accelerator's loop, 2 ways; its TIA draws for one console in 3
    # gathered (the 9 consoles' groups: the default shares do not divide
    # 9), for writes alone (`loop`) and for writes and latches (`packed`);
    # consoles wait. (`unrolled` is `loop`'s write slots as straight-line
    # code, whose shape the export test checks; draws in place, as the
    # plain kernel's loop makes them, are `tests/test_plain_kernel.py`'s,
    # and one console's, `tests/test_tia_log.py`'s. Each shape here is a
    # compile of about 40 s on 2 cores.)
    shares = {"loop": {"collisions": 1, "writes": 3},
              "packed": {"collisions": 3, "writes": 3}}
    assert lowering.gathered_share("writes", len(MIXED_GAMES)) == 0
    with lowering.gather_shares(**shares["packed"]):
        assert lowering.gathered_share("writes", len(MIXED_GAMES)) == 3
        assert lowering.gathered_share("collisions", len(MIXED_GAMES)) == 3
    for shape in shares:
        accelerator = _frames(board, state, inputs, lowering.ACCELERATOR,
                              shape, shares[shape])
        for k, (a, b) in enumerate(zip(cpu, accelerator)):
            for path, x, y in zip(jax.tree_util.tree_leaves_with_path(a),
                                  jax.tree.leaves(a), jax.tree.leaves(b)):
                np.testing.assert_array_equal(x, y, err_msg=(
                    f"{shape}, frame {k}: "
                    f"{jax.tree_util.keystr(path[0])}"))
    # The frames did run: every console moved its CPU.
    assert np.all(cpu[-1].cpu.pc != state.cpu.pc) or np.any(
        cpu[-1].riot.ram != state.riot.ram)


def test_packed_chunks_are_the_plain_chunks():
    """`chunked_while` with its carry packed (leaves of several dtypes and
    shapes, one too big to pack and one without the batch's lead,
    updated from each other every step) against the same loop unpacked."""
    rng = np.random.default_rng(0)
    batch = 5
    carry = {"a": jnp.asarray(rng.integers(0, 99, batch), jnp.int32),
             "b": jnp.asarray(rng.integers(0, 99, (batch, 4)), jnp.int32),
             "flag": jnp.asarray(rng.integers(0, 2, batch), bool),
             "ram": jnp.asarray(rng.integers(0, 256, (batch, 128)),
                                jnp.uint8),
             "steps": jnp.int32(0)}

    def step(c):
        a = c["a"] * 3 + c["b"][:, 1] - c["steps"]
        b = c["b"].at[:, 0].set(c["a"]) ^ c["flag"][:, None]
        ram = c["ram"].at[:, 7].add(a.astype(jnp.uint8))
        return {"a": a, "b": b, "flag": ~c["flag"] | (a > 50), "ram": ram,
                "steps": c["steps"] + 1}

    assert [len(g) for g in lowering._packing(jax.tree.leaves(carry),
                                              (batch,))] == [2, 1]
    runs, programs = {}, {}
    for shape in ("unrolled", "packed"):
        with lowering.forced(lowering.ACCELERATOR), \
                lowering.loop_shape(shape):
            loop = lambda c: lowering.chunked_while(   # noqa: E731
                lambda x: x["steps"] < 70, step, c, (batch,), "chunk")
            runs[shape] = jax.jit(loop)(carry)
            programs[shape] = str(jax.make_jaxpr(loop)(carry))
    assert "concatenate" in programs["packed"]
    assert "concatenate" not in programs["unrolled"]
    assert int(runs["packed"]["steps"]) == 3 * lowering.CHUNK
    for x, y in zip(jax.tree.leaves(runs["unrolled"]),
                    jax.tree.leaves(runs["packed"])):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)


def test_packing_lays_each_register_out_as_a_row_across_the_batch():
    """The packed axis leads, (n,) + lead: each register a contiguous row
    over the consoles (coalesced on a GPU), and unpack inverts pack."""
    batch = 3
    carry = {"pc": jnp.arange(batch, dtype=jnp.int32) + 10,
             "regs": jnp.arange(batch * 4, dtype=jnp.int32).reshape(batch, 4),
             "grid": jnp.arange(batch * 6, dtype=jnp.int32).reshape(
                 batch, 2, 3)}
    packing = lowering.Packing(carry, (batch,))
    (array,), rest = packing.pack(carry)
    assert rest == [] and array.shape == (1 + 4 + 6, batch)
    leaves = jax.tree.leaves(carry)
    expected = np.concatenate([np.asarray(x).reshape(batch, -1).T
                               for x in leaves])
    np.testing.assert_array_equal(array, expected)
    for x, y in zip(leaves, jax.tree.leaves(packing.unpack(([array], [])))):
        np.testing.assert_array_equal(x, y)


def test_loop_shape_rejects_an_unknown_shape():
    with pytest.raises(ValueError, match="unknown loop shape"):
        with lowering.loop_shape("rolled"):
            pass


def test_forced_rejects_an_unknown_variant():
    with pytest.raises(ValueError, match="unknown lowering variant"):
        with lowering.forced("tpu"):
            pass


def test_an_unknown_variant_in_the_environment_is_refused():
    result = subprocess.run(
        [sys.executable, "-c", "import jaxatari.lowering"],
        env={**os.environ, lowering.ENVIRONMENT_VARIABLE: "gpu"},
        capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "unknown lowering variant 'gpu' (JAXATARI_LOWERING)" in (
        result.stderr)


def test_audit_finds_conditionals_through_calls():
    @jax.jit
    def inner(x):
        return jax.lax.cond(x.sum() > 0, lambda: x + 1, lambda: x)

    def program(x):
        x = jax.lax.fori_loop(0, 3, lambda _, y: y * 2, x)
        return jax.lax.while_loop(lambda y: y.sum() < 10, inner, x)

    text = jax.export.export(jax.jit(program), platforms=["cuda"])(
        jnp.zeros(3)).mlir_module()
    loops = lowering.audit(text)
    assert sorted((loop.static_trip_count, loop.conditionals)
                  for loop in loops) == [(False, 1), (True, 0)]


def test_audit_takes_a_bound_anded_with_flags_for_no_trip_count():
    """A loop that runs while any flag holds and a counter is under a cap
    (`console._cpu_loop_goes_on`) has no static trip count; one whose
    condition is the counter's bound has."""
    def program(flags):
        def body(carry):
            count, flags = carry
            return count + 1, flags & (jnp.arange(3) > count)
        _, flags = jax.lax.while_loop(
            lambda c: jnp.any(c[1]) & (c[0] < 10), body, (0, flags))
        return jax.lax.fori_loop(0, 3, lambda _, y: ~y, flags)

    text = jax.export.export(jax.jit(program), platforms=["cuda"])(
        jnp.ones(3, bool)).mlir_module()
    assert sorted(loop.static_trip_count
                  for loop in lowering.audit(text)) == [False, True]


def test_audit_folds_platform_dependent_choices():
    def program(x):
        def body(y):
            return jax.lax.platform_dependent(
                y, cpu=lambda v: v + 1, default=lambda v: v + 2)
        return jax.lax.while_loop(lambda y: y.sum() < 10, body, x)

    text = jax.export.export(jax.jit(program), platforms=["cuda"])(
        jnp.zeros(3)).mlir_module()
    (loop,) = lowering.audit(text)
    assert loop.conditionals == 0


def test_a_per_backend_inside_a_variant_traces_that_variant_alone():
    traced = []

    def inner():
        def variant(name, value):
            def trace():
                traced.append((name, lowering.batch_conds()))
                return jnp.int32(value)
            return trace
        return lowering.per_backend(variant("cpu", 0),
                                    variant("accelerator", 1))

    with lowering.forced(None), lowering.every_backend():
        outer = jax.jit(lambda: lowering.per_backend(inner, inner))
        assert int(outer()) == (0 if jax.default_backend() == "cpu" else 1)
    # each outer branch traced its own inner variant once, as itself
    assert traced == [("cpu", True), ("accelerator", False)]


def test_a_cpu_process_traces_the_cpus_variant_alone(monkeypatch):
    """Where JAX's default backend is the CPU, `per_backend` traces the
    CPU's variant alone (`cpu_alone`), unless `every_backend` is entered
    (part of the jit cache key, so a program traced outside is traced
    again within); with an accelerator's default backend, both."""
    traced = []

    def variant(name, value):
        def trace():
            traced.append(name)
            return jnp.int32(value)
        return trace
    fn = jax.jit(lambda: lowering.per_backend(variant("cpu", 0),
                                              variant("accelerator", 1)))
    with lowering.forced(None):   # the suite forces the CPU's (conftest)
        assert lowering.cpu_alone()
        assert int(fn()) == 0 and traced == ["cpu"]
        with lowering.every_backend():
            assert not lowering.cpu_alone()
            assert int(fn()) == 0 and traced == ["cpu", "cpu", "accelerator"]
        monkeypatch.setattr(lowering.jax, "default_backend", lambda: "gpu")
        assert not lowering.cpu_alone()
        del traced[:]
        jax.make_jaxpr(lambda: lowering.per_backend(
            variant("cpu", 0), variant("accelerator", 1)))()
        assert traced == ["cpu", "accelerator"]


def test_a_cpu_users_step_holds_no_accelerator_variant():
    """`jax.jit(env.step)` of the preset on the CPU, as a user traces it
    (no variant forced): no `platform_dependent` choice and no Pallas
    kernel are left in its program, only the CPU's loop; `cuda_text`
    (`test_cuda_lowering_has_no_conditional_in_the_instruction_loop`)
    traces the accelerator's for CUDA from the same process."""
    env, params = jaxatari.make_atari("pong", num_envs=2)
    key = jax.random.key(0)
    _, state = env.reset(key, params)
    action = jnp.zeros((2,), jnp.int32)
    with lowering.forced(None), lowering.plain_kernel("gpu"):
        jaxpr = jax.make_jaxpr(env.step)(key, state, action, params)
    names = jaxprs.primitives(jaxpr.jaxpr)
    assert "while" in names   # the frame loop was walked
    assert not {"platform_index", "pallas_call"} & names, names


def test_on_host_runs_the_cpu_variant_under_an_accelerator(monkeypatch):
    """On an accelerator backend, host-driven emulation (the boot) is
    traced as the CPU's variant, whatever was forced around it, and its
    arrays come back as arrays; on the CPU it is the call itself."""
    seen = []

    def emulate():
        seen.append(lowering.batch_conds())
        return {"state": jnp.arange(3), "count": 3}
    with lowering.forced(lowering.ACCELERATOR):
        assert lowering.on_host(emulate)["count"] == 3
        monkeypatch.setattr(lowering.jax, "default_backend", lambda: "gpu")
        result = lowering.on_host(emulate)
    assert seen == [False, True]
    assert isinstance(result["state"], jax.Array)
    np.testing.assert_array_equal(result["state"], [0, 1, 2])
    assert result["count"] == 3


def test_gather_shares_are_checked_and_apply_where_they_divide():
    with pytest.raises(ValueError, match="unknown gathered work"):
        with lowering.gather_shares(pixels=4):
            pass
    with pytest.raises(ValueError, match="at least 1"):
        with lowering.gather_shares(writes=0):
            pass
    with lowering.gather_shares(collisions=4, writes=1):
        assert lowering.gathered_share("collisions", 4096) == 4
        assert lowering.gathered_share("collisions", 4) == 0    # too few
        assert lowering.gathered_share("collisions", 4098) == 0  # no fit
        assert lowering.gathered_share("writes", 4096) == 0     # in place


def test_skipped_unless_branches_in_the_cpus_lowering_alone():
    """`lowering.skipped_unless`: a branch in the CPU's lowering, which
    skips the work where the flag is off; the accelerator's does it."""
    def fn(flag):
        return lowering.skipped_unless(flag, lambda x: x + 1, jnp.int32(5))

    for variant, branches in ((lowering.CPU, 1), (lowering.ACCELERATOR, 0)):
        with lowering.forced(variant):
            eqns = jax.make_jaxpr(fn)(jnp.bool_(True)).jaxpr.eqns
            assert sum(e.primitive.name == "cond" for e in eqns) == branches
            assert int(jax.jit(fn)(jnp.bool_(True))) == 6
            assert int(jax.jit(fn)(jnp.bool_(False))) == 6 - branches


def test_computed_once_keeps_every_value_and_reduces_in_the_cpus_lowering():
    """`lowering.computed_once`: the same values in both lowerings,
    batched or not; a reduction (the value materialized once) in the
    CPU's alone."""
    info = np.iinfo(np.int32)
    values = jnp.asarray([info.min, -70000, -1, 0, 1, 255, 0x1FFFFF,
                          info.max], jnp.int32)
    for variant, reduces in ((lowering.CPU, 1), (lowering.ACCELERATOR, 0)):
        with lowering.forced(variant):
            eqns = jax.make_jaxpr(lowering.computed_once)(values).jaxpr.eqns
            assert sum(e.primitive.name == "reduce_max"
                       for e in eqns) == reduces
            np.testing.assert_array_equal(np.asarray(jax.jit(jax.vmap(
                lowering.computed_once))(values)), np.asarray(values))
            assert int(jax.jit(lowering.computed_once)(jnp.int32(-5))) == -5
            small = jnp.asarray([0, 7, 255], jnp.uint8)
            np.testing.assert_array_equal(np.asarray(jax.jit(
                lowering.computed_once)(small)), [0, 7, 255])
