"""Resets after play (`jaxatari.reset_carry`): which games replay theirs,
the replay against ale-py's `reset_game()` of a console whose RAM was
set, and the replay under vmap (a loop over the done consoles' chunks
on the CPU, one cond for the batch on an accelerator)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct

from jaxatari import environment, games, lowering, reset_carry, wrappers

ale_py = pytest.importorskip("ale_py")

SETTINGS = dict(frameskip=1, repeat_action_probability=0.0,
                max_num_frames_per_episode=0)
# Kung Fu Master's reset keeps RAM bytes 81 and 90-95 after a game
# (ale-py, BENCHMARKS.md); Pong's start-up code overwrites all 128.
REPLAYED, COPIED = "kung_fu_master", "pong"
# Every game whose reset depends on the console it resets (its RAM;
# Pitfall II's DPC registers), all replaying it (BENCHMARKS.md, "Resets
# after play"); the last line's setMode loops on SELECT.
REPLAYED_GAMES = ("entombed", "hangman", "haunted_house", "ice_hockey",
                  "kung_fu_master", "seaquest", "sir_lancelot", "time_pilot",
                  "venture", "pitfall2",
                  "crossbow", "pooyan", "space_war", "surround",
                  "yars_revenge")


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


def _assert_ales_reset_of_that_ram(env, params, game: str) -> None:
    """The env's auto-reset of its state 1 with each fill's RAM against
    ale-py's reset_game() of the same RAM: RAM, screen, RGB, lives."""
    reset = jax.jit(env.reset_after)
    for ram in reset_carry.ram_fills():
        played = reset_carry.with_ram(_one(params.reset_states, 1), ram)
        # reset_game() number 2 after loadROM: script 2, booted state 2
        obs, state = reset(jax.random.key(0), played, _only(params, 2))
        ale = _ale_reset_from(game, ram)
        np.testing.assert_array_equal(np.asarray(env.ram(state)),
                                      ale.getRAM())
        np.testing.assert_array_equal(np.asarray(env.screen(state)),
                                      ale.getScreen())
        np.testing.assert_array_equal(np.asarray(obs), ale.getScreenRGB())
        assert int(state.lives) == ale.lives()
        assert bool(state.terminal) == ale.game_over()


def test_replay_is_ales_reset_of_that_ram(kung_fu):
    env, params = kung_fu
    _assert_ales_reset_of_that_ram(env, params, REPLAYED)
    # and not the booted state: bytes 90-95 come from the played console
    played = reset_carry.with_ram(_one(params.reset_states, 1),
                                  reset_carry.ram_fills()[0])
    _, state = env.reset_after(jax.random.key(0), played, _only(params, 2))
    booted = np.asarray(env.ram(_one(params.reset_states, 2)))
    assert (np.asarray(env.ram(state))[90:96] != booted[90:96]).any()


@pytest.mark.slow
@pytest.mark.parametrize("game", [g for g in REPLAYED_GAMES if g != REPLAYED])
def test_every_replayed_reset_is_ales(game):
    # states 0 to 2 only: the check replays reset 2 from state 1
    env, params = environment.make(game, num_reset_states=3, **SETTINGS)
    assert params.reset_scripts is not None
    _assert_ales_reset_of_that_ram(env, params, game)


def _only(params: environment.EnvParams, k: int) -> environment.EnvParams:
    one = lambda tree: jax.tree.map(lambda x: x[k:k + 1], tree)
    return params.replace(reset_states=one(params.reset_states),
                          reset_scripts=one(params.reset_scripts))


def test_a_batch_replays_only_its_done_consoles_a_chunk_at_a_time(
        kung_fu, monkeypatch):
    env, params = kung_fu
    monkeypatch.setattr(reset_carry, "REPLAY_CHUNK", 2)
    fills = reset_carry.ram_fills()
    played = jax.tree.map(lambda *x: jnp.stack(x), *[
        reset_carry.with_ram(_one(params.reset_states, 1), fill)
        for fill in fills + fills])
    # three done: two chunks of 2, the second with a lane it drops
    done = jnp.array([True, False, True, True])
    keys = jax.random.split(jax.random.key(3), 4)
    batch = jax.vmap(env.reset_after, in_axes=(0, 0, None, 0))
    _, states = jax.jit(batch)(keys, played, params, done)
    for lane in range(4):
        _, alone = env.reset_after(keys[lane], _one(played, lane), params,
                                   bool(done[lane]))
        _, fresh = env.reset(keys[lane], params)
        expected = alone if done[lane] else fresh
        assert reset_carry.same_shown(_one(states, lane), expected)
    assert not reset_carry.same_shown(_one(states, 0), _one(states, 3))
    # the CPU's replay is one loop on an unbatched predicate (its chunks),
    # an accelerator's one cond on one (any lane done): neither a select
    # that would replay at every step
    args = (keys, played, params, done)
    assert _outer_control(jax.make_jaxpr(batch)(*args)) == [("while", ())]
    with lowering.forced(lowering.ACCELERATOR):
        assert _outer_control(jax.make_jaxpr(batch)(*args)) == [("cond", ())]


def test_a_population_of_batches_is_one_batch_with_one_loop(kung_fu):
    env, params = kung_fu
    fills = reset_carry.ram_fills()
    one = reset_carry.with_ram(_one(params.reset_states, 1), fills[0])
    played = jax.tree.map(lambda x: jnp.broadcast_to(x, (2, 3) + x.shape),
                          one)
    done = jnp.array([[False, True, False], [False, False, False]])
    keys = jax.random.split(jax.random.key(5), 6).reshape(2, 3)
    batch = jax.vmap(jax.vmap(env.reset_after, in_axes=(0, 0, None, 0)),
                     in_axes=(0, 0, None, 0))
    _, states = jax.jit(batch)(keys, played, params, done)
    for member, lane in np.ndindex(2, 3):
        key = keys[member, lane]
        expected = (env.reset_after(key, one, params)[1] if done[member, lane]
                    else env.reset(key, params)[1])
        assert reset_carry.same_shown(
            jax.tree.map(lambda x: x[member, lane], states), expected)
    # the members' batches are one batch: one loop over its done consoles
    assert reset_carry.REPLAY_CHUNK < 6
    assert _outer_control(jax.make_jaxpr(batch)(keys, played, params,
                                                done)) == [("while", ())]


def _outer_control(closed) -> list[tuple[str, tuple]]:
    """The conds and while loops of a jaxpr that no other holds (sub-jaxprs
    of other primitives, such as custom_vmap's call, searched too), each
    as its name and its predicate's shape."""
    found = []

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "cond":
                found.append(("cond", eqn.invars[0].aval.shape))
                continue
            if eqn.primitive.name == "while":
                predicate = eqn.params["cond_jaxpr"].out_avals[0]
                found.append(("while", predicate.shape))
                continue
            for value in eqn.params.values():
                inner = getattr(value, "jaxpr", value)
                if hasattr(inner, "eqns"):
                    walk(inner)
    walk(closed.jaxpr)
    return found


def test_params_that_mix_scripts_and_states_are_refused(kung_fu):
    env, params = kung_fu
    mixed = params.replace(reset_scripts=jax.tree.map(
        lambda x: x[:1], params.reset_scripts))
    with pytest.raises(ValueError, match="reset_scripts"):
        env.reset(jax.random.key(0), mixed)


# A toy console for the SELECT loop: each SELECT frame moves the mode byte
# (RAM 0) on by one, mod 4; every frame's buttons are logged.
@struct.dataclass
class _Riot:
    ram: jax.Array


@struct.dataclass
class _Machine:
    riot: _Riot


@struct.dataclass
class _Toy:
    machine: _Machine
    vars: jax.Array
    reward: jax.Array
    episode_frame: jax.Array
    log: jax.Array       # the buttons of each frame, -1 past the last
    frames: jax.Array


def _toy(mode: int) -> _Toy:
    ram = jnp.zeros(reset_carry.RAM_SIZE, jnp.uint8).at[0].set(mode)
    return _Toy(_Machine(_Riot(ram)), jnp.zeros(2, jnp.int32),
                jnp.int32(5), jnp.int32(0), jnp.full(64, -1, jnp.int32),
                jnp.int32(0))


def _toy_frame(state: _Toy, action, buttons, run=True) -> _Toy:
    """One toy frame (`run` False: none)."""
    ram = state.machine.riot.ram
    ram = ram.at[0].set(jnp.where(buttons == 2, (ram[0] + 1) % 4,
                                  ram[0]).astype(jnp.uint8))
    new = state.replace(machine=_Machine(_Riot(ram)),
                        log=state.log.at[state.frames].set(buttons),
                        frames=state.frames + 1,
                        episode_frame=state.episode_frame + 1)
    return jax.tree.map(lambda a, b: jnp.where(run, a, b), new, state)


class _ToyDriver(environment.ConsoleDriver):
    """The toy on the host, recorded, as `_EnvDriver` records a boot."""

    def __init__(self, mode: int):
        self.state, self.recorder = _toy(mode), reset_carry.ScriptRecorder()

    def frames(self, action, buttons, count):
        for _ in range(count):
            self.recorder.frame(action, buttons)
            self.state = _toy_frame(self.state, action, buttons)

    def ram(self):
        return np.asarray(self.state.machine.riot.ram)

    def select_loop(self, done, presses):
        self.recorder.select_loop(presses)

    def reset(self, target: int) -> _Toy:
        """RESET, the rules' reset, SELECT once (2 frames), SELECT until
        the mode byte shows `target` (1 frame a press), RESET; as Yars'
        Revenge's setMode."""
        self.counted_frames = 0
        self.soft_reset()
        self.recorder.begin()
        self.state = self.state.replace(vars=jnp.full(2, 7, jnp.int32))
        self.press_select(2)
        games.core.select_until(
            self, lambda ram: games.core.ram_byte(ram, 0x80) == target, 1)
        self.recorder.start(self.counted_frames)
        return self.state.replace(reward=jnp.int32(0),
                                  episode_frame=jnp.int32(
                                      self.counted_frames))


@pytest.mark.parametrize("recorded, played", [(0, 0), (0, 3), (2, 1)])
def test_the_select_loop_presses_as_often_as_the_ram_asks(recorded, played):
    """The script recorded from one mode byte, replayed from another: the
    loop presses as often as the host's `select_until` would there."""
    target = 2
    driver = _ToyDriver(recorded)
    driver.reset(target)
    script = driver.recorder.script(inputs=None)
    expected = _ToyDriver(played).reset(target)
    state, pressed = reset_carry._replay_loop(
        lambda state, pc, *inputs: _toy_frame(state, *inputs),
        lambda: jnp.full(2, 7, jnp.int32), _toy(played), script,
        lambda ram: games.core.ram_byte(ram, 0x80) == target)
    state = reset_carry._started(state, script, len(script.actions), pressed)
    for got, want in zip(jax.tree.leaves(state), jax.tree.leaves(expected)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    # the fixed press moves the byte by 2, each loop press by 1
    assert int(pressed) == (target - played - 2) % 4


def test_the_presets_start_frames_are_replayed_after_the_reset(kung_fu):
    """`AtariPreprocessing`'s starts (FIRE, then NOOPs) follow the replayed
    reset: its auto-reset from set RAM equals the host's reset of that RAM
    then the same start frames."""
    env, _ = kung_fu
    preprocessing = wrappers.AtariPreprocessing(env)
    params = preprocessing.make_params(noop_max=3, noop_min=0,
                                       fire_reset=True, **SETTINGS)
    draws = 4                       # starts per reset: draws 0..3
    k, draw = 2, 3                  # reset 2, FIRE then 2 NOOPs
    index = k * draws + draw
    played_env = reset_carry.with_ram(
        _one(env.make_params(**SETTINGS).reset_states, 1),
        reset_carry.ram_fills()[1])
    played = wrappers.PreprocessedState(env_state=played_env,
                                        lives=played_env.lives)
    _, state = preprocessing.reset_after(jax.random.key(0), played,
                                         _only(params, index))
    driver = environment._EnvDriver(env, played_env, 0)
    environment.reset_game(env.rules, env.mode, driver, k)
    expected = preprocessing._start_frames(driver.episode_start(), draw,
                                           True, params)[draw]
    assert reset_carry.same_shown(state.env_state, expected)
    assert not reset_carry.same_shown(
        state.env_state, _one(params.reset_states, index))


class _Rules:
    """`games` rules whose setMode loops on SELECT until `done(ram)`."""
    rom_id = "toy"

    def __init__(self, done):
        self.done = done

    def set_mode(self, ops, mode):
        del mode
        ops.press_select(2)
        ops.select_loop(self.done, 1)


def test_a_select_test_that_does_not_run_on_jax_is_not_replayable():
    in_jax = lambda ram: games.core.ram_byte(ram, 0x85) == 3   # noqa: E731
    assert reset_carry.select_test(_Rules(in_jax), 0) is in_jax
    in_python = lambda ram: int(ram[5]) == 3   # noqa: E731
    with pytest.raises(reset_carry.NotReplayable, match="toy's SELECT test"):
        reset_carry.select_test(_Rules(in_python), 0)


def test_a_reset_with_two_select_loops_is_not_replayable():
    recorder = reset_carry.ScriptRecorder()
    for _ in range(2):
        recorder.select_loop(1)
        recorder.frame(0, 2)
        recorder.frame(0, 0)
    with pytest.raises(reset_carry.NotReplayable, match="2 SELECT loops"):
        recorder.script(inputs=None)


def test_start_frames_follow_the_reset_front_padded():
    recorder = reset_carry.ScriptRecorder()
    recorder.frame(0, 1)
    recorder.begin()
    recorder.frame(0, 1)
    recorder.start(2)
    script = reset_carry.followed_by(recorder.script(inputs=None), [1, 0], 6)
    assert np.asarray(script.actions).tolist() == [0, 0, 0, 0, 1, 0]
    assert np.asarray(script.buttons).tolist() == [0, 0, 1, 1, 0, 0]
    assert np.asarray(script.active).tolist() == [False, False] + [True] * 4
    assert np.flatnonzero(np.asarray(script.begin)).tolist() == [3]
    assert np.flatnonzero(np.asarray(script.start)).tolist() == [4]
    assert int(script.loop_at) == -1
    with pytest.raises(ValueError, match="4 frames does not fit in 3"):
        reset_carry.followed_by(recorder.script(inputs=None), [1, 0], 3)
