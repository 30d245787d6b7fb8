"""jaxatari.games.c_to_d against ale-py (see tests/games/harness.py)."""

from __future__ import annotations


import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import games
from jaxatari.games.core import DOWN, LEFT, NOOP, RIGHT, UPFIRE
from tests.games import harness
from tests.games.harness import Plan, game_tests

# Crossbow's mode byte is also the score's low byte: it reads 0 after the
# reset, so its SELECT loop is checked here instead of against that RAM.
# Double Dunk's setMode walks an options menu with act() calls.
harness.CUSTOM_SET_MODE.update({"crossbow", "double_dunk"})

_FIRES = (1, 10, 11, 12, 13, 14, 15, 16, 17)

PLANS = {
    "carnival": Plan(1, 2000, 6000, pokes=(0xAD, 0xAE, 0x83),
                     special=(0, 1), lives="none"),
    # The second script poke ends the game by the game-3 rule.
    "casino": Plan(3, 2000, 6000, bias={1: 5},
                   pokes=(0x95, 0x8C, 0x9E, 0xD4), special=(0, 3, 0xAA),
                   script=((0xD4, 3), (0x9E, 0xAA))),
    "centipede": Plan(1, 2000, 6000, pokes=(0xF4, 0xF5, 0xF6, 0xED, 0xA6),
                      special=(0, 0x40, 0x70)),
    "chopper_command": Plan(1, 2000, 6000, pokes=(0xEC, 0xEE, 0xE4, 0xC2),
                            special=(0, 1, 0x10)),
    "crazy_climber": Plan(1, 2000, 4000, bias={2: 4},
                          pokes=(0x82, 0x83, 0x84, 0x85, 0xAA),
                          special=(0, 1, 9), ends=False),
    # Pressing down with the button picks a path on the map screen.
    "crossbow": Plan(1, 2000, 6000, bias={5: 4, 13: 4, 16: 2, 17: 2},
                     pokes=(0x8B, 0x8C, 0x8D, 0xE7), special=(0x82,)),
    # Walking down-right without shooting lets the monsters win.
    "darkchambers": Plan(1, 1500, 6000,
                         bias={**{a: 0.01 for a in _FIRES}, 8: 6},
                         pokes=(0xCC, 0xCF, 0xD5, 0xCA),
                         special=(0, 1, 2, 3, 0x80), scores=False,
                         poke_frames=600),
    "defender": Plan(1, 2000, 4000,
                     pokes=(0x9C, 0x9D, 0x9E, 0x9F, 0xA0, 0xA1, 0xC2),
                     special=(0, 0x0A, 0x1A, 0xAA), ends=False),
    "demon_attack": Plan(1, 2000, 6000,
                         pokes=(0x81, 0x83, 0x85, 0xF1, 0xF2),
                         special=(0, 0xAB, 0xBD, 0xCD, 0xEA),
                         script=((0x81, 0xAB), (0x83, 0xCD), (0x85, 0xEA),
                                 (0xF2, 0), (0xF1, 0xBD))),
    "donkey_kong": Plan(1, 2000, 6000,
                        pokes=(0x87, 0x88, 0xA3, 0x8F, 0x8B),
                        special=(0, 3, 0x1F)),
    # 23 points do not end the game, 24 do, while $FE reads 0xE7 (which it
    # does for about 126 frames after frame 2896 of this recording).
    "double_dunk": Plan(1, 2000, 2950, pokes=(0xF6, 0xF7, 0xFE),
                        special=(0x23, 0x24, 0x30, 0xE7),
                        script=((0xF7, 0x23), (0xF6, 0x23), (0xF7, 0x24)),
                        lives="none", ends=False),
}

(test_rules_match_ale, test_static_facts_match_ale,
 test_mode_shown_matches_ale, test_set_mode_protocol) = game_tests(PLANS)


class _CrossbowSelect(harness.FakeOps):
    """Crossbow's SELECT: $8D reads 0, then games 2, 3, ..., 8, 1, 2, ..."""

    def __init__(self) -> None:
        super().__init__([])
        self.presses = 0

    def ram(self) -> np.ndarray:
        ram = np.zeros(128, np.uint8)
        ram[0x0D] = self.presses % 8 + 1 if self.presses else 0
        return ram

    def press_select(self, n: int) -> None:
        self.calls.append(("select", n))
        self.presses += 1


@pytest.mark.parametrize("mode", games.GAMES["crossbow"].modes)
def test_crossbow_set_mode(mode: int) -> None:
    """pressSelect(2) until $8D - 1 is the mode, then RESET; as many SELECT
    presses as ALE's episode frame number after its reset."""
    ops = _CrossbowSelect()
    games.GAMES["crossbow"].set_mode(ops, mode)
    presses, _ = harness.post_reset("crossbow")[mode]
    assert ops.calls == [("select", 2)] * presses + [("reset",)]


class _DoubleDunkMenu(harness.FakeOps):
    """Double Dunk's options menu: DOWN moves the cursor ($B0) a row down;
    RIGHT / LEFT switch the current row's option bit of $80 on / off."""

    ROW_BITS = {2: 0x08, 3: 0x10, 4: 0x04, 5: 0x20}

    def __init__(self) -> None:
        super().__init__([np.zeros(128, np.uint8)])
        self.rams[0][0x00] = 0x82
        self.row = 0

    def act(self, action: int) -> None:
        super().act(action)
        ram = self.rams[0]
        bit = self.ROW_BITS.get(self.row, 0)
        if action == DOWN:
            self.row += 1
            ram[0x30] = 0x30 + self.row
        elif action == RIGHT:
            ram[0x00] |= bit
        elif action == LEFT:
            ram[0x00] &= ~np.uint8(bit)

    def press_select(self, n: int) -> None:
        self.calls.append(("select", n))


@pytest.mark.parametrize("mode", games.GAMES["double_dunk"].modes)
def test_double_dunk_set_mode(mode: int) -> None:
    """Menu options as the mode's bits, then RESET, UPFIRE, NOOP.

    The options it leaves in $80 are those of ALE's post-reset RAM, and it
    makes as many SELECT presses and act() calls as ALE counts frames.
    """
    ops = _DoubleDunkMenu()
    games.GAMES["double_dunk"].set_mode(ops, mode)
    frames, ram = harness.post_reset("double_dunk")[mode]
    assert ops.calls[0] == ("select", 1)
    assert ops.calls[-3:] == [("reset",), ("act", UPFIRE), ("act", NOOP)]
    menu = ops.calls[1:-3]
    assert menu[1::2] == [("act", NOOP)] * (len(menu) // 2)
    assert {call for call in menu[0::2]} <= {
        ("act", DOWN), ("act", RIGHT), ("act", LEFT)}
    assert len(ops.calls) - 1 == frames
    assert ops.rams[0][0x00] == ram[0x00]


def test_double_dunk_unknown_mode() -> None:
    """Modes 0-15 only, refused before any frame is emulated."""
    ops = _DoubleDunkMenu()
    with pytest.raises(ValueError, match="modes are"):
        games.GAMES["double_dunk"].set_mode(ops, 16)
    assert not ops.calls


def _ram(**values: int) -> jnp.ndarray:
    """128 zero bytes but for `values`, keyed by CPU address ("xE4")."""
    ram = np.zeros(128, np.uint8)
    for name, value in values.items():
        ram[int(name[1:], 16) - 0x80] = value
    return jnp.asarray(ram)


def test_chopper_command_needs_a_started_game() -> None:
    """No lives ($E4 low nibble 0) is no game over until bit 0 of $C2 has
    been set since the reset (ALE meets this on its reset frames, which
    the recordings do not show)."""
    rules = games.GAMES["chopper_command"]
    vars_ = rules.reset_vars()
    for c2, over in ((0x00, False), (0x02, False), (0x01, True),
                     (0x00, True)):
        _, terminal, lives, vars_ = rules.step(_ram(xE4=0x30, xC2=c2),
                                               vars_)
        assert bool(terminal) == over and int(lives) == 0


def test_darkchambers_game_over_sticks() -> None:
    """Once over, Dark Chambers stays over, even if RAM looks alive again
    (ALE stops emulating there, so the recordings never show it)."""
    rules = games.GAMES["darkchambers"]
    alive = _ram(xCA=0x12, xD5=3)
    _, terminal, _, vars_ = rules.step(alive, rules.reset_vars())
    assert not terminal
    _, terminal, _, vars_ = rules.step(_ram(xCA=0x12, xD5=2), vars_)
    assert terminal
    reward, terminal, lives, _ = rules.step(_ram(xCA=0x12, xD5=3, xCC=1),
                                            vars_)
    assert terminal and int(lives) == 0 and int(reward) == 10
