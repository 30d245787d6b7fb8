"""jaxatari.games.i_to_l against ale-py (see tests/games/harness.py).

Two games need more than the shared harness gives:

* Keystone Kapers and Laser Gates start with ALE's RESET action (id 40),
  which the harness's static check (joystick actions only) does not know;
  `test_static_facts_match_ale` checks them without it, and the RESET start
  on its own.
* Klax reads Superchip (cartridge) RAM, which ale-py's `getRAM` does not
  return. Its tests read that RAM out of `cloneState().serialize()`, poke it
  through `restoreState`, and feed the rules RIOT + Superchip RAM.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import games
from jaxatari.games.i_to_l import ALE_RESET, KLAX_RAM_SIZE
from tests.games import harness
from tests.games.harness import Plan, game_tests

ale_py = pytest.importorskip("ale_py")

PLANS = {
    "ice_hockey": Plan(2, 2000, 2000, pokes=(0x8A, 0x8B, 0x86, 0x87),
                       special=(0, 1, 0x99), script=((0x87, 0), (0x86, 0)),
                       lives="none", ends=False),
    "jamesbond": Plan(1, 2000, 4000, pokes=(0xDC, 0xDD, 0xDE, 0x86, 0x8C),
                      special=(0, 0x10, 0x68)),
    "journey_escape": Plan(1, 2000, 3300,
                           pokes=(0x90, 0x91, 0x92, 0x95, 0x96),
                           special=(0, 0x05),
                           script=((0x90, 0x00), (0x90, 0x05), (0x95, 0),
                                   (0x96, 0)),
                           lives="none"),
    "kaboom": Plan(1, 2000, 4000, pokes=(0xA3, 0xA4, 0xA5, 0xA1),
                   special=(0, 0x99),
                   script=((0xA3, 0x99), (0xA4, 0x99), (0xA5, 0x99))),
    "kangaroo": Plan(1, 2000, 3000, bias={1: 4, 11: 4, 12: 4},
                     pokes=(0xA7, 0xA8, 0xAD), special=(0, 0xFF)),
    "keystone_kapers": Plan(28, 2000, 4000,
                            pokes=(0x9B, 0x9C, 0x96, 0x88), special=(0,),
                            script=((0x96, 0), (0x88, 0)), ends=False),
    "king_kong": Plan(8, 2000, 3000, pokes=(0x82, 0x83, 0xEE), special=(0,),
                      ends=False),
    "koolaid": Plan(1, 2000, 4000, pokes=(0x80, 0x81, 0xD1), special=(0x80,),
                    lives="none", scores=False),
    "krull": Plan(1, 2000, 6000, pokes=(0x9C, 0x9D, 0x9E, 0x9F, 0xA2, 0x80),
                  special=(0, 3, 0x80),
                  script=((0x9F, 0), (0xA2, 3), (0x80, 0x80))),
    "kung_fu_master": Plan(1, 2000, 5000,
                           pokes=(0x98, 0x99, 0x9A, 0x9D), special=(0xFF,)),
    "laser_gates": Plan(4, 2000, 2500, pokes=(0x80, 0x81, 0x82, 0x83),
                        special=(0,), lives="none"),
    "lost_luggage": Plan(1, 2000, 5000,
                         pokes=(0x94, 0x95, 0x96, 0xCA, 0xC8, 0xA5, 0xA9),
                         special=(0, 0x0A)),
}

(test_rules_match_ale, _static_facts_with_joystick_starts,
 test_mode_shown_matches_ale, test_set_mode_protocol) = game_tests(PLANS)


@pytest.mark.parametrize("game", sorted(PLANS) + ["klax"])
def test_static_facts_match_ale(game: str,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness's static checks, RESET starting actions set aside.

    ALE's `getStartingActions()` of Keystone Kapers and Laser Gates is
    `{RESET}` (id 40): one frame with the console's RESET switch held.
    """
    rules = games.GAMES[game]
    joystick = tuple(a for a in rules.starting_actions if a != ALE_RESET)
    if joystick != rules.starting_actions:
        assert game in ("keystone_kapers", "laser_gates")
        assert rules.starting_actions == (ALE_RESET,)
        monkeypatch.setitem(games.GAMES, game, dataclasses.replace(
            rules, starting_actions=joystick))
    harness.check_static_facts(game)


# ---------------------------------------------------------------------------
# Klax: RIOT RAM plus the Superchip's 128 bytes.

_CART_TAG = b"CartridgeF6SC"


def _superchip_start(state: bytes) -> int:
    """Where Superchip byte 0 sits in a serialized ALE state.

    The cart saves its name, its bank and the count 128 (int32 each), then
    every RAM byte as an int32.
    """
    return state.index(_CART_TAG) + len(_CART_TAG) + 8


def _klax_ram(ale: ale_py.ALEInterface) -> np.ndarray:
    """RIOT RAM followed by Superchip RAM, as the Klax rules read them."""
    state = bytes(ale.cloneState().serialize())
    cart = np.frombuffer(state, "<i4", count=128,
                         offset=_superchip_start(state))
    return np.concatenate([ale.getRAM(), cart.astype(np.uint8)])


def _poke_klax(ale: ale_py.ALEInterface, pokes: dict[int, int]) -> None:
    """Pokes RIOT ($80-$FF) and Superchip ($F080-$F0FF) bytes."""
    state = bytearray(ale.cloneState().serialize())
    start = _superchip_start(bytes(state))
    for addr, value in pokes.items():
        if addr >= 0x100:
            at = start + 4 * (addr & 0x7F)
            state[at:at + 4] = int(value).to_bytes(4, "little")
    ale.restoreState(ale_py.ALEState(bytes(state)))
    for addr, value in pokes.items():
        if addr < 0x100:
            ale.setRAM(addr - 0x80, value)


_KLAX_WELL = tuple(range(0xB3, 0xB3 + 25))
_KLAX_POKES = (0xF0B4, 0xF0B5, 0xF0B6, 0xF0E9, 0xF0EE, 0xF09D, 0xA8)
# Frames of the poke phase, each with the pokes made before it: a zero miss
# limit (no game over), the last level, then a full well in a running game.
_KLAX_SCRIPT = (
    {0xF0E9: 0, 0xF0EE: 0},
    {0xF09D: 0x99},
    {0xA8: 4, **{cell: 0x0C for cell in _KLAX_WELL}},
)


def _klax_poke(rng: np.random.Generator) -> dict[int, int]:
    """One random poke of a Klax rule byte."""
    addr = _KLAX_POKES[rng.integers(len(_KLAX_POKES))]
    if rng.random() < 0.5:
        return {addr: int(rng.choice([0, 3, 4, 0x99]))}
    return {addr: int(rng.integers(256))}


def _record_klax(seed: int, frames: int,
                 poke_frames: int) -> dict[str, np.ndarray]:
    """ale-py's Klax: random play, then a phase with pokes and the script."""
    ale = harness.new_ale("klax", seed)
    actions = ale.getMinimalActionSet()
    rng = np.random.default_rng(seed)
    rows = []

    def keep(is_reset: bool, poked: bool, reward: int) -> None:
        rows.append((_klax_ram(ale), is_reset, poked, reward,
                     ale.game_over(), ale.lives()))

    keep(True, False, 0)
    script = list(_KLAX_SCRIPT)
    for frame in range(frames + poke_frames):
        poked = frame >= frames
        if poked and script:
            _poke_klax(ale, script.pop(0))
        elif poked and rng.random() < 0.1:
            _poke_klax(ale, _klax_poke(rng))
        keep(False, poked, ale.act(actions[rng.integers(len(actions))]))
        if ale.game_over():
            ale.reset_game()
            keep(True, poked, 0)
    names = ("ram", "is_reset", "poked", "reward", "terminal", "lives")
    return {name: np.array(column) for name, column in
            zip(names, zip(*rows, strict=True), strict=True)}


def _run_klax(ram: np.ndarray,
              is_reset: np.ndarray) -> tuple[np.ndarray, ...]:
    """Klax's `step` scanned over a recording, restarting at resets."""
    rules = games.GAMES["klax"]

    def body(vars_: jax.Array, xs: tuple[jax.Array, jax.Array],
             ) -> tuple[jax.Array, tuple[jax.Array, ...]]:
        frame, reset = xs
        vars_ = jnp.where(reset, rules.reset_vars(), vars_)
        reward, terminal, lives, new_vars = rules.step(frame, vars_)
        return new_vars, (reward, terminal, lives, vars_)

    scan = jax.jit(lambda r, s: jax.lax.scan(body, rules.reset_vars(),
                                             (r, s))[1])
    return jax.device_get(scan(ram, is_reset))


def test_klax_rules_match_ale() -> None:
    """Klax's reward, game over and lives are ALE's on every frame."""
    trace = _record_klax(seed=1, frames=3000, poke_frames=1500)
    reward, terminal, lives, vars_in = _run_klax(trace["ram"],
                                                 trace["is_reset"])
    played = ~trace["is_reset"]
    np.testing.assert_array_equal(reward[played], trace["reward"][played])
    np.testing.assert_array_equal(terminal, trace["terminal"])
    np.testing.assert_array_equal(lives, trace["lives"])
    batched = jax.jit(jax.vmap(games.GAMES["klax"].step))(trace["ram"],
                                                          vars_in)
    np.testing.assert_array_equal(jax.device_get(batched[1]), terminal)
    _check_klax_coverage(trace)


def _check_klax_coverage(trace: dict[str, np.ndarray]) -> None:
    """Every game-over rule ended a game; random play scored and ended."""
    ram = trace["ram"].astype(np.int32)
    cart = ram[:, 128:]
    limit, misses = cart[:, 0x69], cart[:, 0x6E]
    plain = ~trace["is_reset"] & ~trace["poked"]
    assert (trace["reward"][plain] != 0).any()
    assert trace["terminal"][plain].any()
    ended = trace["terminal"] & ~trace["is_reset"]
    assert (ended & (limit > 0) & (misses == limit)).any()
    assert (ended & (cart[:, 0x1D] == 0x99)).any()
    well = ram[:, 0x33:0x33 + 25]
    full = ~np.isin(well, (0, 2, 6, 10, 14)).any(axis=1)
    assert (ended & full & (ram[:, 0x28] == 4)).any()
    assert ((limit == 0) & (misses == 0) & ~trace["terminal"]).any()


def _klax_post_reset_rams() -> dict[int, np.ndarray]:
    """ale-py's RIOT + Superchip RAM after `setMode(m)` + `reset_game()`."""
    ale = harness.new_ale("klax", 0)
    rams = {}
    for mode in games.GAMES["klax"].modes:
        ale.setMode(mode)
        ale.reset_game()
        rams[mode] = _klax_ram(ale)
    return rams


def test_klax_mode_shown_matches_ale() -> None:
    """After ALE's reset in mode m, only `mode_shown(ram, m)` holds."""
    rules = games.GAMES["klax"]
    for mode, ram in _klax_post_reset_rams().items():
        assert len(ram) == KLAX_RAM_SIZE
        shown = [m for m in rules.modes if rules.mode_shown(ram, m)]
        assert shown == [mode]
    with pytest.raises(ValueError, match="Superchip"):
        rules.mode_shown(np.zeros(128, np.uint8), 0)


def test_klax_set_mode_protocol() -> None:
    """SELECT (2 frames a press) until the mode shows, then RESET."""
    rules = games.GAMES["klax"]
    rams = _klax_post_reset_rams()
    with pytest.raises(ValueError, match="modes are"):
        rules.set_mode(harness.FakeOps([rams[0]]), 3)
    for target in rules.modes:
        ops = harness.FakeOps([rams[m] for m in rules.modes])
        rules.set_mode(ops, target)
        assert ops.calls == [("select", 2)] * target + [("reset",)]


# ---------------------------------------------------------------------------
# Lost Luggage: SELECT shows the game number in a byte RESET clears.

harness.CUSTOM_SET_MODE.add("lost_luggage")


def test_lost_luggage_set_mode() -> None:
    """SELECT (2 frames a press) until $94 reads game 1 + 3 m, then RESET.

    $94 is also the score's top byte, so ALE's post-reset RAM shows 0 there;
    it shows the game chosen in $A7 (game number less one). The select
    screens here are ALE's post-reset RAM of mode 0 with $94 stepped
    through 0 and games 1 to 8.
    """
    rules = games.GAMES["lost_luggage"]
    assert rules.mode_shown is None
    rams = harness.post_reset_rams("lost_luggage")
    for mode, ram in rams.items():
        assert (int(ram[0x14]), int(ram[0x27])) == (0, 3 * mode)
    screens = []
    for game_number in range(9):
        screen = rams[0].copy()
        screen[0x14] = game_number
        screens.append(screen)
    for mode, presses in ((0, 1), (1, 4)):
        ops = harness.FakeOps(screens)
        rules.set_mode(ops, mode)
        assert ops.calls == [("select", 2)] * presses + [("reset",)]
    with pytest.raises(ValueError, match="modes are"):
        rules.set_mode(harness.FakeOps(screens), 2)
