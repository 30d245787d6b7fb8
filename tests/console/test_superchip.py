"""Superchip carts in the console: the system generator's draws per reset.

Stella's `System::reset` resets the RIOT (one timer draw), the TIA, then the
cart; a Superchip cart refills its 128 RAM bytes with 128 more draws. So on
such a cart every RIOT timer after the first reset comes from a later draw.
The oracle is ALE's serialized mt19937 state: how many draws it has taken
after `loadROM` and after each `reset_game`. (tests/test_cart.py checks the
RAM bytes themselves against ALE's.)
"""
from __future__ import annotations

import struct

import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import cart as cartlib
from jaxatari import console, parity, system_rng

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


def test_system_reset_fills_cart_ram_and_keeps_riot_ram():
    board = console.make_board(cartlib.load_cartridge("elevator_action"),
                               34, True)
    assert board.features == console.Features(cart_ram=True, rows=210)
    state = console.power_on(board)
    assert not np.asarray(console.cart_ram(state)).any()
    inputs = system_rng.reset_inputs(1, cart_ram=True)
    reset = console.system_reset(board, state, inputs)
    np.testing.assert_array_equal(np.asarray(console.cart_ram(reset)),
                                  np.asarray(inputs.cart_ram))
    np.testing.assert_array_equal(np.asarray(console.ram(reset)),
                                  np.asarray(console.ram(state)))
    assert int(reset.riot.timer) == int(inputs.timer)
    assert np.asarray(reset.segments).tolist() == [4096, 5120, 6144, 7168]


def test_features_and_widening():
    elevator = cartlib.load_cartridge("elevator_action")
    pitfall2 = cartlib.load_cartridge("pitfall2")
    klax = cartlib.load_cartridge("klax")
    seaquest = cartlib.load_cartridge("seaquest")
    assert console.cart_features(seaquest) == console.Features()
    assert console.cart_features(pitfall2) == console.Features(dpc=True)
    assert console.cart_features(klax) == console.Features(cart_ram=True,
                                                           rows=250)
    union = console.union_features([console.cart_features(c) for c in (
        elevator, pitfall2, seaquest)])
    assert union == console.Features(cart_ram=True, dpc=True, rows=210)
    board = console.make_board(seaquest, 34, True)
    wide = console.widen_board(board, union)
    assert wide.features == union
    state = console.power_on(wide)
    assert state.chips.ram.shape == (128,) and state.chips.dpc is not None
    assert not bool(wide.cart.has_ram) and not bool(wide.cart.dpc)
    with pytest.raises(ValueError):
        console.widen_board(wide, console.Features())
    with pytest.raises(ValueError):
        console.make_board(elevator, 34, True, console.Features())
    assert console.power_on(board).chips.ram is None
    assert jnp.asarray(console.cart_ram(console.power_on(board))).shape == (
        128,)
