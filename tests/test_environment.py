"""jaxatari.environment: the paddle threshold and the cheap parts of the API.

No test here boots a game (`make` normally does, for about a minute):
`AtariEnv.default_params` is replaced by one that returns plain parameters,
or `AtariEnv.boot` by one that fails (bad settings raise before the boot).
"""
from __future__ import annotations

import collections
import re

import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari import controls, environment, settings
from jaxatari.controls import (PADDLE_CENTRE, PADDLE_DELTA, PADDLE_MAX,
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
    ours = np.asarray(controls.paddle_cycles(jnp.asarray(rs, jnp.int32)))
    wrong = [(r, int(c), _stella_cycles(r)) for r, c in zip(rs, ours)
             if int(c) != _stella_cycles(r)]
    assert not wrong, f"(resistance, jaxatari, Stella): {wrong}"


def test_paddle_cycles_equals_stella_over_the_whole_range():
    """Stronger than the docstring's claim: every integer resistance in
    [PADDLE_MIN, PADDLE_MAX] agrees (numpy float64 is the same IEEE double
    arithmetic, in the same order)."""
    rs = np.arange(PADDLE_MIN, PADDLE_MAX + 1)
    stella = (1.6 * rs.astype(np.float64) * 0.01e-6 * 1.19e6).astype(np.int64)
    ours = np.asarray(controls.paddle_cycles(jnp.asarray(rs, jnp.int32)))
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
    assert int(controls.switches(0)) == 0x3F
    assert int(controls.switches(0, reset=True)) == 0x3E
    assert int(controls.switches(0, select=True)) == 0x3D
    assert int(controls.switches(3)) == 0xFF


# --------------------------------------------------------------------------
# Actions: the index table, out-of-range indices, sticky actions.
# --------------------------------------------------------------------------


def test_action_index_out_of_range_is_noop():
    """ALE plays an illegal action as NOOP; so does an index out of range."""
    action_set = (0, 1, 3, 4)
    indices = jnp.asarray([0, 1, 2, 3, 4, 17, -1, -100, 2**20])
    ale = np.asarray(controls.to_ale_action(action_set, indices))
    assert ale.tolist() == [0, 1, 3, 4, 0, 0, 0, 0, 0]


def test_sticky_repeat_rate_is_the_probability():
    """With p = 0.25 a frame keeps the previous action a quarter of the
    time: within 4 standard errors over 100,000 independent frames, and
    the frames of one step follow ALE's rule (once taken, the new action
    stays)."""
    import jax
    keys = jax.random.split(jax.random.key(3), 25_000)
    applied = np.asarray(jax.vmap(
        lambda k: controls.sticky_actions(k, 7, 2, 0.25, 4))(keys))
    # Frame i still shows the previous action iff all draws 0..i repeated.
    kept_first = (applied[:, 0] == 7).mean()
    n = applied.shape[0]
    assert abs(kept_first - 0.25) < 4 * np.sqrt(0.25 * 0.75 / n)
    for i in range(1, 4):
        assert ((applied[:, i] == 7) <= (applied[:, i - 1] == 7)).all()
        still = applied[:, i - 1] == 7
        rate = (applied[still, i] == 7).mean()
        assert abs(rate - 0.25) < 4 * np.sqrt(0.25 * 0.75 / still.sum())
    assert set(np.unique(applied)) == {2, 7}
    never = np.asarray(controls.sticky_actions(keys[0], 7, 2, 0.0, 4))
    assert never.tolist() == [2, 2, 2, 2]


# --------------------------------------------------------------------------
# Bad input: clear errors on the host, before any emulation.
# --------------------------------------------------------------------------


def test_make_rejects_a_difficulty_the_game_lacks():
    with pytest.raises(ValueError, match=r"difficulty 7 .*\[0, 1\]"):
        environment.make("breakout", difficulty=7)


def test_mode_error_lists_the_modes():
    with pytest.raises(ValueError, match=r"mode 3 .*\[0, 4, 8"):
        environment.make("breakout", mode=3)


def test_unshipped_rom_id_is_a_clear_error():
    with pytest.raises(ValueError, match="make_from_rom"):
        environment.make("galaga")
    with pytest.raises(ValueError, match="multi-agent"):
        environment.make("ALE/Combat-v5")


def test_params_for_other_settings_are_refused(no_boot):
    env, _ = environment.make("breakout")
    stale = environment.EnvParams(reset_states=jnp.zeros(1),
                                  reset_states_for=(0, 0), mode=4)
    import jax
    with pytest.raises(ValueError, match="make_params"):
        env.reset(jax.random.key(0), stale)
    with pytest.raises(ValueError, match="no reset states"):
        env.reset(jax.random.key(0), environment.EnvParams())


@pytest.mark.parametrize("field, value, named", [
    ("frameskip", 0, "frameskip"),
    ("repeat_action_probability", 1.5, "repeat_action_probability"),
    ("max_num_frames_per_episode", -1, "max_num_frames_per_episode"),
    ("obs_type", "pixels", "obs_type")])
def test_hand_built_params_are_checked_before_a_step(no_boot, field, value,
                                                     named):
    """`params.replace` skips `make`'s checks; `step` and `reset` still
    refuse the value on the host, before anything is traced."""
    import jax
    env, params = environment.make("breakout")
    bad = params.replace(**{field: value})
    with pytest.raises(ValueError, match=named):
        env.step(jax.random.key(0), None, 0, bad)
    with pytest.raises(ValueError, match=named):
        env.reset(jax.random.key(0), bad)


@pytest.fixture
def boot_fails(monkeypatch):
    """Any boot fails the test: errors must come before it."""
    def boot(self, *args, **kwargs):
        raise AssertionError("the game was booted before the error")
    monkeypatch.setattr(environment.AtariEnv, "boot", boot)


BAD_FRAMESKIPS = [0, -4, 2.5, True, "4", None]
BAD_PROBABILITIES = [1.5, -0.25, float("nan"), "0.25", None, [0.1, 2.0]]


@pytest.mark.parametrize("frameskip", BAD_FRAMESKIPS)
def test_make_rejects_a_bad_frameskip_before_booting(boot_fails, frameskip):
    with pytest.raises(ValueError, match=r"frameskip must be an integer "
                       rf">= 1 .*got {re.escape(repr(frameskip))}$"):
        environment.make("breakout", frameskip=frameskip)


@pytest.mark.parametrize("probability", BAD_PROBABILITIES)
def test_make_rejects_a_bad_repeat_probability_before_booting(
        boot_fails, probability):
    with pytest.raises(ValueError, match=r"repeat_action_probability must "
                       r"be a number in \[0, 1\] .*0 turns sticky actions "
                       rf"off\), got {re.escape(repr(probability))}$"):
        environment.make("breakout", repeat_action_probability=probability)


def test_make_params_checks_the_same_settings_before_booting(boot_fails):
    env = environment.AtariEnv("breakout")
    with pytest.raises(ValueError, match="frameskip .* got 0"):
        env.make_params(frameskip=0)
    with pytest.raises(ValueError, match="repeat_action_probability .* 1.01"):
        env.make_params(mode=4, repeat_action_probability=1.01)
    with pytest.raises(ValueError, match="obs_type .* got 'grey'"):
        env.make_params(obs_type="grey")
    with pytest.raises(TypeError, match="frameskp"):
        env.make_params(frameskp=4)


def test_good_settings_pass_the_check():
    for chance in (0, 0.0, 0.25, 1, np.float32(0.5), jnp.float32(1.0),
                   np.array([0.0, 1.0])):
        settings.check_settings({"repeat_action_probability": chance})
    for frameskip in (1, 4, np.int64(5)):
        settings.check_settings({"frameskip": frameskip})
    settings.check_settings({"obs_type": "ram", "mode": 99})


@pytest.mark.parametrize("name, suggestion", [
    ("breakot", "'breakout'"), ("Breakot", "'Breakout'"),
    ("ALE/Breakot-v5", "'ALE/Breakout-v5'"),
    ("SpaceInvader", "'SpaceInvaders'"),
    ("BreakotNoFrameskip-v4", "'BreakoutNoFrameskip-v4'")])
def test_unknown_game_suggests_the_nearest_names(name, suggestion):
    expected = (rf"unknown game {re.escape(repr(name))}\. "
                rf"Did you mean {re.escape(suggestion)}")
    with pytest.raises(ValueError, match=expected) as info:
        environment.make(name)
    suggested = str(info.value).split("Did you mean ")[1].split("?")[0]
    for named in suggested.split(" or "):   # each suggestion works
        assert environment.games.lookup(named.strip("'"))


def test_unknown_game_without_a_near_name_suggests_nothing():
    with pytest.raises(ValueError, match="unknown game") as info:
        environment.make("zzzzzz")
    assert "Did you mean" not in str(info.value)


def test_make_from_rom_errors(tmp_path):
    from jaxatari import cart
    with pytest.raises(FileNotFoundError):
        environment.make_from_rom(tmp_path / "missing.bin")
    text = tmp_path / "notes.bin"
    text.write_bytes(b"not a rom\n" * 100)
    with pytest.raises(cart.NotARomError, match="1,000 bytes"):
        environment.make_from_rom(text)
    big = tmp_path / "big.bin"      # 32 KiB, no Superchip: Stella's F4
    big.write_bytes(bytes(range(256)) * 128)
    with pytest.raises(cart.UnsupportedCartridgeError, match="'F4'"):
        environment.make_from_rom(big)


def test_make_from_rom_warns_and_has_no_rewards(no_boot, tmp_path):
    from jaxatari import cart
    rom = tmp_path / "my_game.a26"
    rom.write_bytes(cart.rom_path("pong").read_bytes())
    with pytest.warns(UserWarning, match="no game rules"):
        env, _ = environment.make_from_rom(rom, paddles=True)
    assert env.rules.rom_id == "my_game" and env.rules.paddles
    assert env.cart.md5 == cart.load_cartridge("pong").md5
    assert env.action_set == tuple(range(18))
    ram = jnp.full((3, 128), 0x21, jnp.uint8)
    reward, terminal, lives, new_vars = env.rules.step(
        ram, jnp.zeros((3, env.rules.num_vars), jnp.int32))
    assert reward.tolist() == [0, 0, 0] and not terminal.any()
    assert lives.tolist() == [0, 0, 0]


def test_swapped_ports_put_player_a_on_the_right_port():
    """Stella's Console.SwapPorts plugs player A's joystick into the right
    port: UPLEFT+FIRE pulls SWCHA bits 0 and 2 and presses INPT5."""
    paddles = jnp.full((2,), PADDLE_CENTRE, jnp.int32)
    upleftfire = jnp.int32(15)
    normal = controls.controller_inputs(False, False, upleftfire, paddles,
                                           0x3F)
    swapped = controls.controller_inputs(False, False, upleftfire,
                                            paddles, 0x3F, swap_ports=True)
    assert int(normal.swcha) == 0xFF & ~(0x10 | 0x40)
    assert normal.fire.tolist() == [1, 0]
    assert int(swapped.swcha) == 0xFF & ~(0x01 | 0x04)
    assert swapped.fire.tolist() == [0, 1]


class _CountingDriver(environment.ConsoleDriver):
    """A driver that only records its frames (for the RNG bookkeeping)."""

    def __init__(self, seed: int):
        self.random_seed, self.played = seed, []

    def frames(self, action: int, buttons: int, count: int) -> None:
        self.played.append((action, buttons, count))


@pytest.mark.parametrize("seed", [0, 7, -355404031])
def test_driver_draws_ale_environment_rng(seed):
    """The driver's environment RNG is ALE's: mt19937 seeded with
    `random_seed` (as uint32), raw 32-bit outputs, and `act` draws two
    (the sticky tests) before its frame. ALE's own draw pattern during
    Adventure's setMode is checked in tests/games/test_a_to_b.py."""
    reference = np.random.RandomState(seed % 2**32)._bit_generator
    driver = _CountingDriver(seed)
    first = driver.environment_rng_next()
    driver.act(3)
    after_act = driver.environment_rng_next()
    draws = [int(v) for v in reference.random_raw(4)]
    assert (first, after_act) == (draws[0], draws[3])
    assert driver.played == [(3, 0, 1)] and driver.counted_frames == 1


def test_random_seed_reaches_the_boot_driver(no_boot):
    env, _ = environment.make("adventure", random_seed=11)
    assert env.random_seed == 11
    assert environment._EnvDriver(env, None, 0).random_seed == 11
