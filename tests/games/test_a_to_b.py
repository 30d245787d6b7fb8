"""jaxatari.games.a_to_b against ale-py (see tests/games/harness.py).

Beyond the shared harness:

* Adventure, Backgammon and Blackjack keep ALE's steady lives (1 while
  playing; once over, Adventure stays at 1 and the other two read 0), and
  random play never ends them: the pokes do. Backgammon gets two scripted
  plans, one per winner.
* The games whose `setMode` is not a plain SELECT loop checked against
  post-reset RAM (Adventure, Air Raid, Backgammon, Basic Math, Berzerk)
  have their SELECT/NOOP/RESET sequences checked here, against ALE's
  frame counter after its reset in every mode.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from jaxatari import games
from jaxatari.games.a_to_b import ENVIRONMENT_RNG_METHOD, berzerk_mode_shown
from tests.games import harness
from tests.games.harness import FakeOps, Plan, game_tests

harness.CUSTOM_SET_MODE.update(
    {"adventure", "air_raid", "backgammon", "basic_math", "berzerk"})

PLANS = {
    "air_raid": Plan(1, 2000, 6000, pokes=(0xA8, 0xA9, 0xAA, 0xA7),
                     special=(0, 0xFF)),
    "alien": Plan(1, 2000, 6000,
                  pokes=(0x83, 0x85, 0x87, 0x89, 0x8B, 0xC0),
                  special=(0, 0x80, 0x48)),
    "amidar": Plan(1, 2000, 5000, pokes=(0xD9, 0xDA, 0xDB, 0xD6),
                   special=(0, 0x80, 0x81), scores=False),
    "assault": Plan(1, 2000, 6000, pokes=(0x80, 0x81, 0x82, 0xE5),
                    special=(0,)),
    "asterix": Plan(1, 2000, 4000, pokes=(0xDE, 0xDF, 0xE0, 0xC7, 0xD3),
                    special=(0, 1, 0x11)),
    "asteroids": Plan(1, 2000, 6000, pokes=(0xBD, 0xBE), special=(0, 0x99)),
    # $F1 (lives) is rewritten every frame, so only play ends the game.
    "atlantis": Plan(1, 2000, 5500, bias={0: 10}, pokes=(0xA1, 0xA2, 0xA3),
                     special=(0, 0x99)),
    "atlantis2": Plan(1, 2000, 5000, pokes=(0xA1, 0xA2, 0xA3),
                      special=(0, 0x99)),
    "bank_heist": Plan(1, 2000, 5000, pokes=(0xD8, 0xD9, 0xDA, 0xCE, 0xD5),
                       special=(0, 1)),
    "basic_math": Plan(1, 2000, 4000, pokes=(0x84, 0x86), special=(0,),
                       scores=False),
    "battle_zone": Plan(1, 2000, 5000, pokes=(0x9D, 0x9E, 0xBA),
                        special=(0, 0xA0, 0xAA, 0x0A)),
    "beam_rider": Plan(1, 2000, 9000, pokes=(0x89, 0x8A, 0x8B)),
    "berzerk": Plan(1, 2000, 4000, pokes=(0xDD, 0xDE, 0xDF, 0xDA),
                    special=(0, 0xFF)),
    "bowling": Plan(1, 2000, 3000, pokes=(0xA1, 0xA6, 0xA4),
                    special=(0x10, 0x11), lives="none", ends=False),
    "boxing": Plan(1, 2000, 8000, pokes=(0x90, 0x91, 0x92, 0x93),
                   special=(0, 0xC0, 0x99, 0x9A), lives="none"),
    "breakout": Plan(1, 2000, 4000, bias={1: 3}, pokes=(0xCC, 0xCD, 0xB9),
                     special=(0, 1, 5)),
}

(test_rules_match_ale, test_static_facts_match_ale,
 test_mode_shown_matches_ale, test_set_mode_protocol) = game_tests(PLANS)


# ---------------------------------------------------------------------------
# Adventure, Backgammon, Blackjack: steady lives.

_BACKGAMMON_POINTS = tuple(range(0x81, 0x8E)) + tuple(range(0x8F, 0x9C))


def _backgammon_script(won: bool) -> tuple[tuple[int, int], ...]:
    """Pokes that end a Backgammon game, one side winning, on the last one.

    Every point is cleared but one, which holds all 15 pieces of the side
    that loses; the winner's borne-off count comes last, so that the piece
    counts add up (and the game ends) only on the last frame.
    """
    loser_point = (0x81, 15 if won else 0xF1)  # computer > 0, player < 0
    clear = tuple((addr, 0) for addr in _BACKGAMMON_POINTS
                  if addr != loser_point[0])
    finish = ((0x8E, 0), (0x80, 0xF1)) if won else ((0x80, 0), (0x8E, 15))
    return clear + (loser_point,) + finish


STEADY_LIVES_PLANS = {
    "adventure": Plan(1, 3000, 3000, pokes=(0xB9, 0xE0), special=(0x12, 2),
                      scores=False, ends=False, lives="steady",
                      lives_when_over=1),
    "backgammon": Plan(1, 300, 300, pokes=_BACKGAMMON_POINTS + (0x80, 0x8E),
                       special=(0, 15, 0xF1, 0x80, 0x7F),
                       script=_backgammon_script(won=True),
                       scores=False, ends=False, lives="steady"),
    # A bust: $89 reads 0xBB, then $86 0x0B.
    "blackjack": Plan(1, 2000, 3000, pokes=(0x86, 0x89),
                      special=(0x0B, 0xBB, 0x10, 0x09, 0x99),
                      script=((0x89, 0xBB), (0x86, 0x0B)), ends=False,
                      lives="steady"),
}
_BACKGAMMON_LOST = dataclasses.replace(
    STEADY_LIVES_PLANS["backgammon"], seed=2,
    script=_backgammon_script(won=False))

# None of the three has a mode_shown test.
(test_rules_match_ale_steady_lives, test_static_facts_steady_lives, _,
 test_set_mode_protocol_steady_lives) = game_tests(STEADY_LIVES_PLANS)


def test_backgammon_lost_game_rules_match_ale() -> None:
    """Backgammon's other ending: the computer wins."""
    harness.check_rules_match_ale("backgammon", _BACKGAMMON_LOST)


# ---------------------------------------------------------------------------
# setMode sequences.


def _select_sequences() -> dict[str, tuple[list[np.ndarray], list[int]]]:
    """Per game: the RAM its mode byte goes through as SELECT is pressed
    (made up to fit ALE's counts, see below), and the SELECT press lengths
    ALE uses (the first press, then the others).

    Air Raid starts every reset at game 1 and its first press is made
    whatever RAM shows; Basic Math's $C5 reads 0x0A after a reset and
    counts 1, 2, ... from there; Backgammon's $DC reads 3 after two presses;
    Berzerk ignores SELECT for seven presses after its 20 NOOPs, then
    steps through its games.
    """
    berzerk = harness.post_reset_rams("berzerk")
    return {
        "air_raid": (harness.rams_showing(0xAA, list(range(1, 9))), [20, 10]),
        "backgammon": (harness.rams_showing(0xDC, [0, 0, 3]), [1, 1]),
        "basic_math": (harness.rams_showing(0xC5, [0x0A] + list(range(1, 9))),
                       [2, 2]),
        "berzerk": ([berzerk[1]] * 7 + list(berzerk.values()), [2, 2]),
    }


@pytest.mark.parametrize("game", ["air_raid", "backgammon", "basic_math",
                                  "berzerk"])
def test_set_mode_makes_ale_presses(game: str) -> None:
    """SELECT presses (and NOOPs) as many as ALE's reset makes, then RESET.

    The mode bytes step through made-up RAM (`_select_sequences`) that
    fits ALE's frame counts; that the count is ALE's in every mode checks
    the loop and its order of presses, polls and the final RESET.
    """
    rams, (first, then) = _select_sequences()[game]
    noops = 20 if game == "berzerk" else 0
    for mode, frames in harness.reset_frame_numbers(game).items():
        ops = FakeOps(rams)
        games.GAMES[game].set_mode(ops, mode)
        assert ops.calls[:noops] == [("act", 0)] * noops
        presses = ops.calls[noops:-1]
        assert ops.calls[-1] == ("reset",)
        assert noops + len(presses) == frames, mode
        assert presses[:1] in ([], [("select", first)])
        assert presses[1:] == [("select", then)] * (len(presses) - 1)


def test_berzerk_mode_byte_matches_ale() -> None:
    """After ALE's reset in mode m, $80 shows m (and no other mode)."""
    modes = games.GAMES["berzerk"].modes
    for mode, ram in harness.post_reset_rams("berzerk").items():
        shown = [m for m in modes if berzerk_mode_shown(ram, m)]
        assert shown == [mode]


class _RngOps(FakeOps):
    """`FakeOps` that also draws from an mt19937 as ALE's environment RNG."""

    def __init__(self, rams: list[np.ndarray], seed: int):
        super().__init__(rams)
        self.rng = np.random.RandomState(seed)._bit_generator

    def environment_rng_next(self) -> int:
        return int(self.rng.random_raw())


def test_adventure_set_mode_holds_select_for_drawn_frames() -> None:
    """Each press lasts 2 + (draw % 256) frames and a NOOP follows it."""
    assert _RngOps.environment_rng_next.__name__ == ENVIRONMENT_RNG_METHOD
    rams = harness.post_reset_rams("adventure")
    draws = np.random.RandomState(5)._bit_generator.random_raw(2)
    ops = _RngOps([rams[m] for m in (0, 1, 2)], 5)
    games.GAMES["adventure"].set_mode(ops, 2)
    assert ops.calls == [("select", 2 + int(draws[0]) % 256), ("act", 0),
                         ("select", 2 + int(draws[1]) % 256), ("act", 0),
                         ("reset",)]
    plain = FakeOps([rams[0]])
    games.GAMES["adventure"].set_mode(plain, 0)
    assert plain.calls == [("reset",)]
    with pytest.raises(NotImplementedError, match=ENVIRONMENT_RNG_METHOD):
        games.GAMES["adventure"].set_mode(FakeOps([rams[0]]), 1)


def _mt19937_text(rng) -> bytes:
    """An mt19937's state as C++ streams write it: 624 words, the index."""
    state = rng.state["state"]
    words = " ".join(str(int(word)) for word in state["key"])
    return f"{words} {state['pos']}".encode()


@pytest.mark.parametrize("seed", [0, 3])
def test_adventure_reset_draws_from_environment_rng(seed: int) -> None:
    """ALE's reset into game 3 draws 3 numbers per press: 1 for the hold,
    2 for the NOOP action's sticky-action tests (and nothing else)."""
    ale = harness.new_ale("adventure", seed)
    ale.setMode(2)
    ale.reset_game()
    frames = ale.getEpisodeFrameNumber()
    assert frames % 2 == 0 and frames > 0
    rng = np.random.RandomState(seed)._bit_generator
    rng.random_raw(3 * frames // 2)
    state = bytes(ale.cloneState(include_rng=True).serialize())
    assert _mt19937_text(rng) in state
