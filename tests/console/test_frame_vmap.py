"""`console.frame`'s vmap rule against its plain loop.

The rule (one loop while any console of the batch runs, the others masked)
must give each console exactly what the unbatched loop gives it, also when
the batch mixes games (a batched board), under a vmap of a vmap (a
population of batches), and when the consoles' frames end at different
instructions. `tests/test_vmap_parity.py` checks the same through
`env.step` at 1,024 consoles of one game.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import cart, console, games, system_rng, tia_gather, updates

GAMES = ("pong", "montezuma_revenge")
FRAMES = 2


def _board(game: str) -> console.Board:
    rules = games.lookup(game)
    return console.make_board(cart.load_cartridge(rules.rom_id),
                              rules.ystart, rules.hmove_blanks)


def _inputs(swcha: int) -> console.Inputs:
    return console.Inputs(swcha=jnp.int32(swcha), swchb=jnp.int32(0x0B),
                          fire=jnp.zeros((2,), jnp.int32),
                          paddle_needed=jnp.full((4,), -2, jnp.int32))


def _run(board, inputs):
    """The console after each of `FRAMES` frames from a reset, stacked on a
    lead axis (a scan: one frame program to compile, not `FRAMES`)."""
    state = console.system_reset(board, console.power_on(board),
                                 system_rng.reset_timer(1))

    def frame(state, _):
        state = console.frame(board, state, inputs)
        return state, state
    return jax.lax.scan(frame, state, length=FRAMES)[1]


@pytest.fixture(scope="module")
def consoles():
    """Two games x two joystick inputs: boards, inputs, and each alone."""
    boards = [_board(g) for g in GAMES for _ in range(2)]
    inputs = [_inputs(v) for _ in GAMES for v in (0xFF, 0x7F)]
    alone = jax.jit(_run)
    return boards, inputs, [alone(b, i) for b, i in zip(boards, inputs)]


@pytest.fixture
def compaction_above_16(monkeypatch):
    """The CPU's limits as they were until 2026-11-28: a batch of more
    than 16 consoles compacts its TIA writes (`tia_gather._compacts`), so
    that 18 or 20 consoles exercise `tia_gather.write_compacted`, which
    batches of more than `updates.KERNEL_MAX_BATCH` (2,048) take."""
    monkeypatch.setattr(updates, "KERNEL_MAX_BATCH", 16)
    monkeypatch.setattr(tia_gather, "COMPACT_MIN_BATCH", 17)


def _stack(trees):
    return jax.tree.map(lambda *xs: jnp.stack(xs), *trees)


def _assert_equal(batched, alone, index):
    for ours, theirs in zip(jax.tree.leaves(batched), jax.tree.leaves(alone)):
        np.testing.assert_array_equal(np.asarray(ours)[index],
                                      np.asarray(theirs))


@pytest.mark.parametrize("copies", [1, 5])
def test_batch_of_games_equals_each_alone(consoles, compaction_above_16,
                                         copies):
    """4 consoles draw each write for the writing consoles, one after
    another (`tia_gather.write_one_by_one`; on the CPU the loop is one
    kernel, `updates`); 20 gather the writing ones
    (`tia_gather.compacted_size`) and scatter their updates."""
    boards, inputs, alone = consoles
    assert bool(tia_gather.compacted_size(len(boards) * copies)) == (copies > 1)
    lengths = {int(states.cpu.cycles[0]) for states in alone}
    assert len(lengths) > 1, "the first frames should differ in length"
    out = jax.jit(jax.vmap(_run))(_stack(boards * copies),
                                  _stack(inputs * copies))
    for k, single in enumerate(alone * copies):
        _assert_equal(out, single, k)


@pytest.mark.parametrize("copies", [1, 5])
def test_vmap_of_vmap_equals_each_alone(consoles, compaction_above_16,
                                       copies):
    """A population of 2 batches of 2 (writes drawn one by one) or of 10
    (compacted writes)."""
    boards, inputs, alone = consoles
    inner = len(boards) * copies // 2
    grid = lambda xs: jax.tree.map(
        lambda x: x.reshape((2, inner) + x.shape[1:]), _stack(xs))
    out = jax.jit(jax.vmap(jax.vmap(_run)))(grid(boards * copies),
                                            grid(inputs * copies))
    for k, single in enumerate(alone * copies):
        _assert_equal(out, single, (k // inner, k % inner))


def test_population_of_one_game_equals_each_alone(consoles):
    """A population's shape: one board shared by all, 2 members x 2 envs
    with their own inputs (the board broadcast by neither vmap)."""
    boards, inputs, alone = consoles
    grid = jax.tree.map(lambda x: x.reshape((2, 1) + x.shape[1:]),
                        _stack(inputs[:2]))
    grid = jax.tree.map(lambda x: jnp.concatenate([x, x], axis=1), grid)
    run = jax.vmap(jax.vmap(_run, in_axes=(None, 0)), in_axes=(None, 0))
    out = jax.jit(run)(boards[0], grid)
    for member in range(2):
        for env in range(2):
            _assert_equal(out, alone[member], (member, env))


def _conds(jaxpr) -> int:
    """How many `cond`s a jaxpr holds, its sub-jaxprs included."""
    count = 0
    for eqn in jaxpr.eqns:
        count += eqn.primitive.name == "cond"
        for param in eqn.params.values():
            for sub in (param if isinstance(param, (tuple, list))
                        else (param,)):
                if isinstance(sub, jax.extend.core.ClosedJaxpr):
                    count += _conds(sub.jaxpr)
                elif isinstance(sub, jax.extend.core.Jaxpr):
                    count += _conds(sub)
    return count


def test_outer_vmap_keeps_the_batch_conds(consoles):
    """Under a second vmap the batch's `lax.cond`s stay conds (the outer
    axis joins the batch) instead of becoming selects of both branches,
    which made a population of Atari agents 2.5 times slower."""
    boards, inputs, _ = consoles
    frame = lambda b, i: console.frame(
        b, console.power_on(b), i, render=False)
    once = jax.vmap(frame, in_axes=(None, 0))
    twice = jax.vmap(once, in_axes=(None, 0))
    stacked = _stack(inputs[:2])
    grid = jax.tree.map(lambda x: x[None], stacked)
    with jax.default_device(jax.devices("cpu")[0]):
        single = _conds(jax.make_jaxpr(once)(boards[0], stacked).jaxpr)
        nested = _conds(jax.make_jaxpr(twice)(boards[0], grid).jaxpr)
    assert single > 0
    assert nested == single


def test_one_games_batch_with_a_shared_board_equals_each_alone(
        consoles, compaction_above_16):
    """18 consoles of one game on one (unbatched) board gather their
    writing consoles too (`tia_gather._compacts`), as an env's batch does."""
    boards, inputs, alone = consoles
    assert tia_gather.compacted_size(18)
    out = jax.jit(jax.vmap(_run, in_axes=(None, 0)))(
        boards[0], _stack(inputs[:2] * 9))
    for k in range(18):
        _assert_equal(out, alone[k % 2], k)
