"""Short parity with ale-py for the Superchip, DPC and PAL games.

Elevator Action (F8SC), Dark Chambers (F6SC), Klax (F6SC, PAL) and Pitfall
II (DPC) boot as ALE's `loadROM` does and play seeded random actions at
frameskip 1, all four in one lock-step batch (one program, widened to the
union of their features: Superchip RAM, DPC and 250 screen rows). After
the boot and after every frame the RIOT RAM, the screen (250 rows for
Klax), the Superchip RAM and the DPC registers (read from ALE's serialized
state), the reward, game over and lives must equal ALE's; halfway both
call `reset_game()` (Superchip RAM refilled, later RIOT timer draws).
PARITY.md has 1,500-frame runs of the four.
"""
from __future__ import annotations

import struct

import jax
import numpy as np
import pytest

from jaxatari import environment, lockstep, parity

pytest.importorskip("ale_py")

GAMES = ("elevator_action", "darkchambers", "klax", "pitfall2")
STEPS, RESET_AT, SEED = 40, 20, 3
TRUE = 0xFAB1FAB2   # Stella's serialized `true`


def _ale_chips(ale) -> dict:
    """The cart's registers from ALE's serialized state."""
    data = ale.cloneState().serialize()
    at = data.index(b"Cartridge")
    (length,) = struct.unpack_from("<i", data, at - 4)
    name = data[at:at + length].decode()
    ints = struct.unpack_from("<43i", data, at + length)
    if name.endswith("SC"):
        ram = [v & 0xFF for v in struct.unpack_from(
            "<128i", data, at + length + 8)]
        return {"ram": ram}
    rows = [list(ints[2 + 9 * k:10 + 9 * k]) for k in range(4)]
    music = [(v & 0xFFFFFFFF) == TRUE for v in ints[38:41]]
    return {"fetchers": rows, "music": music, "random": ints[41],
            "cycles": ints[42]}


def _our_chips(group: lockstep.Lockstep, index: int) -> dict:
    chips = jax.tree.map(lambda x: np.asarray(x[index]),
                         group.machines.chips)
    env = group.envs[index]
    if env.cart.has_ram:
        return {"ram": chips.ram.tolist()}
    misc = chips.dpc.misc
    return {"fetchers": chips.dpc.fetchers.tolist(),
            "music": [bool((misc[0] >> k) & 1) for k in range(3)],
            "random": int(misc[1]), "cycles": int(misc[2])}


def _script(group: lockstep.Lockstep, index: int):
    def script(handle: lockstep.Handle) -> dict:
        game = handle.rules.rom_id
        ale = parity.boot_both(handle, game, SEED)
        rng = np.random.RandomState(SEED)
        actions = handle.rules.minimal_actions
        resets = 0
        ours = theirs = (0, False)
        for step in range(STEPS + 1):
            where = f"{game} step {step}"
            assert handle.ram()[:128].tolist() == ale.getRAM().tolist(), where
            screen, ale_screen = handle.screen(), ale.getScreen()
            assert screen.shape == ale_screen.shape, where
            assert (screen != ale_screen).sum() == 0, where
            assert _our_chips(group, index) == _ale_chips(ale), where
            assert ours == theirs, where
            assert handle.lives == ale.lives(), where
            if step == STEPS:
                break
            if step == RESET_AT or ale.game_over():
                resets += 1
                parity.reset_both(ale, handle, resets)
                ours = theirs = (0, False)
                continue
            action = int(actions[rng.randint(len(actions))])
            theirs, ours = parity.act_both(ale, handle, action)
        return {"game": game, "resets": resets}
    return script


def test_carts_parity():
    envs = [environment.AtariEnv(game) for game in GAMES]
    group = lockstep.Lockstep(envs)
    assert group.slots.board.features.rows == 250
    results = group.run([_script(group, k) for k in range(len(envs))])
    assert all(r["resets"] >= 1 for r in results)
