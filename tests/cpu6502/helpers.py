"""Shared compiled programs and oracle runners for the CPU tests.

Every JAX function here is compiled once per process (and cached on disk),
whatever the test that calls it first.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari import cpu6502, flatbus
from tests.cpu6502.stella_py65 import StellaMPU

REGISTERS = ("a", "x", "y", "sp", "pc", "p", "cycles", "jammed")
BUS = flatbus.FLAT_BUS


def random_memory(seed: int, avoid_jams: bool = False) -> np.ndarray:
    """64 KiB of random bytes; optionally with no JAM opcode in them."""
    memory = np.random.default_rng(seed).integers(0, 256, 0x10000, np.uint8)
    if avoid_jams:
        memory[np.isin(memory, cpu6502.JAM_OPCODES)] = 0xEA
    return memory


def cpu_states(a, x, y, sp, pc, p) -> cpu6502.CPUState:
    """A batch of CPU states from equal-length integer sequences."""
    i32 = lambda v: jnp.asarray(np.asarray(v), jnp.int32)
    return cpu6502.CPUState(
        a=i32(a), x=i32(x), y=i32(y), sp=i32(sp), pc=i32(pc),
        p=i32(np.asarray(p) | 0x30), cycles=jnp.zeros(len(a), jnp.int32),
        jammed=jnp.zeros(len(a), bool))


@functools.cache
def batched_run(num_instructions: int):
    """jit(vmap(run)) on the flat bus: (cpus, memories) -> (cpus, memories)."""
    def one(cpu, memory):
        cpu, state = cpu6502.run(cpu, flatbus.flat_memory(memory), BUS,
                                 num_instructions)
        return cpu, state.memory
    return jax.jit(jax.vmap(one))


@functools.cache
def batched_trace(num_instructions: int):
    """jit(vmap(...)): registers after every instruction, [batch, n, 8]."""
    def one(cpu, memory):
        def body(carry, _):
            cpu, state = cpu6502.step(*carry, BUS)
            return (cpu, state), jnp.stack([
                getattr(cpu, name).astype(jnp.int32) for name in REGISTERS])
        (cpu, state), trace = jax.lax.scan(
            body, (cpu, flatbus.flat_memory(memory)), None,
            length=num_instructions)
        return trace, BUS.settle(state).memory
    return jax.jit(jax.vmap(one))


def registers_of(cpus: cpu6502.CPUState, i: int) -> dict[str, int]:
    return {name: int(getattr(cpus, name)[i]) for name in REGISTERS}


def py65_registers(mpu) -> dict[str, int]:
    return dict(a=mpu.a, x=mpu.x, y=mpu.y, sp=mpu.sp, pc=mpu.pc, p=mpu.p,
                cycles=mpu.processorCycles,
                jammed=int(getattr(mpu, "jammed", False)))


def make_mpu(memory: np.ndarray, a, x, y, sp, pc, p, mpu_class=StellaMPU):
    mpu = mpu_class(memory=memory.tolist(), pc=int(pc))
    mpu.a, mpu.x, mpu.y, mpu.sp = int(a), int(x), int(y), int(sp)
    mpu.p = int(p) | 0x30
    return mpu


def one_instruction(opcode: int, state: dict, mpu_class=StellaMPU):
    """Runs one instruction in jaxatari and in the oracle.

    `state` holds a, x, y, sp, p, pc, operand bytes b1, b2 and a memory
    seed. Returns (ours, theirs, our memory, their memory).
    """
    memory = random_memory(state["seed"])
    pc = state["pc"]
    memory[pc], memory[(pc + 1) & 0xFFFF], memory[(pc + 2) & 0xFFFF] = (
        opcode, state["b1"], state["b2"])
    regs = [state[k] for k in ("a", "x", "y", "sp", "pc", "p")]
    cpus, memories = batched_run(1)(cpu_states(*[[r] for r in regs]),
                                    jnp.asarray(memory[None]))
    mpu = make_mpu(memory, *regs, mpu_class=mpu_class)
    mpu.step()
    return (registers_of(cpus, 0), py65_registers(mpu),
            np.asarray(memories[0]), np.asarray(mpu.memory, np.uint8))


def memory_diff(ours: np.ndarray, theirs: np.ndarray) -> str:
    where = np.flatnonzero(ours != theirs)[:8]
    return ", ".join(f"${a:04X}: ours {ours[a]:02X} oracle {theirs[a]:02X}"
                     for a in where)


def assert_matches_oracle(opcode: int, state: dict) -> None:
    """One instruction leaves registers, cycles and memory as StellaMPU."""
    ours, theirs, our_memory, their_memory = one_instruction(opcode, state)
    assert ours == theirs
    assert (our_memory == their_memory).all(), memory_diff(our_memory,
                                                           their_memory)


def opcode_id(opcode: int) -> str:
    """A readable pytest id: 6D_ADC_abs."""
    return (f"{opcode:02X}_{cpu6502.MNEMONICS[opcode]}"
            f"_{cpu6502.MODES[opcode]}")
