"""Superchip carts in the console: a system reset fills the cart RAM
from the reset's draws (`jaxatari.system_rng`, tested against ALE in
tests/test_system_rng.py), and boards carry the features their carts need.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import cart as cartlib
from jaxatari import console, system_rng

pytest.importorskip("ale_py")


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
