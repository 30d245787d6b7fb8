"""The DPC chip (`jaxatari.dpc`) against a plain-Python model of Stella's.

The model restates ALE's `CartDPC.cxx` (Stella 2.x) with Python ints and
floats (IEEE doubles, as the C++ `double`): its random-number table, the
fetchers' flag and counter rules, music mode and the oscillator clock.
Random access sequences must give the same bytes and the same registers
after every access. `tests/console/test_carts_parity.py` checks the chip
against ALE's own serialized registers while Pitfall II plays.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import cart as cartlib
from jaxatari import dpc

# Stella's table: the new bit 0 of the random register, indexed by
# bits 5-3 of it (index bits 2-0) and bit 7 (index bit 3).
RANDOM_TABLE = (1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1)
AMPLITUDES = (0x00, 0x04, 0x05, 0x09, 0x06, 0x0A, 0x0B, 0x0F)


class RefDPC:
    """Stella's DPC, one access at a time."""

    def __init__(self, display: bytes):
        self.display = display
        self.tops, self.bottoms = [0] * 8, [0] * 8
        self.counters, self.flags = [0] * 8, [0] * 8
        self.music = [False] * 3
        self.random, self.cycles, self.fraction = 1, 0, 0.0

    def _clock(self) -> None:
        r = self.random
        bit = RANDOM_TABLE[((r >> 3) & 7) | (8 if r & 0x80 else 0)]
        self.random = ((r << 1) | bit) & 0xFF

    def _music_update(self, cycle: int) -> None:
        elapsed = cycle - self.cycles
        self.cycles = cycle
        clocks = (15750.0 * elapsed) / 1193191.66666667 + self.fraction
        whole = int(clocks)
        self.fraction = clocks - float(whole)
        if whole <= 0:
            return
        for x in (5, 6, 7):
            if not self.music[x - 5]:
                continue
            top = self.tops[x] + 1
            low = self.counters[x] & 0xFF
            if self.tops[x] != 0:
                low -= whole % top
                if low < 0:
                    low += top
            else:
                low = 0
            if low <= self.bottoms[x]:
                self.flags[x] = 0
            elif low <= self.tops[x]:
                self.flags[x] = 0xFF
            self.counters[x] = (self.counters[x] & 0x700) | low

    def read(self, offset: int, cycle: int) -> int | None:
        """A read of window offset `offset`; None if the chip is silent."""
        if offset < 0x80 or offset >= 0xFC0:
            self._clock()
        if offset >= 0x40:
            return None
        i, function = offset & 7, (offset >> 3) & 7
        if self.counters[i] & 0xFF == self.tops[i]:
            self.flags[i] = 0xFF
        elif self.counters[i] & 0xFF == self.bottoms[i]:
            self.flags[i] = 0
        result = 0
        if function == 0 and i < 4:
            result = self.random
        elif function == 0:
            self._music_update(cycle)
            bits = sum(1 << k for k in range(3)
                       if self.music[k] and self.flags[5 + k])
            result = AMPLITUDES[bits]
        elif function in (1, 2):
            result = self.display[2047 - self.counters[i]]
            if function == 2:
                result &= self.flags[i]
        elif function == 7:
            result = self.flags[i]
        if i < 5 or not self.music[i - 5]:
            self.counters[i] = (self.counters[i] - 1) & 0x7FF
        return result

    def write(self, offset: int, value: int) -> None:
        self._clock()
        if not 0x40 <= offset < 0x80:
            return
        i, function = offset & 7, (offset >> 3) & 7
        if function == 0:
            self.tops[i], self.flags[i] = value, 0
        elif function == 1:
            self.bottoms[i] = value
        elif function == 2:
            low = self.tops[i] if i >= 5 and self.music[i - 5] else value
            self.counters[i] = (self.counters[i] & 0x700) | low
        elif function == 3:
            self.counters[i] = ((value & 7) << 8) | (self.counters[i] & 0xFF)
            if i >= 5:
                self.music[i - 5] = bool(value & 0x10)
        elif function == 6:
            self.random = 1

    def registers(self) -> dict:
        return {"fetchers": [self.tops, self.bottoms, self.counters,
                             self.flags],
                "music": self.music, "random": self.random,
                "cycles": self.cycles, "fraction": self.fraction}


def _registers(state: dpc.DPCState) -> dict:
    misc = np.asarray(state.misc)
    return {"fetchers": np.asarray(state.fetchers).tolist(),
            "music": [bool((misc[dpc.MUSIC] >> k) & 1) for k in range(3)],
            "random": int(misc[dpc.RANDOM]), "cycles": int(misc[dpc.CYCLES]),
            "fraction": float(misc[3:5].astype(np.int32).view(np.float64)[0])}


@jax.jit
def _run(state, image, offsets, values, cycles, writes):
    def step(state, x):
        offset, value, cycle, write = x
        chip, byte, after_read = dpc.read(state, image, offset, cycle,
                                          ~write)
        after_write = dpc.write(state, offset, value, write)
        new = jax.tree.map(lambda w, r: jnp.where(write, w, r), after_write,
                           after_read)
        return new, (chip, byte, new)
    return jax.lax.scan(step, state, (offsets, values, cycles, writes))


def _accesses(rng: np.random.Generator, n: int):
    """Mostly chip offsets; some program ROM and hotspot-page offsets."""
    chip = np.where(rng.random(n) < 0.2, rng.integers(4, 8, n),
                    rng.integers(0, 0x80, n))   # amplitude reads, often
    other = np.where(rng.random(n) < 0.5, rng.integers(0x80, 0xFC0, n),
                     rng.integers(0xFC0, 0x1000, n))
    offsets = np.where(rng.random(n) < 0.85, chip, other).astype(np.int32)
    # Values favour music mode (bit 4) and small tops, so counters wrap.
    values = np.where(rng.random(n) < 0.5, rng.integers(0, 8, n) | 0x10,
                      rng.integers(0, 256, n)).astype(np.int32)
    steps = np.where(rng.random(n) < 0.05, rng.integers(1000, 40000, n),
                     rng.integers(1, 300, n))
    return offsets, values, np.cumsum(steps).astype(np.int32), \
        rng.random(n) < 0.4


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_accesses_match_stella_model(seed):
    rng = np.random.default_rng(seed)
    display = rng.integers(0, 256, 2048, np.uint8)
    image = np.zeros(cartlib.IMAGE_SIZE, np.uint8)
    image[dpc.DISPLAY_OFFSET:dpc.DISPLAY_OFFSET + 2048] = display
    offsets, values, cycles, writes = _accesses(rng, 2000)
    _, (chip, bytes_, states) = _run(
        dpc.power_on(), jnp.asarray(image), jnp.asarray(offsets),
        jnp.asarray(values), jnp.asarray(cycles), jnp.asarray(writes))
    chip, bytes_ = np.asarray(chip), np.asarray(bytes_)
    ref = RefDPC(display.tobytes())
    music_reads = 0
    for k in range(len(offsets)):
        offset = int(offsets[k])
        if writes[k]:
            ref.write(offset, int(values[k]))
        else:
            expected = ref.read(offset, int(cycles[k]))
            assert bool(chip[k]) == (expected is not None), k
            if expected is not None:
                assert int(bytes_[k]) == expected, (k, hex(offset))
                music_reads += offset < 8 and offset >= 4
        ours = _registers(jax.tree.map(lambda x: x[k], states))
        assert ours == ref.registers(), (k, hex(offset), bool(writes[k]))
    assert music_reads > 100
    assert any(ref.music) and ref.fraction != 0.0


def test_random_register_sequence():
    """From 1, the register runs through 255 values (all but $FF, where an
    XNOR shift register would stick) and returns to 1."""
    ref = RefDPC(bytes(2048))
    state = dpc.power_on()
    image = jnp.zeros(cartlib.IMAGE_SIZE, jnp.uint8)
    read = jax.jit(lambda s: dpc.read(s, image, jnp.int32(0), jnp.int32(0),
                                      jnp.asarray(True)))
    seen = []
    for _ in range(255):
        _, byte, state = read(state)
        seen.append(int(byte))
        assert int(byte) == ref.read(0, 0)
    assert len(set(seen)) == 255 and 0xFF not in seen and seen[-1] == 1


def test_only_device_pages_and_writes_clock_the_random_number():
    image = jnp.zeros(cartlib.IMAGE_SIZE, jnp.uint8)
    on = jnp.asarray(True)
    for offset, clocks in ((0x000, 1), (0x07F, 1), (0x080, 0), (0x800, 0),
                           (0xFBF, 0), (0xFC0, 1), (0xFFF, 1)):
        _, _, state = dpc.read(dpc.power_on(), image, jnp.int32(offset),
                               jnp.int32(0), on)
        assert int(state.misc[dpc.RANDOM]) == (1 if clocks == 0 else 3)
        state = dpc.write(dpc.power_on(), jnp.int32(offset), jnp.int32(0), on)
        assert int(state.misc[dpc.RANDOM]) == 3, hex(offset)
    _, _, state = dpc.read(dpc.power_on(), image, jnp.int32(0), jnp.int32(0),
                           jnp.asarray(False))
    assert int(state.misc[dpc.RANDOM]) == 1


def test_oscillator_clocks_are_double_precision():
    """Chained like Stella's music updates: whole clocks and the fraction
    equal C doubles bit for bit, for long and short gaps."""
    rng = np.random.default_rng(5)
    gaps = np.concatenate([rng.integers(0, 200, 500),
                           rng.integers(0, 3_000_000, 100)]).astype(np.int32)

    @jax.jit
    def chain(gaps):
        def step(fraction, gap):
            whole, fraction = dpc.oscillator_clocks(gap, fraction)
            return fraction, (whole, fraction)
        return jax.lax.scan(step, jnp.zeros((2,), jnp.int32), gaps)[1]

    wholes, fractions = (np.asarray(x) for x in chain(jnp.asarray(gaps)))
    fraction = 0.0
    for k, gap in enumerate(gaps.tolist()):
        clocks = (15750.0 * gap) / 1193191.66666667 + fraction
        whole = int(clocks)
        fraction = clocks - float(whole)
        assert int(wholes[k]) == whole
        assert fractions[k].astype(np.int32).view(np.float64)[0] == fraction


def test_reset_keeps_registers_and_restarts_the_music_clock():
    state = dpc.DPCState(fetchers=jnp.arange(32, dtype=jnp.int32).reshape(
        4, 8), misc=jnp.asarray([5, 77, 1234, 99, 42], jnp.int32))
    reset = dpc.reset(state)
    assert np.asarray(reset.fetchers).tolist() == np.asarray(
        state.fetchers).tolist()
    assert np.asarray(reset.misc).tolist() == [5, 77, 0, 0, 0]
    assert np.asarray(dpc.rebase(state, jnp.int32(1000)).misc).tolist() == [
        5, 77, 234, 99, 42]
    fresh = dpc.power_on()
    assert not np.asarray(fresh.fetchers).any()
    assert np.asarray(fresh.misc).tolist() == [0, 1, 0, 0, 0]


def test_pitfall2_cart():
    """The DPC ROM: 8K program (F8 banks, bank 1 at reset) then the 2K
    display ROM; the 255 bytes after it are not used."""
    cart = cartlib.load_cartridge("pitfall2")
    data = cartlib.rom_path("pitfall2").read_bytes()
    assert len(data) == 10495 and cart.scheme == "DPC" and cart.dpc
    assert not cart.has_ram
    assert bytes(cart.image[:10240]) == data[:10240]
    assert not cart.image[10240:].any()
    assert cart.reset_segments.tolist() == [4096, 5120, 6144, 7168]
