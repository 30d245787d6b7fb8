"""`bus.collision_read`: the plan that decides whether the collision
latches are drawn before an instruction.

A false "no" would let a TIA read see stale latches, so the plan is checked
against the accesses the instruction really makes on the Atari bus, over
random instructions, registers, RAM and bank states: wherever an
instruction reads a collision register, the plan says so, at that read's
clock whenever the bytes the addresses come from were plain ROM or RAM.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import cart as cartridge
from jaxatari import bus, console, cpu6502

BATCH = 4096


def _board(tmp_path, size: int, scheme: str) -> console.Board:
    rng = np.random.default_rng(size)
    image = rng.integers(0, 256, size, dtype=np.uint8)
    path = tmp_path / f"random_{size}.bin"
    path.write_bytes(image.tobytes())
    cart = cartridge.load_cartridge(path)
    assert cart.scheme == scheme
    return console.make_board(cart, ystart=34, hmove_blanks=False)


def _actual_reads(board: console.Board, state: console.Console):
    """Each read slot's (address, cycle, enabled) on the real bus."""
    real = bus.atari_bus(board, console._idle_inputs())

    def read(carry, address, cycle, enabled):
        bus_state, reads = carry
        bus_state, value = real.read(bus_state, address, cycle, enabled)
        return (bus_state, reads + ((address, cycle, enabled),)), value

    def write(carry, address, value, cycle, enabled):
        bus_state, reads = carry
        return real.write(bus_state, address, value, cycle, enabled), reads

    _, (_, reads) = cpu6502.step(state.cpu, (state, ()),
                                 cpu6502.Bus(read=read, write=write))
    return tuple(jnp.stack(column) for column in zip(*reads))


def _collision_hits(board: console.Board, state: console.Console):
    """Which read slots on the real bus read a collision latch, the colour
    clock of the latest such read (0 if none), and whether the bytes the
    addresses come from (the first four reads) were plain ROM or RAM, so
    that a plan can be sure of them."""
    address, cycle, enabled = _actual_reads(board, state)
    hits = enabled & ((address & 0x1080) == 0) & ((address & 0xF) < 8)
    in_cart = (address & 0x1000) != 0
    plain = jnp.where(in_cart, board.cart.hotspot_mask[
        address & 0xFFF] == 0, (address & 0x1280) == 0x80)
    clock = jnp.max(jnp.where(hits, cycle, 0)) * 3
    return hits, clock, jnp.all(~enabled[:4] | plain[:4])


def _random_state(board: console.Board, key: jax.Array,
                  banked: bool) -> console.Console:
    keys = jax.random.split(key, 4)
    byte = lambda k, shape=(): jax.random.randint(k, shape, 0, 256)
    pc_pick = jax.random.randint(keys[0], (), 0, 8)
    # Mostly code in the cart, sometimes in RIOT RAM, rarely in the TIA.
    pc = jnp.where(pc_pick < 6, 0xF000 | jax.random.randint(
        keys[1], (), 0, 0x1000), jnp.where(pc_pick < 7, 0x80 | byte(
            keys[1]) & 0x7F, byte(keys[1]) & 0x7F))
    regs = byte(keys[2], (4,))
    state = console.power_on(board)
    cpu = state.cpu.replace(a=regs[0], x=regs[1], y=regs[2], sp=regs[3],
                            pc=pc, cycles=jnp.int32(300))
    ram = byte(keys[3], (128,)).astype(jnp.uint8)
    if banked:  # F8: either bank
        state = state.replace(segments=jnp.where(
            jax.random.bernoulli(keys[0]), board.reset_segments,
            board.reset_segments ^ 4096))
    return state.replace(cpu=cpu, riot=state.riot.replace(ram=ram))


@pytest.mark.parametrize("size,scheme", [(4096, "4K"), (8192, "F8")])
def test_plan_never_misses_a_collision_read(tmp_path, size, scheme):
    board = _board(tmp_path, size, scheme)

    @jax.jit
    def check(key):
        def one(k):
            state = _random_state(board, k, size > 4096)
            planned, clock = bus.collision_read(board, state,
                                                     jnp.asarray(True))
            hits, actual_clock, sure = _collision_hits(board, state)
            return jnp.any(hits), planned, sure, clock == actual_clock
        return jax.vmap(one)(jax.random.split(key, BATCH))

    hits, planned, sure, same_clock = map(np.asarray,
                                          check(jax.random.key(size)))
    assert hits.sum() > BATCH // 20, "too few collision reads to test"
    assert not (hits & ~planned).any()
    assert (same_clock | ~hits | ~sure).all()
    # The plan is not a blanket yes: most instructions read no latch.
    assert planned.mean() < 0.6


def test_waiting_cpu_plans_no_read(tmp_path):
    board = _board(tmp_path, 4096, "4K")
    state = console.power_on(board)
    state = state.replace(cpu=state.cpu.replace(pc=jnp.int32(0x0002)))
    planned, _ = bus.collision_read(board, state, jnp.asarray(False))
    assert not bool(planned)
    planned, _ = bus.collision_read(board, state, jnp.asarray(True))
    assert bool(planned)  # an opcode fetch from the TIA reads CXP0FB
