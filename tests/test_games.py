"""jaxatari.games against ale-py: rewards, terminals and lives, frame by frame.

For each of the 15 games, ale-py plays seeded random actions from the minimal
action set (biased where a game needs it to score or to end) and records the
RAM after every reset and every `act()`, with ALE's reward, `game_over()` and
`lives()`. `rules.step` then runs over the recorded RAM in one `lax.scan`,
starting each episode from `reset_vars()` stepped once on the post-reset RAM,
and must give ALE's numbers on every frame.

A second phase of each recording pokes random values into the RAM bytes that
hold the score (ALE's `setRAM`) before some frames. ALE's rules read the RAM
at the end of the frame, which is what `getRAM()` returns afterwards, so the
comparison stays exact, and it reaches what random play rarely does: score
wraps, non-BCD digits, knockouts, Enduro's later days, Montezuma's rewards,
Q*bert's second game-over rule (a short scripted poke sequence).

Every frame that ends a game is also redone from the state before it (ALE's
`cloneState`/`restoreState`) with a score byte poked first, which checks
the rules on game-ending frames whose score changed (Q*bert must give 0).
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import games

ale_py = pytest.importorskip("ale_py")
from ale_py import roms  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Plan:
    """How to play one game so that its rules get exercised.

    Attributes:
        seed: ALE's `random_seed` and the action sampler's seed.
        min_frames: play at least this many frames of plain random play...
        max_frames: ...and at most this many, stopping early once a game
            has ended and the next episode has run for 200 frames.
        bias: extra weight for some action ids (default weight 1).
        pokes: RAM addresses ($80-$FF) to poke in the second phase: the
            score bytes, and for some games the bytes behind other rules.
        special: byte values worth poking besides random ones.
        script: (address, value) pokes made on the first frames of the poke
            phase, one per frame, to reach a rule random pokes rarely do.
        poke_frames: frames in the poke phase.
        has_lives: whether the game reports lives (else lives() is 0).
        scores: whether plain random play scores within the frames played.
    """

    seed: int
    min_frames: int
    max_frames: int
    bias: dict[int, float] = dataclasses.field(default_factory=dict)
    pokes: tuple[int, ...] = ()
    special: tuple[int, ...] = ()
    script: tuple[tuple[int, int], ...] = ()
    poke_frames: int = 1500
    has_lives: bool = True
    scores: bool = True


PLANS = {
    "pong": Plan(1, 2000, 6000, pokes=(0x8D, 0x8E), special=(20, 21),
                 has_lives=False),
    "breakout": Plan(1, 2000, 4000, bias={1: 3}, pokes=(0xCC, 0xCD, 0xB9),
                     special=(0, 1, 5)),
    "space_invaders": Plan(1, 2000, 5000, pokes=(0xE6, 0xE8, 0xC9, 0x98),
                           special=(0, 0x80, 0x99)),
    "freeway": Plan(1, 2000, 9000, bias={2: 8}, pokes=(0xE7, 0x96),
                    special=(0, 1), has_lives=False),
    "boxing": Plan(1, 2000, 8000, pokes=(0x90, 0x91, 0x92, 0x93),
                   special=(0, 0xC0, 0x99, 0x9A), has_lives=False),
    "seaquest": Plan(1, 2000, 5000, pokes=(0xB8, 0xB9, 0xBA)),
    "enduro": Plan(1, 2000, 14000, bias={1: 30}, pokes=(0xAB, 0xAC, 0xAD),
                   special=(0, 1, 2, 3, 7), has_lives=False),
    "riverraid": Plan(1, 2000, 5000,
                      pokes=(0xCD, 0xCF, 0xD1, 0xD3, 0xD5, 0xD7),
                      special=(72, 80, 0x58, 0x59)),
    "pitfall": Plan(3, 2000, 5000, pokes=(0xD5, 0xD6, 0xD7)),
    "ms_pacman": Plan(1, 2000, 5000, pokes=(0xF8, 0xF9, 0xFA)),
    # Q*bert's second game-over rule: the lives byte reads 2 after 0xFF.
    "qbert": Plan(1, 2000, 4000, pokes=(0xD9, 0xDA, 0xDB),
                  script=((0x88, 0xFF), (0x88, 0x02))),
    "beam_rider": Plan(1, 2000, 9000, pokes=(0x89, 0x8A, 0x8B)),
    "asteroids": Plan(1, 2000, 6000, pokes=(0xBD, 0xBE), special=(0, 0x99)),
    "montezuma_revenge": Plan(1, 2000, 6000, pokes=(0x93, 0x94, 0x95),
                              scores=False),
    "robotank": Plan(1, 2000, 12000, pokes=(0xB5, 0xB6)),
}


@dataclasses.dataclass
class Trace:
    """What ALE did, one row per recorded RAM (reset rows included).

    `replays` are extra frames, each a redo of a frame that ended a game
    (row `replay_row`), from the state before it, with a score byte poked
    first: they check the rules on a game-ending frame whose score changed.
    """

    ram: np.ndarray        # uint8[T, 128]
    is_reset: np.ndarray   # bool[T]: RAM right after a reset
    poked: np.ndarray      # bool[T]: recorded in the poke phase
    reward: np.ndarray     # int32[T] (0 on reset rows)
    terminal: np.ndarray   # bool[T]
    lives: np.ndarray      # int32[T]
    replay_row: np.ndarray  # int[R]
    replay_ram: np.ndarray  # uint8[R, 128]
    replay_out: np.ndarray  # int[R, 3]: reward, terminal, lives


def _new_ale(game: str, seed: int):
    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
    ale = ale_py.ALEInterface()
    ale.setInt("random_seed", seed)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(roms.get_rom_path(game))
    return ale


def _poke_value(rng: np.random.Generator, special: tuple[int, ...]) -> int:
    """A random byte, a BCD pair, a River Raid digit or a special value."""
    kind = rng.integers(4 if special else 3)
    if kind == 0:
        return int(rng.integers(256))
    if kind == 1:
        tens, ones = rng.integers(10, size=2)
        return int(16 * tens + ones)
    if kind == 2:
        return int(8 * rng.integers(12))
    return special[rng.integers(len(special))]


def _record(game: str, plan: Plan) -> Trace:
    """Plays `game` in ale-py as `plan` says and records every frame."""
    ale = _new_ale(game, plan.seed)
    actions = ale.getMinimalActionSet()
    weights = np.array([plan.bias.get(a.value, 1.0) for a in actions])
    rng = np.random.default_rng(plan.seed)
    rows: list[tuple] = []
    replays: list[tuple] = []

    def record(is_reset: bool, poked: bool, reward: int) -> None:
        rows.append((ale.getRAM().copy(), is_reset, poked, reward,
                     ale.game_over(), ale.lives()))

    def poke() -> None:
        addr = plan.pokes[rng.integers(len(plan.pokes))]
        ale.setRAM(addr - 0x80, _poke_value(rng, plan.special))

    def play(action, poked: bool) -> bool:
        """One frame; on a game over, a poked replay and a reset."""
        before = ale.cloneState()
        record(False, poked, ale.act(action))
        if not ale.game_over():
            return False
        after = ale.cloneState()
        ale.restoreState(before)
        poke()
        reward = ale.act(action)
        replays.append((len(rows) - 1, ale.getRAM().copy(),
                        (reward, ale.game_over(), ale.lives())))
        ale.restoreState(after)
        ale.reset_game()
        record(True, poked, 0)
        return True

    record(True, False, 0)
    frames, since_reset, ended = 0, 0, False
    while frames < plan.max_frames and not (
            ended and frames >= plan.min_frames and since_reset >= 200):
        choice = rng.choice(len(actions), p=weights / weights.sum())
        frames, since_reset = frames + 1, since_reset + 1
        if play(actions[choice], False):
            ended, since_reset = True, 0
    for frame in range(plan.poke_frames):
        if frame < len(plan.script):
            addr, value = plan.script[frame]
            ale.setRAM(addr - 0x80, value)
        elif rng.random() < 0.1:
            poke()
        play(actions[rng.integers(len(actions))], True)
    ram, is_reset, poked, reward, terminal, lives = zip(*rows, strict=True)
    replay_row, replay_ram, replay_out = zip(*replays, strict=True)
    return Trace(np.stack(ram), np.array(is_reset), np.array(poked),
                 np.array(reward, np.int32), np.array(terminal),
                 np.array(lives, np.int32), np.array(replay_row),
                 np.stack(replay_ram), np.array(replay_out, np.int64))


@functools.cache
def _runner(game: str):
    """`rules.step` scanned over a RAM sequence, restarting at resets."""
    rules = games.GAMES[game]

    def body(vars_, xs):
        ram, is_reset = xs
        vars_ = jnp.where(is_reset, rules.reset_vars(), vars_)
        reward, terminal, lives, new_vars = rules.step(ram, vars_)
        return new_vars, (reward, terminal, lives, vars_)

    @jax.jit
    def run(ram, is_reset):
        return jax.lax.scan(body, rules.reset_vars(), (ram, is_reset))[1]

    return run


def _first_mismatch(name: str, ours: np.ndarray, theirs: np.ndarray,
                    mask: np.ndarray, trace: Trace) -> str | None:
    bad = np.flatnonzero(mask & (ours != theirs))
    if not bad.size:
        return None
    t = int(bad[0])
    return (f"{name}: {bad.size} frames differ, first at row {t} "
            f"(reset={trace.is_reset[t]}, poked phase={trace.poked[t]}): "
            f"ours {ours[t]}, ALE {theirs[t]}")


@pytest.mark.parametrize("game", sorted(PLANS))
def test_rules_match_ale(game: str) -> None:
    """reward, terminal and lives equal ALE's on every recorded frame."""
    rules, plan = games.GAMES[game], PLANS[game]
    trace = _record(game, plan)
    reward, terminal, lives, vars_in = jax.device_get(
        _runner(game)(trace.ram, trace.is_reset))
    played = ~trace.is_reset
    problems = [
        _first_mismatch("reward", reward, trace.reward, played, trace),
        _first_mismatch("terminal", terminal, trace.terminal, True, trace),
        _first_mismatch("lives", lives, trace.lives, True, trace),
    ]
    assert not [p for p in problems if p], problems

    # The same frames at once, vmapped or with a leading batch axis.
    step = jax.jit(jax.vmap(rules.step))
    for batched in (step(trace.ram, vars_in),
                    jax.jit(rules.step)(trace.ram, vars_in)):
        again = jax.device_get(batched)
        for ours, theirs in zip((reward, terminal, lives), again[:3],
                                strict=True):
            np.testing.assert_array_equal(ours, theirs)
        carried = ~trace.is_reset[1:]  # new vars are the next frame's vars
        np.testing.assert_array_equal(again[3][:-1][carried],
                                      vars_in[1:][carried])

    # Game-ending frames redone with a poked score.
    replayed = jax.device_get(
        step(trace.replay_ram, vars_in[trace.replay_row])[:3])
    np.testing.assert_array_equal(np.stack(replayed, -1), trace.replay_out)

    # The plain random play itself saw what the game can produce.
    plain = played & ~trace.poked
    assert trace.is_reset[1:][~trace.poked[1:]].any(), "no game over"
    assert (trace.reward[plain] != 0).any() == plan.scores
    lost = np.diff(trace.lives)[~trace.is_reset[1:] & ~trace.poked[1:]] < 0
    assert lost.any() == plan.has_lives
    assert (trace.lives == 0).all() != plan.has_lives
    # ...and the poke phase produced rewards (and a game over if scripted).
    assert (trace.reward[trace.poked & played] != 0).any()
    if plan.script:
        first = np.flatnonzero(trace.poked)[len(plan.script) - 1]
        assert trace.terminal[first], "the scripted pokes did not end the game"


@pytest.mark.parametrize("game", sorted(PLANS))
def test_static_facts_match_ale(game: str) -> None:
    """Action set, modes and difficulties are ALE's; defaults are in them."""
    rules = games.GAMES[game]
    ale = _new_ale(game, 0)
    assert rules.rom_id == game
    assert rules.minimal_actions == tuple(
        a.value for a in ale.getMinimalActionSet())
    assert rules.modes == tuple(ale.getAvailableModes())
    assert rules.difficulties == tuple(ale.getAvailableDifficulties())
    assert rules.default_mode == rules.modes[0]
    assert rules.default_difficulty in rules.difficulties
    assert set(rules.starting_actions) <= set(range(18))
    assert rules.reset_vars().shape == (rules.num_vars,)
    assert rules.reset_vars().dtype == jnp.int32


# (mode byte addresses, wanted bytes) per game with a setMode override.
def _mode_bytes(game: str, mode: int) -> dict[int, int]:
    if game == "ms_pacman":
        return {0x99: 1, 0xA1: 1} if mode == 0 else {0x99: mode, 0xA1: 0}
    addr = {"pong": 0x96, "breakout": 0xB2, "space_invaders": 0xDC,
            "freeway": 0x80, "asteroids": 0x80}[game]
    return {addr: mode}


MODE_GAMES = ("pong", "breakout", "space_invaders", "freeway", "ms_pacman",
              "asteroids")


@pytest.mark.parametrize("game", MODE_GAMES)
def test_mode_bytes_match_ale(game: str) -> None:
    """After ALE's reset in mode m, RAM shows what our set_mode waits for."""
    rules = games.GAMES[game]
    ale = _new_ale(game, 0)
    for mode in rules.modes:
        ale.setMode(mode)
        ale.reset_game()
        ram = ale.getRAM()
        for addr, want in _mode_bytes(game, mode).items():
            assert ram[addr - 0x80] == want, (mode, hex(addr))


class FakeOps:
    """A `ResetOps` whose SELECT cycles the mode bytes through a list."""

    def __init__(self, game: str, cycle: list[int]):
        self.game, self.cycle, self.index = game, cycle, 0
        self.calls: list[tuple] = []

    def ram(self) -> np.ndarray:
        ram = np.zeros(128, np.uint8)
        for addr, value in _mode_bytes(self.game,
                                       self.cycle[self.index]).items():
            ram[addr - 0x80] = value
        return ram

    def press_select(self, n: int) -> None:
        self.calls.append(("select", n))
        self.index = (self.index + 1) % len(self.cycle)

    def soft_reset(self) -> None:
        self.calls.append(("reset",))

    def act(self, action: int) -> None:
        self.calls.append(("act", action))


PRESS_FRAMES = {"pong": 2, "breakout": 1, "space_invaders": 2, "freeway": 1,
                "ms_pacman": 10, "asteroids": 2}


@pytest.mark.parametrize("game", sorted(PLANS))
def test_set_mode_protocol(game: str) -> None:
    """set_mode presses SELECT until the mode shows, then resets once."""
    rules = games.GAMES[game]
    with pytest.raises(ValueError):
        rules.set_mode(FakeOps(game, [0]), 999)
    if game not in MODE_GAMES:
        ops = FakeOps(game, [0])
        rules.set_mode(ops, 0)
        assert ops.calls == []
        return
    modes = list(rules.modes)
    for target in (modes[0], modes[-1]):
        ops = FakeOps(game, modes)
        rules.set_mode(ops, target)
        presses = modes.index(target)
        assert ops.calls == ([("select", PRESS_FRAMES[game])] * presses
                             + [("reset",)])


@pytest.mark.parametrize("game", sorted(PLANS))
def test_lookup_names(game: str) -> None:
    """ROM ids, Gymnasium stems and ids of every form find the game."""
    rules = games.GAMES[game]
    stem = rules.ale_name
    assert stem == game.title().replace("_", "")  # ale-py's rom_id_to_name
    for name in (game, stem, stem.lower(), f"ALE/{stem}-v5",
                 f"{stem}NoFrameskip-v4", f"{stem}-v4", f"{stem}-v0",
                 f"{stem}NoFrameskip-v0"):
        assert games.lookup(name) is rules, name


@pytest.mark.parametrize("name", ["tetris", "ALE/Tetris-v5", "", "Pong-v",
                                  "ALE/pong/v5", "alien"])
def test_lookup_unknown(name: str) -> None:
    """An unknown name is a ValueError that lists the games and the fix."""
    with pytest.raises(ValueError) as error:
        games.lookup(name)
    message = str(error.value)
    assert repr(name) in message
    assert "space_invaders" in message and "ALE/SpaceInvaders-v5" in message
    assert "jaxatari/games.py" in message


def test_rules_are_hashable_static_args() -> None:
    """GameRules can be a static argument of jit (frozen, hashable)."""
    rules = games.lookup("breakout")
    step = jax.jit(lambda r, ram, v: r.step(ram, v), static_argnums=0)
    reward, terminal, lives, new_vars = step(
        rules, jnp.zeros(128, jnp.uint8), rules.reset_vars())
    assert (int(reward), bool(terminal), int(lives)) == (0, False, 0)
    assert new_vars.shape == (rules.num_vars,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.ystart = 0  # type: ignore[misc]
