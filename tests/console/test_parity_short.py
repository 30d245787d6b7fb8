"""Short frame-by-frame parity with ale-py (CI's guard of PARITY.md).

Each Atari-57 game boots as ALE's loadROM does and plays seeded random
actions at frameskip 1; RAM, screen, reward, game over and lives must equal
ale-py's after the reset and after every frame. All 57 run in one
lock-step batch (`jaxatari.lockstep`): the cartridge, display window and
controller are per-console data, so one compiled program serves every game
(split over the devices), and compile time does not grow with the number
of games. Between them they use 2K, 4K, F8, F6, E0 and FE carts, paddles,
HMOVE blanks on and off, and partial frames (Q*bert). Carnival and Pooyan
ride along: their screens have 214 and 220 rows (`Display.Height`); the
third such game, Journey Escape (230), has its own test in
test_cosmic_ark.py, since its program draws the Cosmic Ark motion line by
line. The long table comes from `benchmarks/parity_table.py`.
"""
import pytest

from jaxatari import games, parity

pytest.importorskip("ale_py")

STEPS = 200
SEED = 1
OWN_HEIGHTS = ("carnival", "pooyan")
GAMES = games.ATARI_57 + OWN_HEIGHTS


@pytest.fixture(scope="module")
def results() -> dict:
    runs = [(game, SEED) for game in GAMES]
    return {r["game"]: r for r in parity.run_many(runs, STEPS,
                                                  driver="lockstep")}


@pytest.mark.parametrize("game", GAMES)
def test_short_parity(results, game):
    result = results[game]
    assert result["steps"] == STEPS
    assert result["first_divergence"] is None, result
