"""The 6532 RIOT (RAM, I/O, timer) as ALE's 2007-era Stella emulates it.

The chip has three parts, each a small piece of state in `RIOTState`:

* **128 bytes of RAM**, seen by the CPU at $80-$FF (and every mirror where
  A12=0, A9=0, A7=1). Stella fills it from its fixed-seed generator at power
  on; the console passes those bytes in (see `console.power_on_ram`).
* **Two 8-bit ports with data-direction registers.** Port A (SWCHA) carries
  the joystick pins: bits 7-4 the left stick (right, left, down, up), bits 3-0
  the right one, a pressed direction reads 0. Port B (SWCHB) carries the
  console switches: bit 0 RESET, bit 1 SELECT (0 while pressed), bit 3 colour,
  bits 6 and 7 the difficulty switches (1 = A). Stella returns the pins as
  they are, ignoring the DDRs, and ignores writes to both ports.
* **The interval timer.** Writing TIM1T, TIM8T, TIM64T or T1024T loads the
  timer with the byte and an interval of 1, 8, 64 or 1024 cycles (`shift` 0,
  3, 6, 10) and remembers the cycle. Stella evaluates it lazily, when read:

      delta = (cycle - 1) - cycle_when_set            (32-bit unsigned)
      timer = value - (delta >> shift) - 1

  While `timer >= 0` INTIM reads it. After it underflows the timer counts
  once per cycle: `(value << shift) - delta - 1`. The first INTIM read that
  sees that count at -2 or below latches the interrupt-read flag and the
  cycle; from then on INTIM reads `value - (delta >> shift) - offset` with
  `offset = cycle_at_that_read - (cycle_when_set + (value << shift))`. The
  interrupt flag (TIMINT) reads $80 after underflow until that latch.

All cycles are CPU cycles since the start of the current frame. The console
rebases them when a frame starts (`rebase`), as Stella's
`systemCyclesReset` does.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxatari import folds, updates

RAM_SIZE = 128


@struct.dataclass
class RIOTState:
    """The RIOT's registers (a leading batch axis under vmap).

    Attributes:
        ram: uint8[128], the RAM at $80-$FF.
        timer: the last value written to a timer register.
        shift: log2 of the timer interval (0, 3, 6 or 10).
        set_cycle: the cycle the timer was written.
        interrupt_cycle: the cycle of the first INTIM read after underflow.
        read_after_interrupt: whether that read has happened.
        ddra, ddrb: the data-direction registers.
    """
    ram: jax.Array
    timer: jax.Array
    shift: jax.Array
    set_cycle: jax.Array
    interrupt_cycle: jax.Array
    read_after_interrupt: jax.Array
    ddra: jax.Array
    ddrb: jax.Array


def power_on(ram: jax.Array, timer: int | jax.Array) -> RIOTState:
    """The RIOT after power on and `M6532::reset`.

    Args:
        ram: the 128 power-on RAM bytes.
        timer: the random timer value Stella draws on reset (25..99).

    Returns:
        The RIOT state: interval 64, timer set at cycle 0, DDRs zero.
    """
    i32 = lambda v: jnp.asarray(v, jnp.int32)
    return RIOTState(ram=jnp.asarray(ram, jnp.uint8), timer=i32(timer),
                     shift=i32(6), set_cycle=i32(0), interrupt_cycle=i32(0),
                     read_after_interrupt=jnp.asarray(False), ddra=i32(0),
                     ddrb=i32(0))


def reset(riot: RIOTState, timer: int | jax.Array) -> RIOTState:
    """`M6532::reset`: a fresh timer draw and zero DDRs; RAM is kept."""
    return power_on(riot.ram, timer)


def rebase(riot: RIOTState, cycles: jax.Array) -> RIOTState:
    """Shift the remembered cycles when the frame's cycle count restarts."""
    return riot.replace(set_cycle=riot.set_cycle - cycles,
                        interrupt_cycle=riot.interrupt_cycle - cycles)


def _timer_count(riot: RIOTState, cycle: jax.Array):
    """The lazily evaluated timer at `cycle`: (count, delta)."""
    delta = (cycle - 1 - riot.set_cycle).astype(jnp.uint32)
    count = riot.timer - (delta >> riot.shift.astype(jnp.uint32)).astype(
        jnp.int32) - 1
    return count, delta.astype(jnp.int32)


def _read_intim(riot: RIOTState, cycle: jax.Array):
    """INTIM at `cycle`, the state with the interrupt-read latch, and the
    plain timer count (negative once it underflowed)."""
    count, delta = _timer_count(riot, cycle)
    after = (riot.timer << riot.shift) - delta - 1
    latch = (count < 0) & (after <= -2) & ~riot.read_after_interrupt
    read_after = riot.read_after_interrupt | latch
    interrupt_cycle = jnp.where(latch, cycle, riot.interrupt_cycle)
    offset = interrupt_cycle - (riot.set_cycle + (riot.timer << riot.shift))
    shifted = (delta.astype(jnp.uint32) >> riot.shift.astype(jnp.uint32)
               ).astype(jnp.int32)
    latched = riot.timer - shifted - offset
    value = jnp.where(count >= 0, count,
                      jnp.where(read_after, latched, after))
    new = riot.replace(read_after_interrupt=jnp.where(count >= 0,
                                                      riot.read_after_interrupt,
                                                      read_after),
                       interrupt_cycle=jnp.where(count >= 0,
                                                 riot.interrupt_cycle,
                                                 interrupt_cycle))
    return value & 0xFF, new, count


def is_ram(address: jax.Array) -> jax.Array:
    """Whether a RIOT address (A12=0, A7=1) is RAM (A9=0), not the ports
    and timer."""
    return (address & 0x0200) == 0


def ram_byte(riot: RIOTState, address: jax.Array) -> jax.Array:
    """The RAM byte at a RIOT RAM address, as int32 (no side effects)."""
    return riot.ram[address & 0x7F].astype(jnp.int32)


def read(riot: RIOTState, address: jax.Array, cycle: jax.Array,
         swcha: jax.Array, swchb: jax.Array,
         enabled: jax.Array) -> tuple[RIOTState, jax.Array]:
    """A CPU read of a RIOT address (A12=0, A7=1).

    Args:
        riot: the RIOT state.
        address: the CPU address.
        cycle: the CPU cycle of the access.
        swcha: the joystick pins (port A input).
        swchb: the console switches (port B input).
        enabled: whether the read happens; a disabled read changes nothing.

    Returns:
        The new state and the byte read.
    """
    ram = is_ram(address)
    new, io_value = read_io(riot, address, cycle, swcha, swchb,
                            enabled & ~ram)
    return new, jnp.where(ram, ram_byte(riot, address), io_value)


def read_io(riot: RIOTState, address: jax.Array, cycle: jax.Array,
            swcha: jax.Array, swchb: jax.Array,
            enabled: jax.Array) -> tuple[RIOTState, jax.Array]:
    """`read` of an address away from RAM (A9=1: the ports and the
    timer). It never touches `riot.ram`, so a caller that keeps the RAM
    elsewhere (a kernel's ref) can pass any `ram`."""
    intim, after_intim, count = _read_intim(riot, cycle)
    flag = jnp.where((count >= 0) | riot.read_after_interrupt, 0, 0x80)
    port = address & 0x07
    io_value = folds.select(
        [port == 0, port == 1, port == 2, port == 3, (port & 1) == 0],
        [swcha, riot.ddra, swchb, riot.ddrb, intim], flag)
    takes_intim = enabled & ((port == 4) | (port == 6))
    new = jax.tree.map(lambda n, o: jnp.where(takes_intim, n, o),
                       after_intim, riot)
    return new, io_value


def write(riot: RIOTState, address: jax.Array, value: jax.Array,
          cycle: jax.Array, enabled: jax.Array) -> RIOTState:
    """A CPU write to a RIOT address (A12=0, A7=1).

    RAM stores the byte; DDRA is kept; port writes are ignored (no output
    device is attached); the four timer registers load the timer.
    """
    to_ram = is_ram(address)
    ram = updates.set_item(riot.ram, address & 0x7F, jnp.where(
        enabled & to_ram, value, riot.ram[address & 0x7F]))
    return write_io(riot, address, value, cycle,
                    enabled & ~to_ram).replace(ram=ram)


def write_io(riot: RIOTState, address: jax.Array, value: jax.Array,
             cycle: jax.Array, enabled: jax.Array) -> RIOTState:
    """`write` to an address away from RAM (A9=1): DDRA and the timer.
    It never touches `riot.ram` (see `read_io`)."""
    port = address & 0x07
    is_ddra = enabled & (port == 1)
    is_timer = enabled & (port >= 4) & ((address & 0x17) >= 0x14)
    low = address & 0x03
    shift = 3 * low + (low == 3)   # TIM1T, TIM8T, TIM64T, T1024T: 0, 3, 6, 10
    return riot.replace(
        ddra=jnp.where(is_ddra, value, riot.ddra),
        timer=jnp.where(is_timer, value, riot.timer),
        shift=jnp.where(is_timer, shift, riot.shift),
        set_cycle=jnp.where(is_timer, cycle, riot.set_cycle),
        read_after_interrupt=riot.read_after_interrupt & ~is_timer)
