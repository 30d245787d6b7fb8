"""jaxatari.environment: the paddle threshold and the cheap parts of the API.

No test here boots a game (`make` normally does, for about a minute):
`AtariEnv.default_params` is replaced by one that returns plain parameters.
"""
from __future__ import annotations

import collections

import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import environment
from jaxatari.environment import (PADDLE_CENTRE, PADDLE_DELTA, PADDLE_MAX,
                                  PADDLE_MIN)


def _reachable_resistances() -> list[int]:
    """Every resistance ALE's discrete paddle reaches from the centre.

    ALE moves the resistance by +-PADDLE_DELTA per frame (strength 1) and
    clips it to [PADDLE_MIN, PADDLE_MAX]; breadth-first over both moves.
    """
    seen, queue = {PADDLE_CENTRE}, collections.deque([PADDLE_CENTRE])
    while queue:
        r = queue.popleft()
        for step in (PADDLE_DELTA, -PADDLE_DELTA):
            nxt = min(max(r + step, PADDLE_MIN), PADDLE_MAX)
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return sorted(seen)


def _stella_cycles(r: int) -> int:
    """Stella's `(uInt32)(1.6 * r * 0.01e-6 * 1.19e6)`, in doubles.

    Python floats are IEEE doubles and `*` associates left to right as in
    C; the cast of a positive double to an unsigned integer truncates.
    """
    return int(1.6 * r * 0.01e-6 * 1.19e6)


def test_reachable_resistances_cover_both_clips():
    rs = _reachable_resistances()
    assert rs[0] == PADDLE_MIN and rs[-1] == PADDLE_MAX
    assert PADDLE_CENTRE == 408823   # ALE's reset value (ale-facts §2.4.7)
    # Three chains: from the centre, from PADDLE_MIN and from PADDLE_MAX.
    assert len({(r - PADDLE_MIN) % PADDLE_DELTA for r in rs}) == 3


def test_paddle_cycles_equals_stella_double_formula():
    rs = _reachable_resistances()
    ours = np.asarray(environment.paddle_cycles(jnp.asarray(rs, jnp.int32)))
    wrong = [(r, int(c), _stella_cycles(r)) for r, c in zip(rs, ours)
             if int(c) != _stella_cycles(r)]
    assert not wrong, f"(resistance, jaxatari, Stella): {wrong}"


def test_paddle_cycles_equals_stella_over_the_whole_range():
    """Stronger than the docstring's claim: every integer resistance in
    [PADDLE_MIN, PADDLE_MAX] agrees (numpy float64 is the same IEEE double
    arithmetic, in the same order)."""
    rs = np.arange(PADDLE_MIN, PADDLE_MAX + 1)
    stella = (1.6 * rs.astype(np.float64) * 0.01e-6 * 1.19e6).astype(np.int64)
    ours = np.asarray(environment.paddle_cycles(jnp.asarray(rs, jnp.int32)))
    wrong = rs[ours != stella]
    assert wrong.size == 0, f"first resistances that differ: {wrong[:5]}"
    assert all(stella[r - PADDLE_MIN] == _stella_cycles(int(r))
               for r in rs[::997])


# --------------------------------------------------------------------------
# make() without booting.
# --------------------------------------------------------------------------


@pytest.fixture
def no_boot(monkeypatch):
    """`default_params` returns defaults instead of booting the game."""
    monkeypatch.setattr(environment.AtariEnv, "default_params",
                        lambda self: environment.EnvParams())


def test_make_unknown_game_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown game 'not_a_game'") as info:
        environment.make("not_a_game")
    assert "breakout" in str(info.value)


def test_make_rejects_a_mode_the_game_lacks():
    with pytest.raises(ValueError, match="mode 999"):
        environment.make("breakout", mode=999)


def test_make_unknown_setting_raises_type_error(no_boot):
    with pytest.raises(TypeError, match="frameskp"):
        environment.make("breakout", frameskp=4)


def test_make_rejects_unknown_setting_before_booting(monkeypatch):
    def boot(self):
        raise AssertionError("make() booted the game first")
    monkeypatch.setattr(environment.AtariEnv, "default_params", boot)
    with pytest.raises(TypeError, match="frameskp"):
        environment.make("breakout", frameskp=4)


def test_make_applies_overrides_and_gym_names(no_boot):
    env, params = environment.make("ALE/Breakout-v5", full_action_space=True,
                                   frameskip=1, repeat_action_probability=0.0)
    assert env.rules.rom_id == "breakout"
    assert env.action_set == tuple(range(18))
    assert (params.frameskip, params.repeat_action_probability) == (1, 0.0)


def test_switches_match_ale_swchb():
    """SWCHB: 0x3F by default; RESET clears bit 0, SELECT bit 1; the mode's
    difficulty sets bits 6 (left) and 7 (right)."""
    assert int(environment.switches(0)) == 0x3F
    assert int(environment.switches(0, reset=True)) == 0x3E
    assert int(environment.switches(0, select=True)) == 0x3D
    assert int(environment.switches(3)) == 0xFF
