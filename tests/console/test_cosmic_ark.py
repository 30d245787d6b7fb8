"""Stella's Cosmic Ark missile hack: which ALE games turn it on, and the
one that does (Journey Escape) frame by frame against ale-py.

The TIA's behaviour under the hack is also checked against ale-py by the
`cosmic_ark_m0` feature ROM (tests/test_tia.py). The games whose programs
draw it line by line (`environment.COSMIC_ARK_GAMES`) are checked against
ALE's own TIA state, read from its serialized state.
"""
from __future__ import annotations

import numpy as np
import pytest

from jaxatari import environment, games, parity

pytest.importorskip("ale_py")

FRAMES, EVERY = 1000, 10
TRUE = 0xFAB1FAB2   # Stella's serialized `true`
# `TIA::save` writes its name ("TIA", length-prefixed), then 50 words
# before `myM0CosmicArkMotionEnabled`: 19 ints (clocks, VSYNC ... CTRLPF,
# priority), REFP0/1, PF and the four GRP registers, ENAM0/1, ENABL,
# DENABL, the five HM registers, VDELP0/1, VDELBL, RESMP0/1, collisions,
# the five positions, both current GRPs, the last HMOVE clock and the
# HMOVE-blank flag; each int and bool is 4 bytes.
_TIA_NAME = b"\x03\x00\x00\x00TIA"
_COSMIC_OFFSET = 50 * 4


def _cosmic_ark_on(ale) -> bool:
    """ALE's `myM0CosmicArkMotionEnabled` now."""
    data = bytes(ale.cloneState().serialize())
    at = data.index(_TIA_NAME) + len(_TIA_NAME) + _COSMIC_OFFSET
    return int.from_bytes(data[at:at + 4], "little") == TRUE


def _turns_it_on(game: str) -> bool:
    ale = parity.make_ale(game, 0)
    actions = ale.getMinimalActionSet()
    rng = np.random.RandomState(0)
    for frame in range(FRAMES):
        ale.act(actions[rng.randint(len(actions))])
        if ale.game_over():
            ale.reset_game()
        if frame % EVERY == 0 and _cosmic_ark_on(ale):
            return True
    return False


def test_cosmic_ark_games_are_those_ale_runs_it_for():
    """Over 1,000 random frames per game, only the listed games turn the
    motion on (Journey Escape at once: its starfield)."""
    ale_games = sorted(set(games.GAMES) - set(games.NOT_IN_ALE))
    found = {game for game in ale_games if _turns_it_on(game)}
    assert found == set(environment.COSMIC_ARK_GAMES)


def test_journey_escape_short_parity():
    """Journey Escape (its starfield is the hack; 230 screen rows): RAM,
    screen, reward, game over and lives equal ale-py's after the boot and
    after each of 150 random frames."""
    result = parity.run_many([("journey_escape", 1)], 150)[0]
    assert result["steps"] == 150
    assert result["first_divergence"] is None, result
