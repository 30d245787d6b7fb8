"""Pitfall II's DPC coprocessor, as ALE's Stella (`CartDPC.cxx`) runs it.

The DPC cart holds 8 KiB of program ROM, banked like F8 (`cart.py` does
that part), a 2 KiB display ROM the CPU cannot address, and the chip. The
chip sits in the cartridge window at offsets $000-$07F: reads of
$000-$03F return chip data, writes to $040-$07F set chip registers.

State (`DPCState`)
------------------
* Eight *data fetchers* 0-7, each with a top and a bottom register (8
  bits), an 11-bit counter and a flag ($00 or $FF).
* A *music mode* bit for fetchers 5, 6 and 7.
* An 8-bit *random number* shift register, 1 at power on.
* For the music clock: the system cycle of the last amplitude read and the
  fractional oscillator clocks left over then (a C double, kept as its 64
  bits).

Power on and reset: Stella's constructor zeroes the fetchers, clears music
mode and sets the random register to 1; `reset()` (every `System::reset`)
keeps all of that and only restarts the music clock (cycle 0, no fraction).

Reads, at window offset ``o`` (fetcher ``i = o & 7``, function
``(o >> 3) & 7``), for ``o < $40``:

1. The fetcher's flag is updated: $FF if its counter's low byte equals its
   top, else $00 if it equals its bottom, else kept.
2. Function 0: fetchers 0-3 return the random number; 4-7 return the music
   amplitude (below). Function 1 returns display ROM byte
   ``2047 - counter``; function 2 that byte AND the flag; function 7 the
   flag; the others 0.
3. The counter counts down by one (mod 2048), except for a fetcher 5-7 in
   music mode.

Writes, for ``$40 <= o < $80``: function 0 sets the top and clears the
flag; 1 sets the bottom; 2 sets the counter's low byte (to the top instead
of the value for a fetcher in music mode); 3 sets the counter's high 3 bits
and, for fetchers 5-7, music mode to bit 4 of the value; 6 resets the
random number to 1. Other writes do nothing.

The random number clocks once before every such chip access and, as Stella
only does it for accesses that reach the cart's own code, once per read of
offsets $000-$07F and $FC0-$FFF (its two device pages) and once per write
anywhere in the window: it shifts left, taking as its new bit 0 the NOT of
the XOR of bits 7, 5, 4 and 3.

Music. An amplitude read first advances the music fetchers by the
oscillator clocks since the last amplitude read: ``clocks = 15750 *
cycles / 1193191.66666667 + fraction`` in double precision, the whole part
is used and the fraction kept. This module computes it in float64 as the
C code does (so the backend must have float64: CPU and GPU do), keeping
XLA from replacing the division by a product with the reciprocal.

With ``n`` whole clocks, each fetcher 5-7 in music mode moves its
counter's low byte ``n mod (top + 1)`` steps down, wrapping to top (to 0
if its top is 0); its flag becomes $00 if the new value <= bottom, $FF if
<= top, else stays. The amplitude is then a table lookup of the three
music fetchers' flags (mode on and flag set): 0, 4, 5, 9, 6, 10, 11, 15
(bit 0 fetcher 5, bit 2 fetcher 7).

Cost: in a program built with the chip (`console.Features.dpc`) every bus
access does the cheap part, the random clock (`note_read`, `note_write`);
the console runs an instruction exactly (`read`, `write`) only when some
console of the batch touches chip data in it (see `console.py`). Programs
without the chip compile none of this.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

DISPLAY_OFFSET = 8192   # where the display ROM sits in the cart image
DISPLAY_SIZE = 2048
TOPS, BOTTOMS, COUNTERS, FLAGS = range(4)       # rows of `fetchers`
MUSIC, RANDOM, CYCLES, FRACTION = 0, 1, 2, 3    # the fraction: 2 words
OSC_HZ = 15750.0
CPU_HZ = 1193191.66666667

LANES = np.arange(8)
_MUSIC_LANES = LANES >= 5
# The amplitude adds 4, 5 and 6 for fetchers 5, 6 and 7 in music mode with
# their flag set: Stella's table 0, 4, 5, 9, 6, 10, 11, 15.
_AMPLITUDE_WEIGHTS = np.array([0, 0, 0, 0, 0, 4, 5, 6], np.int32)


@struct.dataclass
class DPCState:
    """The chip's registers (a leading batch axis under vmap).

    Attributes:
        fetchers: int32[4, 8]: rows `TOPS`, `BOTTOMS`, `COUNTERS` (11 bits)
            and `FLAGS` of the eight data fetchers.
        misc: int32[5]: `MUSIC` (bit k: fetcher 5 + k in music mode),
            `RANDOM`, `CYCLES` (system cycle of the last amplitude read,
            rebased with the frame) and the fraction of an oscillator clock
            left over then, a float64's bits as two int32 words.
    """
    fetchers: jax.Array
    misc: jax.Array


def power_on() -> DPCState:
    """Stella's constructor: fetchers zero, no music, random number 1."""
    misc = jnp.zeros((5,), jnp.int32).at[RANDOM].set(1)
    return DPCState(fetchers=jnp.zeros((4, 8), jnp.int32), misc=misc)


def reset(state: DPCState) -> DPCState:
    """`reset()`: the music clock restarts at cycle 0 with no fraction."""
    return state.replace(misc=state.misc.at[CYCLES:].set(0))


def rebase(state: DPCState, cycles: jax.Array) -> DPCState:
    """Shift the remembered cycle when the frame's cycle count restarts."""
    return state.replace(misc=state.misc.at[CYCLES].add(-cycles))


def _clock_random(value: jax.Array) -> jax.Array:
    """One step of the random number shift register: the new bit 0 is the
    NOT of the XOR of bits 7, 5, 4 and 3."""
    taps = (value >> 7) ^ (value >> 5) ^ (value >> 4) ^ (value >> 3)
    return ((value << 1) | (~taps & 1)) & 0xFF


def _lane(values: jax.Array, lane: jax.Array) -> jax.Array:
    """values[k] where `lane` (one-hot over the 8 fetchers) is set."""
    return jnp.sum(jnp.where(lane, values, 0))


def _music_mode(misc: jax.Array) -> jax.Array:
    """bool[8]: which fetchers are in music mode (only 5-7 can be)."""
    bits = misc[MUSIC] >> jnp.maximum(jnp.asarray(LANES) - 5, 0)
    return jnp.asarray(_MUSIC_LANES) & ((bits & 1) != 0)


def oscillator_clocks(cycles: jax.Array, fraction: jax.Array
                      ) -> tuple[jax.Array, jax.Array]:
    """Whole oscillator clocks in `cycles` CPU cycles, and the new fraction.

    Stella's double arithmetic, in float64: `fraction` and the result are
    a double's bits as int32[2] (low word first).
    """
    with jax.enable_x64(True):
        old = jax.lax.bitcast_convert_type(fraction, jnp.float64)
        # XLA rewrites a division by a constant, or by a scalar broadcast
        # over a batch, as a product with the reciprocal, which rounds
        # differently. So the divisor is made an array of the dividend's
        # shape (x * 0 + D is D exactly) that the barrier hides.
        scaled = OSC_HZ * cycles.astype(jnp.float64)
        scaled, divisor = jax.lax.optimization_barrier(
            (scaled, scaled * 0.0 + CPU_HZ))
        clocks = scaled / divisor + old
        whole = clocks.astype(jnp.int32)
        left = clocks - whole.astype(jnp.float64)
        bits = jax.lax.bitcast_convert_type(left, jnp.int32)
    return whole, bits


def _set(misc: jax.Array, slot: int, value: jax.Array) -> jax.Array:
    """`misc` with `misc[slot] = value`."""
    return jnp.concatenate([misc[:slot], value[None], misc[slot + 1:]])


def _music(fetchers: list[jax.Array], misc: jax.Array, cycle: jax.Array,
           on: jax.Array) -> tuple[list[jax.Array], jax.Array]:
    """Advance the music fetchers to `cycle` if `on` (an amplitude read).

    `fetchers` is the list of rows (tops, bottoms, counters, flags); the
    new rows and misc are returned.
    """
    tops, bottoms, counters, flags = fetchers
    whole, fraction = oscillator_clocks(cycle - misc[CYCLES], misc[FRACTION:])
    period = tops + 1
    low = (counters & 0xFF) - jnp.maximum(whole, 0) % period
    low = jnp.where(low < 0, low + period, low)
    low = jnp.where(tops != 0, low, 0)
    moved = on & (whole > 0) & _music_mode(misc)
    new_flags = jnp.where(low <= bottoms, 0,
                          jnp.where(low <= tops, 0xFF, flags))
    flags = jnp.where(moved, new_flags, flags)
    counters = jnp.where(moved, (counters & 0x700) | low, counters)
    misc = jnp.concatenate([
        misc[:CYCLES], jnp.where(on, cycle, misc[CYCLES])[None],
        jnp.where(on, fraction, misc[FRACTION:])])
    return [tops, bottoms, counters, flags], misc


def read(state: DPCState, image: jax.Array, offset: jax.Array,
         cycle: jax.Array, on: jax.Array
         ) -> tuple[jax.Array, jax.Array, DPCState]:
    """A CPU read of the cart window at `offset` (A12 set), if `on`.

    Args:
        state: the chip.
        image: the cart image; the display ROM is at `DISPLAY_OFFSET`.
        offset: the window offset (address & $FFF).
        cycle: the system cycle of the read (for the music clock).
        on: whether the read happens (and the cart is a DPC).

    Returns:
        ``(is_chip, byte, state)``: whether the chip drives the byte (an
        offset below $40), the byte, and the new chip state.
    """
    chip, state = note_read(state, offset, on)
    misc = state.misc
    index, function = offset & 7, (offset >> 3) & 7
    lane = jnp.asarray(LANES) == index
    mine = chip & lane
    tops, bottoms, counters, flags = (state.fetchers[k] for k in range(4))
    low = counters & 0xFF
    flags = jnp.where(mine, jnp.where(low == tops, 0xFF, jnp.where(
        low == bottoms, 0, flags)), flags)
    flag, counter = _lane(flags, lane), _lane(counters, lane)
    rows, misc = _music(
        [tops, bottoms, counters, flags], misc, cycle,
        chip & (function == 0) & (index >= 4))
    music = _music_mode(misc)
    amplitude = jnp.sum(jnp.where(music & (rows[FLAGS] != 0),
                                  jnp.asarray(_AMPLITUDE_WEIGHTS), 0))
    shown = image[DISPLAY_OFFSET + DISPLAY_SIZE - 1 - counter].astype(
        jnp.int32)
    byte = jnp.where(function == 0, jnp.where(index < 4, misc[RANDOM],
                                              amplitude),
                     jnp.where(function == 1, shown, jnp.where(
                         function == 2, shown & flag,
                         jnp.where(function == 7, flag, 0))))
    counts = mine & ~music
    rows[COUNTERS] = jnp.where(counts, (rows[COUNTERS] - 1) & 0x7FF,
                               rows[COUNTERS])
    return chip, byte, DPCState(fetchers=jnp.stack(rows), misc=misc)


def note_read(state: DPCState, offset: jax.Array, on: jax.Array
              ) -> tuple[jax.Array, DPCState]:
    """A read's cheap part: the random clock; and whether it reads chip
    data (then `read` must be used to get the byte)."""
    device = on & ((offset < 0x80) | (offset >= 0xFC0))
    misc = state.misc
    random = jnp.where(device, _clock_random(misc[RANDOM]), misc[RANDOM])
    return on & (offset < 0x40), state.replace(
        misc=_set(misc, RANDOM, random))


def note_write(state: DPCState, offset: jax.Array, on: jax.Array
               ) -> tuple[jax.Array, DPCState]:
    """A write's cheap part: the random clock; and whether it sets a chip
    register (then `write` must be used)."""
    misc = state.misc
    random = jnp.where(on, _clock_random(misc[RANDOM]), misc[RANDOM])
    return on & (offset >= 0x40) & (offset < 0x80), state.replace(
        misc=_set(misc, RANDOM, random))


def write(state: DPCState, offset: jax.Array, value: jax.Array,
          on: jax.Array) -> DPCState:
    """A CPU write to the cart window at `offset` (A12 set), if `on`."""
    chip, state = note_write(state, offset, on)
    misc = state.misc
    index, function = offset & 7, (offset >> 3) & 7
    mine = chip & (jnp.asarray(LANES) == index)
    value = jnp.asarray(value, jnp.int32)
    tops, bottoms, counters, flags = (state.fetchers[k] for k in range(4))
    low = jnp.where(_music_mode(misc), tops, value)
    counters = jnp.where(mine & (function == 2), (counters & 0x700) | low,
                         counters)
    counters = jnp.where(mine & (function == 3),
                         ((value & 7) << 8) | (counters & 0xFF), counters)
    fetchers = jnp.stack([
        jnp.where(mine & (function == 0), value, tops),
        jnp.where(mine & (function == 1), value, bottoms), counters,
        jnp.where(mine & (function == 0), 0, flags)])
    bit = 1 << jnp.maximum(index - 5, 0)
    sets_music = chip & (function == 3) & (index >= 5)
    mode = jnp.where((value & 0x10) != 0, misc[MUSIC] | bit,
                     misc[MUSIC] & ~bit)
    misc = _set(misc, MUSIC, jnp.where(sets_music, mode, misc[MUSIC]))
    misc = _set(misc, RANDOM, jnp.where(chip & (function == 6), 1,
                                        misc[RANDOM]))
    return DPCState(fetchers=fetchers, misc=misc)
