"""How often an instruction leaves RAM and ROM: the design input of a
kernel that runs plain instructions and hands the rest back.

A one-kernel design for the accelerator (issue #18) could run, in a
Pallas kernel, every instruction whose accesses are all plain: RIOT RAM,
and cartridge ROM away from hotspots and DPC registers (`bus.peek`'s
"plain"; for writes, RIOT RAM only). An instruction that touches the
TIA, the RIOT's ports or timer, a hotspot or cartridge RAM is an
*event*, which XLA's loop would handle, one per console per trip. This
counts them: one console, from the game's first reset state, run
instruction by instruction (`console._instruction`, the CPU's lowering),
each classified first by `cpu6502.step` on a bus that only peeks and
notes (as `bus.collision_read` plans a read).

Prints one JSON line per frame: instructions, events, the events that
write the TIA or the RIOT's ports, and the mean and longest runs of
plain instructions between events.

Usage: python benchmarks/bus_events.py --games pong breakout --frames 2
"""
from __future__ import annotations

import argparse
import json

import jax
import jax.numpy as jnp
import numpy as np

import jaxatari
from jaxatari import bus, console, cpu6502


def _inputs(rng: np.random.Generator) -> console.Inputs:
    """Random joystick directions and fire buttons for a frame."""
    return console.Inputs(
        swcha=jnp.int32(int(rng.choice([0xFF, 0x7F, 0xBF]))),
        swchb=jnp.int32(0x0B),
        fire=jnp.asarray(rng.integers(0, 2, 2), jnp.int32),
        paddle_needed=jnp.full((4,), -2, jnp.int32))


def _instruction(board: console.Board, inputs: console.Inputs):
    """One console's next instruction, its TIA writes applied, jitted."""
    write_each = lambda state, k, waited, on: console._write_logged(
        board, inputs, False, state, k, waited, on)
    loop = console._Loop(board, inputs, False, console._per_console(None),
                         lambda x: x, write_each, None, None)
    return jax.jit(lambda state: console._instruction(
        loop, state, jnp.asarray(True)))


def _classifier(board: console.Board):
    """Whether a console's next instruction is an event, and whether it
    writes outside RIOT RAM (jitted)."""
    def classify(state):
        def read(notes, address, cycle, enabled):
            value, plain = bus.peek(board, state, address)
            return notes + ((enabled, plain, False),), value

        def write(notes, address, value, cycle, enabled):
            return notes + ((enabled, (address & 0x1280) == 0x80, True),)
        _, notes = cpu6502.step(state.cpu, (), cpu6502.Bus(
            read=read, write=write), jnp.asarray(True))
        enabled, plain, writes = (jnp.stack([jnp.asarray(n[i]) for n in
                                             notes]) for i in range(3))
        outside = enabled & ~plain
        return jnp.any(outside), jnp.any(outside & writes)
    return jax.jit(classify)


def count(game: str, frames: int, seed: int = 0) -> list[dict]:
    """The events of `frames` frames of `game` (see the module)."""
    env, params = jaxatari.make(game)
    board = env.board
    state = jax.tree.map(lambda x: x[0], params.reset_states.machine)
    classify = _classifier(board)
    begin = jax.jit(lambda s: console._begin(board, s, False))
    end = jax.jit(lambda s, stop: console._end(board, s, False, stop))
    rng = np.random.default_rng(seed)
    rows = []
    for frame in range(frames):
        step = _instruction(board, _inputs(rng))
        state = begin(state)
        instructions = events = writes = run = 0
        runs = []
        ends = False
        while not ends and instructions < console.INSTRUCTIONS_PER_UPDATE:
            event, outside_write = (bool(x) for x in classify(state))
            instructions, events = instructions + 1, events + event
            writes += outside_write
            runs, run = (runs + [run], 0) if event else (runs, run + 1)
            state, ends = step(state)
            ends = bool(ends)
        state = end(state, jnp.asarray(ends))
        rows.append({"game": game, "frame": frame,
                     "instructions": instructions, "events": events,
                     "outside_writes": writes,
                     "mean_plain_run": round(float(np.mean(runs)), 2),
                     "longest_plain_run": int(max(runs))})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", nargs="+", default=["pong"])
    parser.add_argument("--frames", type=int, default=2)
    args = parser.parse_args()
    for game in args.games:
        for row in count(game, args.frames):
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
