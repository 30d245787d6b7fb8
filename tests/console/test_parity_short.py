"""Short frame-by-frame parity with ale-py (the CI guard of PARITY.md).

Each game boots as ALE's loadROM does and plays seeded random actions at
frameskip 1; RAM, screen, reward and game over must equal ale-py's after
the reset and after every frame. A single console runs ~5 frames/s on a
2-core CPU, so CI plays a few dozen frames of a few games; the full table
comes from `python -m jaxatari.parity`.
"""
import pytest

from jaxatari import parity

pytest.importorskip("ale_py")

SHORT = {"seaquest": 40, "breakout": 30, "freeway": 30}


@pytest.mark.parametrize("game", sorted(SHORT))
def test_short_parity(game):
    result = parity.run(game, SHORT[game], seed=1)
    assert result["first_divergence"] is None, result
