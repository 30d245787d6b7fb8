"""Resets after play (`jaxatari.reset_carry`): which games replay theirs,
the replay against ale-py's `reset_game()` of a console whose RAM was
set, and the replay under vmap (one cond for the batch)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import environment, reset_carry

ale_py = pytest.importorskip("ale_py")

SETTINGS = dict(frameskip=1, repeat_action_probability=0.0,
                max_num_frames_per_episode=0)
# Kung Fu Master's reset keeps RAM bytes 81 and 90-95 after a game
# (ale-py, BENCHMARKS.md); Pong's start-up code overwrites all 128.
REPLAYED, COPIED = "kung_fu_master", "pong"


@pytest.fixture(scope="module")
def kung_fu():
    return environment.make(REPLAYED, **SETTINGS)


def _one(tree, k):
    return jax.tree.map(lambda x: x[k], tree)


def _ale_reset_from(game: str, ram: np.ndarray) -> "ale_py.ALEInterface":
    """ale-py after loadROM and one reset_game (state 1), its RAM then set
    to `ram`, and reset again (ALE's second reset_game)."""
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setInt("random_seed", 0)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(ale_py.roms.get_rom_path(game))
    ale.reset_game()
    for index, value in enumerate(ram):
        ale.setRAM(index, int(value))
    ale.reset_game()
    return ale


def test_only_games_whose_reset_keeps_ram_replay_it(kung_fu):
    _, params = kung_fu
    assert params.reset_scripts is not None
    assert environment.make(COPIED, **SETTINGS)[1].reset_scripts is None
    script = _one(params.reset_scripts, 0)
    # 60 NOOP frames, RESET for 4, RomSettings::reset, RESET for 4
    assert int(script.active.sum()) == 68
    assert np.flatnonzero(np.asarray(script.begin)).tolist() == [64]
    assert np.flatnonzero(np.asarray(script.start)).tolist() == [68]


@pytest.mark.parametrize("fill", [0, 1])
def test_replay_is_ales_reset_of_that_ram(kung_fu, fill):
    env, params = kung_fu
    ram = reset_carry.ram_fills()[fill]
    played = reset_carry.with_ram(_one(params.reset_states, 1), ram)
    # reset_game() number 2 after loadROM: script 2, booted state 2
    obs, state = jax.jit(env.reset_after)(
        jax.random.key(0), played, _only(params, 2))
    ale = _ale_reset_from(REPLAYED, ram)
    np.testing.assert_array_equal(np.asarray(env.ram(state)), ale.getRAM())
    np.testing.assert_array_equal(np.asarray(env.screen(state)),
                                  ale.getScreen())
    np.testing.assert_array_equal(np.asarray(obs), ale.getScreenRGB())
    assert int(state.lives) == ale.lives()
    assert not bool(state.terminal)
    # and not the booted state: bytes 90-95 come from the played console
    booted = np.asarray(env.ram(_one(params.reset_states, 2)))
    assert (np.asarray(env.ram(state))[90:96] != booted[90:96]).any()


def _only(params: environment.EnvParams, k: int) -> environment.EnvParams:
    one = lambda tree: jax.tree.map(lambda x: x[k:k + 1], tree)
    return params.replace(reset_states=one(params.reset_states),
                          reset_scripts=one(params.reset_scripts))


def test_a_batch_replays_only_its_done_consoles_with_one_cond(kung_fu):
    env, params = kung_fu
    fills = reset_carry.ram_fills()
    played = jax.tree.map(lambda *x: jnp.stack(x), *[
        reset_carry.with_ram(_one(params.reset_states, 1), fill)
        for fill in fills + fills])
    done = jnp.array([True, False, False, True])
    keys = jax.random.split(jax.random.key(3), 4)
    batch = jax.vmap(env.reset_after, in_axes=(0, 0, None, 0))
    _, states = jax.jit(batch)(keys, played, params, done)
    for lane in range(4):
        _, alone = env.reset_after(keys[lane], _one(played, lane), params,
                                   bool(done[lane]))
        _, fresh = env.reset(keys[lane], params)
        expected = alone if done[lane] else fresh
        assert reset_carry.same_shown(_one(states, lane), expected)
    assert bool(done[0]) and not reset_carry.same_shown(
        _one(states, 0), env.reset(keys[0], params)[1])
    # the batch's replay is one cond on an unbatched predicate (any lane
    # done), not a select that would replay at every step
    jaxpr = jax.make_jaxpr(batch)(keys, played, params, done)
    conds = [eqn for eqn in jaxpr.jaxpr.eqns if eqn.primitive.name == "cond"]
    assert len(conds) == 1 and conds[0].invars[0].aval.shape == ()


def test_params_that_mix_scripts_and_states_are_refused(kung_fu):
    env, params = kung_fu
    mixed = params.replace(reset_scripts=jax.tree.map(
        lambda x: x[:1], params.reset_scripts))
    with pytest.raises(ValueError, match="reset_scripts"):
        env.reset(jax.random.key(0), mixed)
