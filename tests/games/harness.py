"""Differential checks of `jaxatari.games` against ale-py, shared by the
per-module test files.

For each game, ale-py plays seeded random actions from the minimal action
set (biased where a game needs it to score or to end) and records the RAM
after every reset and every `act()`, with ALE's reward, `game_over()` and
`lives()`. `rules.step` then runs over the recorded RAM in one `lax.scan`,
starting each episode from `reset_vars()` stepped once on the post-reset
RAM, and must give ALE's numbers on every frame.

A second phase of each recording pokes random values into the RAM bytes that
hold the score (ALE's `setRAM`) before some frames. ALE's rules read the RAM
at the end of the frame, which is what `getRAM()` returns afterwards, so the
comparison stays exact, and it reaches what random play rarely does: score
wraps, non-BCD digits, knockouts, later levels, rare game-over rules (a
short scripted poke sequence).

Every frame that ends a game is also redone from the state before it (ALE's
`cloneState`/`restoreState`) with a score byte poked first, which checks
the rules on game-ending frames whose score changed.

A test module declares `PLANS = {rom_id: Plan(...)}` and gets its tests
from `game_tests(PLANS)`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import games
from jaxatari.games.core import RESET

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
        lives: what the game's `lives()` does in the recording:
            "lost": plain random play loses lives; "none": always 0;
            "steady": ALE's base rule, 1 until the game is over and
            `lives_when_over` then, with no game over in plain play (the
            pokes end games); "poked": a real count that only the pokes
            lower (random play never loses a life in the frames played).
        lives_when_over: with "steady", lives() once the game is over.
        scores: whether plain random play scores within the frames played.
        ends: whether plain random play reaches a game over within
            `max_frames` (some games never end, or not by random play).
    """

    seed: int
    min_frames: int
    max_frames: int
    bias: dict[int, float] = dataclasses.field(default_factory=dict)
    pokes: tuple[int, ...] = ()
    special: tuple[int, ...] = ()
    script: tuple[tuple[int, int], ...] = ()
    poke_frames: int = 1500
    lives: str = "lost"
    lives_when_over: int = 0
    scores: bool = True
    ends: bool = True


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


def new_ale(game: str, seed: int):
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


def record(game: str, plan: Plan) -> Trace:
    """Plays `game` in ale-py as `plan` says and records every frame."""
    ale = new_ale(game, plan.seed)
    actions = ale.getMinimalActionSet()
    weights = np.array([plan.bias.get(a.value, 1.0) for a in actions])
    rng = np.random.default_rng(plan.seed)
    rows: list[tuple] = []
    replays: list[tuple] = []

    def keep(is_reset: bool, poked: bool, reward: int) -> None:
        rows.append((ale.getRAM().copy(), is_reset, poked, reward,
                     ale.game_over(), ale.lives()))

    def poke() -> None:
        addr = plan.pokes[rng.integers(len(plan.pokes))]
        ale.setRAM(addr - 0x80, _poke_value(rng, plan.special))

    def play(action, poked: bool) -> bool:
        """One frame; on a game over, a poked replay and a reset."""
        before = ale.cloneState()
        keep(False, poked, ale.act(action))
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
        keep(True, poked, 0)
        return True

    keep(True, False, 0)
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
    if replays:
        replay_row, replay_ram, replay_out = zip(*replays, strict=True)
    else:
        replay_row, replay_ram, replay_out = (), (), ()
    return Trace(np.stack(ram), np.array(is_reset), np.array(poked),
                 np.array(reward, np.int32), np.array(terminal),
                 np.array(lives, np.int32), np.array(replay_row, np.int64),
                 np.asarray(replay_ram, np.uint8).reshape(-1, 128),
                 np.array(replay_out, np.int64).reshape(-1, 3))


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




def check_rules_match_ale(game: str, plan: Plan) -> None:
    """reward, terminal and lives equal ALE's on every recorded frame."""
    rules = games.GAMES[game]
    trace = record(game, plan)
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
    if trace.replay_row.size:
        replayed = jax.device_get(
            step(trace.replay_ram, vars_in[trace.replay_row])[:3])
        np.testing.assert_array_equal(np.stack(replayed, -1),
                                      trace.replay_out)
    _check_plan_claims(trace, plan)


def _check_plan_claims(trace: Trace, plan: Plan) -> None:
    """The recording saw what the plan says the game produces."""
    plain = ~trace.is_reset & ~trace.poked
    poked = trace.poked & ~trace.is_reset
    if plan.ends:
        assert trace.is_reset[1:][~trace.poked[1:]].any(), "no game over"
    assert (trace.reward[plain] != 0).any() == plan.scores
    if plan.pokes:  # the poke phase produced rewards
        assert (trace.reward[poked] != 0).any()
    if plan.script:
        first = np.flatnonzero(trace.poked)[len(plan.script) - 1]
        assert trace.terminal[first], "the scripted pokes did not end the game"
    _LIVES_CLAIMS[plan.lives](trace, plan)


def _lives_lost(trace: Trace, plan: Plan) -> None:
    lost = np.diff(trace.lives)[~trace.is_reset[1:] & ~trace.poked[1:]] < 0
    assert lost.any(), "plain play lost no life"


def _no_lives(trace: Trace, plan: Plan) -> None:
    assert (trace.lives == 0).all()


def _steady_lives(trace: Trace, plan: Plan) -> None:
    """ALE's base `lives()`: 1, or `lives_when_over` once it is over; the
    pokes end a game at least once."""
    assert not plan.ends
    assert not trace.is_reset[1:][~trace.poked[1:]].any(), \
        "plain play ended a game"
    np.testing.assert_array_equal(
        trace.lives, np.where(trace.terminal, plan.lives_when_over, 1))
    assert trace.terminal[trace.poked & ~trace.is_reset].any(), \
        "the pokes never ended the game"


def _lives_lost_to_pokes(trace: Trace, plan: Plan) -> None:
    """Lives drop in the poke phase only, and are not 0 throughout."""
    dropped = (np.diff(trace.lives) < 0) & ~trace.is_reset[1:]
    assert not (dropped & ~trace.poked[1:]).any()
    assert (dropped & trace.poked[1:]).any()
    assert (trace.lives != 0).any()


_LIVES_CLAIMS = {"lost": _lives_lost, "none": _no_lives,
                 "steady": _steady_lives, "poked": _lives_lost_to_pokes}


def check_static_facts(game: str) -> None:
    """Action set, modes and difficulties are ALE's; defaults are in them."""
    rules = games.GAMES[game]
    ale = new_ale(game, 0)
    assert rules.rom_id == game
    # ale-py's `registration.rom_id_to_name` (which needs gymnasium).
    assert rules.ale_name == game.title().replace("_", "")
    assert rules.minimal_actions == tuple(
        a.value for a in ale.getMinimalActionSet())
    assert rules.modes == tuple(ale.getAvailableModes())
    assert rules.difficulties == tuple(ale.getAvailableDifficulties())
    assert rules.height == ale.getScreen().shape[0]   # 250 for PAL ROMs
    assert rules.legal_actions == tuple(
        a.value for a in ale.getLegalActionSet())
    assert rules.default_mode in rules.modes
    # ALE starts every game at difficulty 0, listed or not (Backgammon).
    assert (rules.default_difficulty in rules.difficulties
            or rules.default_difficulty == 0)
    assert set(rules.starting_actions) <= set(range(18)) | {RESET}
    assert rules.reset_vars().shape == (rules.num_vars,)
    assert rules.reset_vars().dtype == jnp.int32


@functools.cache
def post_reset(game: str,
               modes: tuple[int, ...] | None = None,
               ) -> dict[int, tuple[int, np.ndarray]]:
    """ALE's episode frame number and RAM after `setMode(m)` +
    `reset_game()`, for every mode (one ALE going through them in order).

    ALE counts one episode frame per `pressSelect` and per `act()` of a
    setMode, so the frame number tells how many of those the reset made.
    """
    ale = new_ale(game, 0)
    after = {}
    for mode in games.GAMES[game].modes if modes is None else modes:
        ale.setMode(mode)
        ale.reset_game()
        after[mode] = (ale.getEpisodeFrameNumber(), ale.getRAM().copy())
    return after


def post_reset_rams(game: str) -> dict[int, np.ndarray]:
    """ALE's RAM right after `setMode(m)` + `reset_game()`, for every mode."""
    return {mode: ram for mode, (_, ram) in post_reset(game).items()}


def reset_frame_numbers(game: str) -> dict[int, int]:
    """ALE's episode frame number right after its reset, for every mode."""
    return {mode: frames for mode, (frames, _) in post_reset(game).items()}


def rams_showing(addr: int, values: list[int]) -> list[np.ndarray]:
    """RAMs, all zero but byte `addr`, which takes `values` in turn (one
    per SELECT press of a fake `ResetOps`)."""
    rams = []
    for value in values:
        ram = np.zeros(128, np.uint8)
        ram[addr & 0x7F] = value
        rams.append(ram)
    return rams


def check_mode_shown(game: str) -> None:
    """After ALE's reset in mode m, RAM passes `mode_shown(ram, m)` only."""
    rules = games.GAMES[game]
    rams = post_reset_rams(game)
    for mode, ram in rams.items():
        assert rules.mode_shown(ram, mode), mode
        others = [m for m in rules.modes if m != mode
                  and rules.mode_shown(ram, m)]
        assert not others, (mode, others)


class FakeOps:
    """A `ResetOps` whose SELECT steps through recorded RAMs in turn."""

    def __init__(self, rams: list[np.ndarray]):
        self.rams, self.index = rams, 0
        self.calls: list[tuple] = []

    def ram(self) -> np.ndarray:
        return self.rams[self.index]

    def press_select(self, n: int) -> None:
        self.calls.append(("select", n))
        self.index = (self.index + 1) % len(self.rams)

    def soft_reset(self) -> None:
        self.calls.append(("reset",))

    def act(self, action: int) -> None:
        self.calls.append(("act", action))


def check_set_mode_protocol(game: str) -> None:
    """A polling set_mode presses SELECT until the mode shows, then resets.

    SELECT here steps through ALE's post-reset RAMs in the order of
    `modes`, which is the order the games cycle through them.
    """
    rules = games.GAMES[game]
    with pytest.raises(ValueError, match="modes are"):
        rules.set_mode(FakeOps([np.zeros(128, np.uint8)]), 999)
    if rules.mode_shown is None:
        assert len(rules.modes) == 1 or game in CUSTOM_SET_MODE, (
            "a game with modes needs mode_shown or its own set_mode test")
        return
    rams = post_reset_rams(game)
    modes = list(rules.modes)
    for target in (modes[0], modes[-1]):
        ops = FakeOps([rams[m] for m in modes])
        rules.set_mode(ops, target)
        selects = ops.calls[:-1]
        assert ops.calls[-1] == ("reset",)
        assert len(selects) == modes.index(target)
        assert len({call for call in selects}) <= 1


CUSTOM_SET_MODE: set[str] = set()
"""Games whose set_mode does more than poll RAM; their test modules check
it themselves and add the game here."""


def game_tests(plans: dict[str, Plan]) -> tuple[Callable[[str], None], ...]:
    """The per-game tests for a module's `PLANS`, to assign at module level.

    Returns `(test_rules_match_ale, test_static_facts_match_ale,
    test_mode_shown_matches_ale, test_set_mode_protocol)`.
    """
    params = pytest.mark.parametrize("game", sorted(plans))
    with_modes = pytest.mark.parametrize(
        "game", sorted(g for g in plans
                       if games.GAMES[g].mode_shown is not None))

    @params
    def test_rules_match_ale(game: str) -> None:
        check_rules_match_ale(game, plans[game])

    @params
    def test_static_facts_match_ale(game: str) -> None:
        check_static_facts(game)

    @with_modes
    def test_mode_shown_matches_ale(game: str) -> None:
        check_mode_shown(game)

    @params
    def test_set_mode_protocol(game: str) -> None:
        check_set_mode_protocol(game)

    return (test_rules_match_ale, test_static_facts_match_ale,
            test_mode_shown_matches_ale, test_set_mode_protocol)
