"""How fast could a CPU interpreter run on XLA:CPU? Two dispatch designs
on one small 6502 program (issue #18's CPU target).

* `cpu6502.run`: jaxatari's CPU, the same straight-line program for
  every opcode with its results chosen by `jnp.where` (what vmap and a
  GPU need), on a bus of 256 bytes of RAM (the zero page) and the
  program as a constant ROM at $1000 (`zero_page_bus`), as the Atari's
  128 bytes and cartridge are.
* a `lax.switch` interpreter of the 9 opcodes the program uses, one
  branch per opcode (only the opcode's own work runs).
* a `lax.switch` on the opcode to copies of `cpu6502.step` itself, each
  with its opcode's control row as constants, so XLA folds away what the
  opcode does not do: the same code as the first design (its bits, by
  construction and checked), dispatched as the second
  (`--all-opcodes`: a copy for each of the 256). Unbatched, XLA:CPU
  compiles its loop into one kernel (jaxatari raises the kernel-loop
  threshold on import) and the switch into a jump; a batch runs its
  consoles one after another (`lax.map`), since under `vmap` the switch
  would become a select of all 9 branches.

The program (at $1000) adds 3 to each of 16 zero-page bytes, forever:
LDX #0; LDA $80,X; CLC; ADC #3; STA $80,X; INX; CPX #16; BNE -12;
JMP $1000. Both designs must end in the same registers, flags, cycles
and memory (checked before timing). Prints one JSON line per design and
batch: nanoseconds per console-instruction (the median of `--repeats`
calls after one untimed call).

This measures dispatch alone: no TIA, RIOT or cartridge, and 9 opcodes
instead of 151, so it bounds what a switch-dispatched CPU could gain; it
is not a speed of the console.

Usage: python benchmarks/dispatch.py [--steps 200000] [--batches 1 1024]
       [--all-opcodes]
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari import cpu6502

PROGRAM = [0xA2, 0x00, 0xB5, 0x80, 0x18, 0x69, 0x03, 0x95, 0x80, 0xE8,
           0xE0, 0x10, 0xD0, 0xF4, 0x4C, 0x00, 0x10]
ORIGIN = 0x1000


class Toy(NamedTuple):
    """The switch interpreter's state: registers, flags apart, memory."""
    a: jax.Array
    x: jax.Array
    pc: jax.Array
    c: jax.Array
    z: jax.Array
    n: jax.Array
    v: jax.Array
    cycles: jax.Array
    ram: jax.Array      # uint8[256]: the zero page (the program's code
                        # is read from a constant, as a cartridge's ROM)


def _nz(s: Toy, value: jax.Array) -> Toy:
    return s._replace(z=(value == 0).astype(jnp.int32),
                      n=(value >> 7) & 1)


def _branches(byte: Callable[[Toy, int], jax.Array]) -> list[Callable]:
    """One function per opcode of the program, in `OPCODES` order."""
    def ldx_imm(s):
        return _nz(s._replace(x=byte(s, 1), pc=s.pc + 2, cycles=s.cycles + 2),
                   byte(s, 1))

    def lda_zpx(s):
        a = s.ram[(byte(s, 1) + s.x) & 0xFF].astype(jnp.int32)
        return _nz(s._replace(a=a, pc=s.pc + 2, cycles=s.cycles + 4), a)

    def clc(s):
        return s._replace(c=jnp.int32(0), pc=s.pc + 1, cycles=s.cycles + 2)

    def adc_imm(s):
        operand = byte(s, 1)
        total = s.a + operand + s.c
        a = total & 0xFF
        v = ((~(s.a ^ operand) & (s.a ^ total)) >> 7) & 1
        return _nz(s._replace(a=a, c=total >> 8, v=v, pc=s.pc + 2,
                              cycles=s.cycles + 2), a)

    def sta_zpx(s):
        ram = s.ram.at[(byte(s, 1) + s.x) & 0xFF].set(s.a.astype(jnp.uint8))
        return s._replace(ram=ram, pc=s.pc + 2, cycles=s.cycles + 4)

    def inx(s):
        x = (s.x + 1) & 0xFF
        return _nz(s._replace(x=x, pc=s.pc + 1, cycles=s.cycles + 2), x)

    def cpx_imm(s):
        difference = (s.x - byte(s, 1)) & 0xFF
        return _nz(s._replace(c=(s.x >= byte(s, 1)).astype(jnp.int32),
                              pc=s.pc + 2, cycles=s.cycles + 2), difference)

    def bne(s):
        offset = byte(s, 1) - ((byte(s, 1) & 0x80) << 1)
        target = (s.pc + 2 + offset) & 0xFFFF
        taken = s.z == 0
        extra = jnp.where(taken, 1 + ((target ^ (s.pc + 2)) >> 8 != 0), 0)
        return s._replace(pc=jnp.where(taken, target, s.pc + 2),
                          cycles=s.cycles + 2 + extra)

    def jmp_abs(s):
        return s._replace(pc=byte(s, 1) | (byte(s, 2) << 8),
                          cycles=s.cycles + 3)

    return [ldx_imm, lda_zpx, clc, adc_imm, sta_zpx, inx, cpx_imm, bne,
            jmp_abs]


OPCODES = [0xA2, 0xB5, 0x18, 0x69, 0x95, 0xE8, 0xE0, 0xD0, 0x4C]
_INDEX = np.zeros(256, np.int32)
_INDEX[OPCODES] = np.arange(len(OPCODES))


def toy_run(state: Toy, steps: int) -> Toy:
    """`steps` instructions of the switch interpreter."""
    rom = jnp.asarray(memory()[ORIGIN:ORIGIN + 0x1000])

    def byte(s: Toy, offset: int) -> jax.Array:
        return rom[(s.pc + offset) & 0xFFF].astype(jnp.int32)
    branches = _branches(byte)

    def body(_, s: Toy) -> Toy:
        return jax.lax.switch(jnp.asarray(_INDEX)[byte(s, 0)], branches, s)
    return jax.lax.fori_loop(0, steps, body, state)


def memory() -> np.ndarray:
    """The flat memory with the program at `ORIGIN`."""
    image = np.zeros(0x10000, np.uint8)
    image[ORIGIN:ORIGIN + len(PROGRAM)] = PROGRAM
    return image


def _toy_state() -> Toy:
    zero = jnp.int32(0)
    return Toy(a=zero, x=zero, pc=jnp.int32(ORIGIN), c=zero, z=zero, n=zero,
               v=zero, cycles=zero, ram=jnp.zeros(256, jnp.uint8))


def zero_page_bus() -> cpu6502.Bus:
    """A bus of 256 bytes of RAM (state uint8[256], mirrored below $1000)
    and `memory()`'s $1000-$1FFF as a ROM constant; writes land at once."""
    rom = jnp.asarray(memory()[ORIGIN:ORIGIN + 0x1000])

    def read(ram, address, cycle, enabled):
        del cycle, enabled
        value = jnp.where((address & 0x1000) != 0, rom[address & 0xFFF],
                          ram[address & 0xFF])
        return ram, value.astype(jnp.int32)

    def write(ram, address, value, cycle, enabled):
        del cycle
        slot = address & 0xFF
        on = enabled & ((address & 0x1000) == 0)
        return ram.at[slot].set(jnp.where(on, value, ram[slot]).astype(
            jnp.uint8))
    return cpu6502.Bus(read=read, write=write)


def specialized_run(carry: tuple[Any, Any], steps: int, bus: cpu6502.Bus,
                    opcodes: list[int]) -> tuple[Any, Any]:
    """`steps` instructions of `cpu6502.step` itself, dispatched by a
    `lax.switch` on the opcode to copies of it specialized per opcode:
    each copy's control row is constants (`control=`), so XLA folds away
    the paths its opcode does not take. `opcodes` get a copy each; any
    other opcode the generic step (the last branch)."""
    def branch(row):
        constants = [int(v) for v in row]
        return lambda c: cpu6502.step(c[0], c[1], bus,
                                      control=lambda _: constants)
    branches = [branch(cpu6502.CONTROL_TABLE[op]) for op in opcodes] + [
        lambda c: cpu6502.step(c[0], c[1], bus)]
    index = np.full(256, len(opcodes), np.int32)
    index[opcodes] = np.arange(len(opcodes))

    def body(_, c):
        _, opcode = bus.read(c[1], c[0].pc, c[0].cycles, True)
        return jax.lax.switch(jnp.asarray(index)[opcode], branches, c)
    return jax.lax.fori_loop(0, steps, body, carry)


def _designs(steps: int, all_opcodes: bool = False
             ) -> dict[str, tuple[Callable, Callable[[], Any]]]:
    """name -> (unbatched run, unbatched initial state); with
    `all_opcodes`, the specialized switch has a copy for each of the 256
    (about a minute's compile), else for the program's 9."""
    bus = zero_page_bus()
    opcodes = list(range(256)) if all_opcodes else OPCODES
    specialized = ("switch of cpu6502.step specialized per opcode"
                   + (" (all 256)" if all_opcodes else " (the program's 9)"))

    def jaxatari_run(carry):
        return cpu6502.run(carry[0], carry[1], bus, steps)
    return {
        "cpu6502 (select every path)": (jaxatari_run, lambda: (
            cpu6502.make_state(pc=ORIGIN), jnp.zeros(256, jnp.uint8))),
        "switch (one branch per opcode)": (
            lambda s: toy_run(s, steps), _toy_state),
        specialized: (
            lambda c: specialized_run(c, steps, bus, opcodes), lambda: (
                cpu6502.make_state(pc=ORIGIN), jnp.zeros(256, jnp.uint8)))}


def check_same(steps: int, all_opcodes: bool = False) -> None:
    """Every design ends in the same machine after `steps` instructions
    (the specialized switch in all of `cpu6502.step`'s state)."""
    designs = _designs(steps, all_opcodes)
    cpu, ram = jax.jit(designs["cpu6502 (select every path)"][0])(
        designs["cpu6502 (select every path)"][1]())
    toy = jax.jit(designs["switch (one branch per opcode)"][0])(_toy_state())
    flags = int(cpu.p)
    ours = (int(cpu.a), int(cpu.x), int(cpu.pc), int(cpu.cycles), flags & 1,
            (flags >> 1) & 1, (flags >> 7) & 1, (flags >> 6) & 1)
    theirs = (int(toy.a), int(toy.x), int(toy.pc), int(toy.cycles),
              int(toy.c), int(toy.z), int(toy.n), int(toy.v))
    assert ours == theirs, (ours, theirs)
    assert np.array_equal(np.asarray(ram), np.asarray(toy.ram))
    assert np.asarray(ram)[0x80:0x90].any()
    for name, (run, init) in designs.items():
        if name.startswith("switch of cpu6502.step"):
            for x, y in zip(jax.tree.leaves((cpu, ram)),
                            jax.tree.leaves(jax.jit(run)(init())),
                            strict=True):
                assert np.array_equal(np.asarray(x), np.asarray(y)), name


def measure(name: str, run: Callable, init: Callable[[], Any], batch: int,
            steps: int, repeats: int) -> dict[str, Any]:
    """Nanoseconds per console-instruction of `run` on `batch` consoles:
    unbatched at batch 1; else `vmap`ped (cpu6502, as the console runs
    it) or one console after another (`lax.map`, the switch: each
    console's loop a kernel of its own)."""
    state = init()
    if batch > 1:
        state = jax.tree.map(lambda x: jnp.broadcast_to(
            x, (batch,) + jnp.shape(x)), state)
        run = jax.vmap(run) if name.startswith("cpu6502") else (
            lambda states, one=run: jax.lax.map(one, states))
    compiled = jax.jit(run).lower(state).compile()
    jax.block_until_ready(compiled(state))
    times = []
    for _ in range(repeats):
        begin = time.perf_counter()
        jax.block_until_ready(compiled(state))
        times.append(time.perf_counter() - begin)
    seconds = statistics.median(times)
    return {"design": name, "batch": batch, "steps": steps,
            "ns_per_console_instruction": round(seconds / steps / batch * 1e9,
                                                2),
            "seconds_per_call": seconds, "backend": jax.default_backend(),
            "devices": 1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 1024])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--all-opcodes", action="store_true",
                        help="specialize all 256 opcodes, not the 9")
    args = parser.parse_args()
    check_same(1000, args.all_opcodes)
    for batch in args.batches:
        steps = max(args.steps // batch, 100)
        for name, (run, init) in _designs(steps, args.all_opcodes).items():
            print(json.dumps(measure(name, run, init, batch, steps,
                                     args.repeats)), flush=True)


if __name__ == "__main__":
    main()
