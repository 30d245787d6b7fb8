"""Q*bert: frames cut short by the 25,000-instruction cap.

After ALE's `loadROM()` Q*bert is in the middle of a 600,074-cycle frame
whose init loop touches no TIA register, so ALE's lazy TIA has drawn nothing
of it: `getScreen()` shows the frame before last (the other buffer of the
double buffer). The first `act()` then finishes that frame. Drawing the
screen ahead of the CPU's TIA accesses once turned step 0 black here
(7,664 pixels wrong) while the RAM was right; `test_parity_short.py` plays
Q*bert against ALE from the boot on.
"""
import jax.numpy as jnp

from jaxatari import tia


def test_collide_sets_latches_without_drawing():
    """A TIA read's collisions come without moving the render frontier."""
    state = tia.power_on().set(
        frame_start=jnp.int32(0), last_update=jnp.int32(tia.LINE * 40),
        row_origin=jnp.int32(tia.LINE * 40), pf=jnp.int32(0xFFFFF),
        grp0=jnp.int32(0xFF), cur_grp0=jnp.int32(0xFF),
        posp0=jnp.int32(20))
    clock = jnp.int32(tia.LINE * 42 + 100)
    drawn = tia.update(state, clock, jnp.int32(40), True)
    probed = tia.collide(state, clock, jnp.int32(40))
    assert int(drawn.collision) != 0
    assert int(probed.collision) == int(drawn.collision)
    assert int(probed.last_update) == int(state.last_update)
    assert not bool(probed.written.any())
    assert bool((probed.screen == state.screen).all())
