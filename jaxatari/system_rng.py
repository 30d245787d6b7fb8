"""Stella's system random generator, as a console's resets draw from it.

Stella seeds one generator (mt19937) per system with `SYSTEM_SEED`. The
console's construction draws the 128 RIOT RAM bytes (`RAM_DRAWS`) and the
RIOT timer; every `System::reset` after it draws the RIOT timer and, for a
Superchip cart, its 128 cart RAM bytes (ale-facts §1.4). These draws are
host-side data: a reset takes them as `ResetInputs`.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari import cart as cartridge

SYSTEM_SEED = 4753849
RAM_DRAWS = 128
"""The power-on RAM bytes the construction draws first."""


def system_draws(count: int) -> np.ndarray:
    """The first `count` outputs of Stella's system generator (mt19937)."""
    rng = np.random.RandomState(SYSTEM_SEED)
    return rng._bit_generator.random_raw(count).astype(np.uint32)


def riot_timer(draw: int) -> int:
    """The timer value `M6532::reset` derives from one generator draw."""
    return 25 + int(draw) % 75


def reset_draw_index(resets: int, cart_ram: bool) -> int:
    """Where the `resets`-th reset's draws start in the generator's output.

    The construction takes the 128 RIOT RAM bytes and the RIOT timer
    (reset 0); each `System::reset` then takes the timer (the RIOT is reset
    first) and, for a Superchip cart (reset last), 128 cart RAM bytes.
    """
    if resets == 0:
        return RAM_DRAWS
    per_reset = 1 + (cartridge.RAM_SIZE if cart_ram else 0)
    return RAM_DRAWS + 1 + (resets - 1) * per_reset


def reset_timer(resets: int, cart_ram: bool = False) -> int:
    """The RIOT timer of the console's `resets`-th `System::reset`.

    Stella's system generator gives the 128 RAM bytes, then one draw per
    reset of the RIOT: 0 is the construction (`power_on`), then one per
    `System::reset` (ale-facts §1.4), followed by 128 for the cart RAM of a
    Superchip cart.
    """
    index = reset_draw_index(resets, cart_ram)
    return riot_timer(system_draws(index + 1)[index])


class ResetInputs(NamedTuple):
    """What a `System::reset` takes from outside the console.

    Attributes:
        timer: int32, the RIOT timer drawn for it.
        cart_ram: uint8[128], the Superchip RAM drawn for it (zeros for
            other carts).
        pal: bool, the display format the TIA is reset to (ALE's detected
            format; NTSC before detection).
    """
    timer: jax.Array
    cart_ram: jax.Array
    pal: jax.Array


def reset_inputs(resets: int, cart_ram: bool = False,
                 pal: bool = False) -> ResetInputs:
    """The draws of the console's `resets`-th `System::reset` (>= 1).

    Args:
        resets: which reset since construction: 1 and 2 are `loadROM`'s,
            3 + k the k-th `reset_game()`'s.
        cart_ram: whether the cart has Superchip RAM (it draws 128 bytes).
        pal: the display format to reset to.
    """
    if resets < 1:
        raise ValueError(f"reset {resets}: System::resets count from 1")
    index = reset_draw_index(resets, cart_ram)
    draws = system_draws(index + 1 + cartridge.RAM_SIZE)
    ram = (draws[index + 1:] & 0xFF if cart_ram
           else np.zeros(cartridge.RAM_SIZE, np.uint32))
    return ResetInputs(timer=jnp.int32(riot_timer(draws[index])),
                       cart_ram=jnp.asarray(ram, jnp.uint8),
                       pal=jnp.asarray(pal))
