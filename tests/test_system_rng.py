"""`jaxatari.system_rng`: Stella's system generator's draws per reset.

Stella's `System::reset` resets the RIOT (one timer draw), the TIA, then the
cart; a Superchip cart refills its 128 RAM bytes with 128 more draws. So on
such a cart every RIOT timer after the first reset comes from a later draw.
The oracle is ALE's serialized mt19937 state: how many draws it has taken
after `loadROM` and after each `reset_game`. (tests/test_cart.py checks the
RAM bytes themselves against ALE's.)
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

from jaxatari import cart as cartlib
from jaxatari import parity, system_rng

pytest.importorskip("ale_py")


def _string(data: bytes, at: int) -> tuple[bytes, int]:
    (length,) = struct.unpack_from("<i", data, at)
    return data[at + 4:at + 4 + length], at + 4 + length


def _draws_taken(ale) -> int:
    """How many outputs ALE's system generator has given, from its state:
    the ALEState header (6 ints), then the emulator's string: the md5,
    "System", the cycle count and the generator's text state."""
    outer = ale.cloneState().serialize()
    inner, _ = _string(outer, 6 * 4)
    _, at = _string(inner, 0)               # md5
    name, at = _string(inner, at)
    assert name == b"System"
    text, _ = _string(inner, at + 4)        # after the cycle count
    words = [int(w) for w in text.split()]
    key, position = words[:624], words[624]
    generator = np.random.RandomState(system_rng.SYSTEM_SEED)
    for taken in range(4000):
        state = generator.get_state()
        if state[2] == position and list(state[1]) == key:
            return taken
        generator._bit_generator.random_raw(1)
    raise AssertionError("generator state not found")


@pytest.mark.parametrize("game,cart_ram", [("elevator_action", True),
                                           ("pitfall2", False)])
def test_draws_per_reset_match_ale(game, cart_ram):
    """After reset k the generator has given the index of reset k's first
    draw plus that reset's draws (1, or 129 with Superchip RAM)."""
    assert cartlib.load_cartridge(game).has_ram == cart_ram
    per_reset = 1 + (128 if cart_ram else 0)
    ale = parity.make_ale(game, 0)
    for resets in (3, 4, 5):        # loadROM ends with reset 3
        if resets > 3:
            ale.reset_game()
        first = system_rng.reset_draw_index(resets, cart_ram)
        assert _draws_taken(ale) == first + per_reset
        timer = int(system_rng.reset_inputs(resets, cart_ram).timer)
        assert timer == system_rng.reset_timer(resets, cart_ram)
        assert timer == system_rng.riot_timer(
            system_rng.system_draws(first + 1)[first])


def test_reset_inputs_values():
    draws = system_rng.system_draws(800)
    plain = system_rng.reset_inputs(2)
    assert int(plain.timer) == 25 + draws[130] % 75
    assert not np.asarray(plain.cart_ram).any() and not bool(plain.pal)
    superchip = system_rng.reset_inputs(2, cart_ram=True, pal=True)
    assert int(superchip.timer) == 25 + draws[258] % 75
    assert np.asarray(superchip.cart_ram).tolist() == (
        draws[259:387] & 0xFF).tolist()
    assert bool(superchip.pal)
    with pytest.raises(ValueError):
        system_rng.reset_inputs(0)
