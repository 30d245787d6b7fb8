"""jaxatari.games.u_to_z against ale-py (see tests/games/harness.py)."""

from __future__ import annotations

from collections.abc import Callable

import jax
import numpy as np
import pytest

from jaxatari import games
from jaxatari.games.core import RIGHT
from tests.games import harness
from tests.games.harness import Plan, game_tests

# Video Cube's and Yars' Revenge's setMode do more than a SELECT loop, and
# Video Pinball's mode byte reads 0 after the reset: their setMode is
# checked by the tests at the end of this file.
harness.CUSTOM_SET_MODE.update({"video_cube", "video_pinball",
                                "yars_revenge"})

CHECKERS_SQUARES = tuple(a for first in (0x80, 0x89, 0x92, 0x9B)
                         for a in range(first, first + 8))
"""The RAM bytes of the 32 dark squares of Video Checkers."""

CUBE_FACES = tuple(range(0xA0, 0xD6))
"""Video Cube's 6 x 9 face colour bytes."""

CUBE_SOLVED = tuple((addr, (addr - 0xA0) // 9) for addr in CUBE_FACES)
"""Pokes that paint every face of the cube one colour, face by face."""

PLANS = {
    "up_n_down": Plan(1, 2000, 5000, pokes=(0x80, 0x81, 0x82, 0x86, 0x94),
                      special=(0, 0x40, 0x41, 0xF0)),
    "venture": Plan(1, 2000, 6000, pokes=(0xC7, 0xC8, 0xC6, 0xCD, 0xBF),
                    special=(0, 0x80, 0xFF), scores=False),
    # White loses its last piece on the last poke: +1 and game over.
    "video_checkers": Plan(1, 2000, 3000, pokes=CHECKERS_SQUARES,
                           special=(0, 0x10, 0x20, 0x90, 0xA0),
                           script=tuple((a, 0x10) for a in CHECKERS_SQUARES),
                           scores=False, ends=False, lives="steady"),
    "video_chess": Plan(1, 2000, 3000, pokes=(0xE1, 0xEE),
                        special=(0, 1, 3, 0x82), scores=False, ends=False,
                        lives="steady"),
    # One face done (+1) and undone (-1), then the whole cube solved. No
    # timer pokes: ALE's cloneState does not keep the timer its rule
    # remembers, so the harness's replays of a timeout would differ (see
    # test_video_cube_timeout instead).
    "video_cube": Plan(1, 2000, 3000, pokes=CUBE_FACES,
                       special=(0, 1, 2, 3, 4, 5),
                       script=CUBE_SOLVED[:9] + ((0xA0, 5),) + CUBE_SOLVED,
                       scores=False, ends=False, lives="steady"),
    "video_pinball": Plan(1, 2000, 6000,
                          pokes=(0xB0, 0xB2, 0xB4, 0xAF, 0x99, 0xA8),
                          special=(0, 1)),
    "wizard_of_wor": Plan(5, 2000, 5000,
                          pokes=(0x86, 0x88, 0x8D, 0xD7, 0xF4),
                          special=(0, 0x80, 0x99, 0xF8)),
    # A reward, then a clock ($CF) at 0 repeats it; once the clock runs
    # again, 3 words ($DC = -1) end the game.
    "word_zapper": Plan(1, 2000, 7200, pokes=(0xDC, 0xDE, 0xCF),
                        special=(0, 1, 0xFF, 0x80),
                        script=((0xDC, 0x05), (0xCF, 0x00), (0xDC, 0xFF))),
    "yars_revenge": Plan(1, 2000, 5000, pokes=(0xE0, 0xE1, 0xE2, 0x9E),
                         special=(0, 0x10)),
    "zaxxon": Plan(1, 2000, 5000, pokes=(0xE8, 0xE9, 0xEA),
                   special=(0, 8), scores=False),
}

(test_rules_match_ale, test_static_facts_match_ale,
 test_mode_shown_matches_ale, test_set_mode_protocol) = game_tests(PLANS)


# ---------------------------------------------------------------------------
# Rules the default-mode recordings cannot reach.


def _scripted_play(game: str, mode: int, script: tuple[tuple[int, int], ...],
                   frames: int = 100, tail: int = 0,
                   ) -> tuple[np.ndarray, np.ndarray]:
    """ALE plays random actions in `mode`, poking `script` one per frame
    after `frames` frames, for up to `tail` more, until the game is over.

    Returns:
        The RAM after the reset and after each frame, and ALE's reward,
        game over and lives after each frame.
    """
    ale = harness.new_ale(game, 1)
    ale.setMode(mode)
    ale.reset_game()
    actions = ale.getMinimalActionSet()
    rng = np.random.default_rng(1)
    rams, outs = [ale.getRAM().copy()], []
    for frame in range(frames + len(script) + tail):
        if 0 <= frame - frames < len(script):
            addr, value = script[frame - frames]
            ale.setRAM(addr - 0x80, value)
        reward = ale.act(actions[rng.integers(len(actions))])
        rams.append(ale.getRAM().copy())
        outs.append((reward, ale.game_over(), ale.lives()))
        if ale.game_over():
            break
    return np.stack(rams), np.array(outs)


def _rules_outputs(game: str, rams: np.ndarray) -> np.ndarray:
    """Our reward, terminal and lives after each frame but the first
    (the post-reset RAM, stepped from `reset_vars()` as the harness does).
    """
    rules = games.GAMES[game]

    def body(vars_: jax.Array, ram: jax.Array) -> tuple:
        reward, terminal, lives, new_vars = rules.step(ram, vars_)
        return new_vars, (reward, terminal.astype(np.int32), lives)

    _, outs = jax.lax.scan(body, rules.reset_vars(), rams)
    return np.stack(jax.device_get(outs), -1)[1:]


@pytest.mark.parametrize(("mode", "piece", "reward"), [
    (1, 0x90, -1), (1, 0x10, 1), (11, 0x90, 1), (11, 0x10, -1)])
def test_video_checkers_outcomes(mode: int, piece: int, reward: int) -> None:
    """Filling the board with one colour ends the game; reverse checkers
    (games 11-19) pays the other way round.

    The board is filled twice over: the game sometimes rewrites a square
    in the frame it is poked.
    """
    script = tuple((addr, piece) for addr in CHECKERS_SQUARES) * 2
    rams, outs = _scripted_play("video_checkers", mode, script)
    np.testing.assert_array_equal(_rules_outputs("video_checkers", rams),
                                  outs)
    assert tuple(outs[-1]) == (reward, 1, 0)


def test_video_cube_timeout() -> None:
    """The timer $DB going from 0xFF to 0 ends the game with reward -1."""
    rams, outs = _scripted_play("video_cube", 0, ((0xDB, 0xFF),) * 20,
                                tail=300)
    np.testing.assert_array_equal(_rules_outputs("video_cube", rams), outs)
    assert tuple(outs[-1]) == (-1, 1, 0)


# ---------------------------------------------------------------------------
# setMode of the games without a `mode_shown`.


class _CountingSelect(harness.FakeOps):
    """SELECT presses shown in one RAM byte, as jaxatari's emulator shows
    them during ALE's reset (`shown(presses)`)."""

    def __init__(self, addr: int, shown: Callable[[int], int]) -> None:
        super().__init__([])
        self.addr, self.shown, self.presses = addr, shown, 0

    def ram(self) -> np.ndarray:
        ram = np.zeros(128, np.uint8)
        ram[self.addr - 0x80] = self.shown(self.presses)
        return ram

    def press_select(self, n: int) -> None:
        self.calls.append(("select", n))
        self.presses += 1


@pytest.mark.parametrize("mode", games.GAMES["yars_revenge"].modes)
def test_yars_revenge_set_mode(mode: int) -> None:
    """One 2-frame SELECT, 1-frame ones until $E3 is the mode, RESET.

    $E3 reads 0x20 after the first press and 0x10 more after each later
    one; the presses are as many as ALE's frame number after its reset.
    """
    ops = _CountingSelect(0xE3, lambda presses: 0x10 * (presses + 1) & 0x70)
    games.GAMES["yars_revenge"].set_mode(ops, mode)
    frames, _ = harness.post_reset("yars_revenge", (mode,))[mode]
    assert ops.calls == ([("select", 2)] + [("select", 1)] * (frames - 1)
                         + [("reset",)])


@pytest.mark.parametrize("mode", games.GAMES["video_pinball"].modes)
def test_video_pinball_set_mode(mode: int) -> None:
    """2-frame SELECT presses until $C1 (presses so far) is the mode."""
    ops = _CountingSelect(0xC1, lambda presses: presses % 4)
    games.GAMES["video_pinball"].set_mode(ops, mode)
    frames, _ = harness.post_reset("video_pinball", (mode,))[mode]
    assert ops.calls == [("select", 2)] * frames + [("reset",)]


class _CubeMenu(harness.FakeOps):
    """Video Cube, one step per call: SELECT adds 1 to the game number - 1
    in the low 5 bits of $FB (18 games), RIGHT 1 to the BCD cube $9F."""

    def __init__(self) -> None:
        super().__init__([])
        self.game, self.cube = 0, 1

    def ram(self) -> np.ndarray:
        ram = np.zeros(128, np.uint8)
        ram[0xFB - 0x80] = 0xC0 | self.game
        ram[0x9F - 0x80] = 16 * (self.cube // 10) + self.cube % 10
        return ram

    def press_select(self, n: int) -> None:
        self.calls.append(("select", n))
        self.game = (self.game + 1) % 18

    def act(self, action: int) -> None:
        super().act(action)
        self.cube = self.cube % 50 + 1 if action == RIGHT else self.cube


_CUBE_MODES = (0, 1, 2, 100, 202, 1301, 5000)


@pytest.mark.parametrize("mode", _CUBE_MODES)
def test_video_cube_set_mode(mode: int) -> None:
    """SELECT (2 frames) to game 1, 3 or 9, RESET, RIGHT to the cube.

    The game (low 5 bits of $FB, game - 1) and the cube (BCD $9F; cube 1
    below mode 100) are those of ALE's post-reset RAM.
    """
    ops = _CubeMenu()
    games.GAMES["video_cube"].set_mode(ops, mode)
    _, ram = harness.post_reset("video_cube", _CUBE_MODES)[mode]
    game = int(ram[0xFB - 0x80]) & 0x1F
    cube = 10 * (int(ram[0x9F - 0x80]) >> 4) + (int(ram[0x9F - 0x80]) & 0xF)
    assert game == (0, 2, 8)[mode % 100]
    assert cube == max(mode // 100, 1)
    assert ops.calls == ([("select", 2)] * game + [("reset",)]
                         + [("act", RIGHT)] * (cube - 1))


@pytest.mark.parametrize("mode", [3, 99, 5100, -1])
def test_video_cube_unknown_mode(mode: int) -> None:
    """Game indices 0-2 and cubes up to 50 only, refused before any frame."""
    ops = _CubeMenu()
    with pytest.raises(ValueError, match="modes are"):
        games.GAMES["video_cube"].set_mode(ops, mode)
    assert not ops.calls
