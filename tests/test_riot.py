"""Register-level checks of the RIOT timer against Stella's formulas."""
import jax.numpy as jnp

from jaxatari import riot


def _intim(state, cycle):
    state, value = riot.read(state, jnp.int32(0x284), jnp.int32(cycle),
                             jnp.int32(0xFF), jnp.int32(0x3F),
                             jnp.asarray(True))
    return state, int(value)


def _flag(state, cycle):
    _, value = riot.read(state, jnp.int32(0x285), jnp.int32(cycle),
                         jnp.int32(0xFF), jnp.int32(0x3F), jnp.asarray(True))
    return int(value)


def test_tim64t_counts_down_every_64_cycles():
    state = riot.power_on(jnp.zeros(128, jnp.uint8), 50)
    state = riot.write(state, jnp.int32(0x296), jnp.int32(3), jnp.int32(100),
                       jnp.asarray(True))
    # Stella: value - ((cycle - 1 - set) >> 6) - 1
    for cycle, want in ((101, 2), (164, 2), (165, 1), (229, 0), (292, 0)):
        _, got = _intim(state, cycle)
        assert got == want, (cycle, got, want)


def test_underflow_then_interrupt_latch():
    state = riot.power_on(jnp.zeros(128, jnp.uint8), 50)
    state = riot.write(state, jnp.int32(0x294), jnp.int32(2), jnp.int32(0),
                       jnp.asarray(True))      # TIM1T = 2 at cycle 0
    assert _flag(state, 2) == 0x00             # 2 - ((2-1) >> 0) - 1 = 0
    assert _flag(state, 3) == 0x80             # -1: underflowed
    # The first INTIM read at a per-cycle count <= -2 latches; from then on
    # INTIM = value - delta - offset, offset = read cycle - (set + value).
    state, first = _intim(state, 6)            # delta 5, offset 4
    assert first == (2 - 5 - 4) & 0xFF
    assert bool(state.read_after_interrupt)
    assert _flag(state, 7) == 0x00             # flag cleared once latched


def test_ram_and_ddra():
    state = riot.power_on(jnp.zeros(128, jnp.uint8), 50)
    state = riot.write(state, jnp.int32(0xC5), jnp.int32(0xAB), jnp.int32(0),
                       jnp.asarray(True))
    state = riot.write(state, jnp.int32(0x281), jnp.int32(0x0F),
                       jnp.int32(0), jnp.asarray(True))
    _, value = riot.read(state, jnp.int32(0x1C5 & 0xFFF), jnp.int32(0),
                         jnp.int32(0xFF), jnp.int32(0x3F), jnp.asarray(True))
    assert int(value) == 0xAB and int(state.ddra) == 0x0F
    disabled = riot.write(state, jnp.int32(0xC5), jnp.int32(1), jnp.int32(0),
                          jnp.asarray(False))
    assert int(disabled.ram[0x45]) == 0xAB
