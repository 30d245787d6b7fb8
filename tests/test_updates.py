"""`jaxatari.updates`: slice updates that give the same arrays as
`lax.dynamic_update_slice` (alone, in small and large batches, under vmap
of vmap), and keep one console's frame loop free of scatters, so that
XLA:CPU compiles it into one kernel."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import _config, environment, lowering, updates

SCREEN = (2, 5, 7)


def _writes(shape: tuple[int, ...], seed: int):
    """Random screens, rows and the (buffer, row) each goes to."""
    rng = np.random.default_rng(seed)
    screens = rng.integers(0, 256, shape + SCREEN, dtype=np.uint8)
    rows = rng.integers(0, 256, shape + (1, 1, SCREEN[2]), dtype=np.uint8)
    buffer = rng.integers(0, SCREEN[0], shape).astype(np.int32)
    row = rng.integers(0, SCREEN[1], shape).astype(np.int32)
    return screens, rows, buffer, row


def _expected(screens, rows, buffer, row):
    out = screens.copy()
    for k in np.ndindex(buffer.shape):
        out[k][buffer[k], row[k]] = rows[k][0, 0]
    return out


def _ours(screen, rows, buffer, row):
    return updates.update_slice(screen, rows, (buffer, row, jnp.int32(0)))


@pytest.mark.parametrize("batch", [1, 16, 17, 40])
def test_batched_update_slice_equals_each_alone(batch, monkeypatch):
    """Both sides of the kernel's limit, set to 16 here (as it was until
    2026-11-28) to keep the batches small."""
    monkeypatch.setattr(updates, "KERNEL_MAX_BATCH", 16)
    screens, rows, buffer, row = _writes((batch,), batch)
    got = jax.jit(jax.vmap(_ours))(screens, rows, buffer, row)
    np.testing.assert_array_equal(got, _expected(screens, rows, buffer, row))


def test_vmap_of_vmap_and_unbatched_operands():
    screens, rows, buffer, row = _writes((3, 4), 0)
    got = jax.jit(jax.vmap(jax.vmap(_ours)))(screens, rows, buffer, row)
    np.testing.assert_array_equal(got, _expected(screens, rows, buffer, row))
    # One screen for all, each console its own row: broadcast first.
    shared = jax.vmap(_ours, in_axes=(None, 0, 0, 0))(
        screens[0, 0], rows[0], buffer[0], row[0])
    np.testing.assert_array_equal(shared, _expected(
        np.broadcast_to(screens[0, 0], (4,) + SCREEN), rows[0], buffer[0],
        row[0]))


def test_set_item():
    ram = jnp.arange(128, dtype=jnp.uint8)
    batch = jax.vmap(updates.set_item, in_axes=(None, 0, 0))(
        ram, jnp.array([3, 127]), jnp.array([200, 7]))
    assert batch[0, 3] == 200 and batch[1, 127] == 7
    assert int((batch != ram).sum()) == 2


@pytest.mark.parametrize("shape,part", [((128,), (1,)), ((3, 4), (1, 4)),
                                        ((3, 4), (1, 1)), ((2, 5, 7),
                                                           (1, 1, 7))])
def test_selected_equals_dynamic_update_slice(shape, part):
    """The accelerator's select-based update, starts out of range included
    (clamped as `dynamic_update_slice` clamps them)."""
    rng = np.random.default_rng(len(shape) + len(part))
    batch = 33
    array = jnp.asarray(rng.integers(0, 256, (batch,) + shape), jnp.uint8)
    update = jnp.asarray(rng.integers(0, 256, (batch,) + part), jnp.uint8)
    start = tuple(jnp.asarray(rng.integers(-3, n + 3, batch), jnp.int32)
                  for n in shape)
    expected = jax.vmap(jax.lax.dynamic_update_slice)(array, update, start)
    np.testing.assert_array_equal(
        updates.selected(array, update, start), expected)
    with lowering.forced(lowering.ACCELERATOR):   # through update_slice
        lowered = jax.jit(lambda a, u, s: lowering.per_backend(
            lambda: jax.vmap(updates.update_slice)(a, u, s),
            lambda: jax.vmap(updates.update_slice)(a, u, s)))
        text = lowered.lower(array, update, start).as_text()
        np.testing.assert_array_equal(lowered(array, update, start),
                                      expected)
    assert "scatter" not in text


def test_kernel_loops_flag_is_set_before_the_backend_starts():
    import os
    assert _config.KERNEL_LOOPS in os.environ["XLA_FLAGS"]


def test_one_consoles_frame_loop_is_one_kernel():
    """No scatter in the frame program, and every loop hoisted into a
    kernel (XLA tags them `xla_cpu_small_call`)."""
    if jax.default_backend() != "cpu":
        pytest.skip("an XLA:CPU property")
    env = environment.AtariEnv("pong")
    state = env.initial_state()
    compiled = environment._shared_console_frame.lower(
        env.board, env.controls._replace(difficulty=jnp.int32(0)),
        state.machine, state.paddles, jnp.int32(0), jnp.int32(0),
        True, None).compile()
    text = compiled.as_text()
    assert " scatter(" not in text
    assert text.count(" while(") == text.count("xla_cpu_small_call") > 0


def test_a_kernel_batchs_frame_loop_is_one_kernel():
    """`KERNEL_MAX_BATCH` consoles of one game (an env's batch, the board
    shared) update one console after another, so every loop of the CPU's
    drawn frame program is hoisted into a kernel (one more console
    compacts its TIA writes, whose scatters keep its loops thunks). The
    program is only compiled, for arguments of the batch's shapes."""
    if jax.default_backend() != "cpu":
        pytest.skip("an XLA:CPU property")
    env = environment.AtariEnv("pong")
    state = env.initial_state()
    controls = env.controls._replace(difficulty=jnp.int32(0))
    batch = updates.KERNEL_MAX_BATCH

    def frame(machine, paddles, action, buttons):
        return environment._console_frame_as(
            env.board, controls, machine, paddles, action, buttons, True,
            lowering.CPU)
    consoles = jax.tree.map(
        lambda x: jax.ShapeDtypeStruct((batch,) + jnp.shape(x),
                                       jnp.result_type(x)),
        (state.machine, state.paddles))
    zeros = jax.ShapeDtypeStruct((batch,), jnp.int32)
    with lowering.forced(lowering.CPU):
        lowered = jax.jit(jax.vmap(frame)).lower(*consoles, zeros, zeros)
    text = lowered.compile().as_text()
    assert text.count(" while(") == text.count("xla_cpu_small_call") > 0


def test_merge_batch_axes_joins_outer_and_batch_axes():
    """Each leaf of an outer axis of 2 and a batch of 3 becomes one axis of
    6, in (outer, batch) order, whichever of the two it had; a leaf with
    neither stays unbatched."""
    both = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    outer_only = np.arange(2 * 4).reshape(2, 4)
    batch_only = np.arange(3 * 4).reshape(3, 4)
    neither = np.arange(4)
    tree = {"both": both, "outer": outer_only, "batch": batch_only,
            "neither": neither}
    outer_batched = {"both": True, "outer": True, "batch": False,
                     "neither": False}
    inner_axes = {"both": 0, "outer": None, "batch": 0, "neither": None}
    merged, axes = updates.merge_batch_axes(2, 3, tree, outer_batched,
                                            inner_axes)
    assert axes == {"both": 0, "outer": 0, "batch": 0, "neither": None}
    for m in range(2):
        for b in range(3):
            k = m * 3 + b
            np.testing.assert_array_equal(merged["both"][k], both[m, b])
            np.testing.assert_array_equal(merged["outer"][k], outer_only[m])
            np.testing.assert_array_equal(merged["batch"][k], batch_only[b])
    np.testing.assert_array_equal(merged["neither"], neither)


def test_first_in_groups_takes_each_groups_first_flagged_console():
    flag = jnp.asarray([0, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1], bool)
    groups = updates.first_in_groups(flag, 4)
    assert groups.rows.tolist() == [1, 4, 8]   # the middle group: none
    assert np.flatnonzero(groups.taken).tolist() == [1, 8]


def test_take_and_put_rows_against_numpy():
    """Leaves of three dtypes and shapes gathered and put back as numpy's
    fancy indexing would, only the chosen rows changed."""
    rng = np.random.default_rng(0)
    size, share = 12, 3
    tree = {"a": rng.integers(0, 99, size).astype(np.int32),
            "b": rng.integers(0, 99, (size, 2, 3)).astype(np.int32),
            "flag": rng.integers(0, 2, size).astype(bool),
            "ram": rng.integers(0, 256, (size, 5)).astype(np.uint8)}
    flag = rng.integers(0, 2, size).astype(bool)
    groups = updates.first_in_groups(jnp.asarray(flag), share)
    part = updates.take_rows(jax.tree.map(jnp.asarray, tree), groups)
    rows = np.asarray(groups.rows)
    for name in tree:
        np.testing.assert_array_equal(part[name], tree[name][rows])
    new = jax.tree.map(lambda x: ~x if x.dtype == bool else x + 1, part)
    put = updates.put_rows(jax.tree.map(jnp.asarray, tree), groups, new)
    taken = np.asarray(groups.taken)
    for name, leaf in tree.items():
        expected = leaf.copy()
        chosen = rows[taken[rows]]
        expected[chosen] = np.asarray(new[name])[taken[rows]]
        np.testing.assert_array_equal(put[name], expected)
