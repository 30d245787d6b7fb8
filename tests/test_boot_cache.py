"""jaxatari.boot_cache: boots and start frames kept on disk.

One boot of Breakout with a single reset state (the programs every
Breakout boot in the suite shares) and three start frames fill a temporary
cache; every other test loads from it, or replaces the boot by those
states, so nothing else is emulated.
"""
from __future__ import annotations

import shutil

import jax
import numpy as np
import pytest

import jaxatari
from jaxatari import boot_cache, console, environment, wrappers

GAME = {"game": "breakout", "num_reset_states": 1}
STARTS = {"noop_max": 3, "noop_min": 0, "fire_reset": True,
          "repeat_action_probability": 0.0}


def _preprocessing() -> wrappers.AtariPreprocessing:
    return wrappers.AtariPreprocessing(environment.AtariEnv(**GAME))


def _use_cache(patch: pytest.MonkeyPatch, root) -> None:
    """The cache under `root`, on, with the process's memos empty."""
    patch.setenv("XDG_CACHE_HOME", str(root))
    patch.delenv(boot_cache.ENV_VAR, raising=False)
    patch.setattr(environment, "_BOOTED", {})
    patch.setattr(wrappers, "_STARTS", {})


@pytest.fixture(scope="module")
def cold(tmp_path_factory):
    """A cache filled by a cold make and start frames: (its root, the
    booted states, the params with the starts)."""
    root = tmp_path_factory.mktemp("cold")
    with pytest.MonkeyPatch.context() as patch:
        _use_cache(patch, root)
        env = environment.AtariEnv(**GAME)
        states = env.boot()
        starts = _preprocessing().make_params(**STARTS)
    return root, states, starts


@pytest.fixture
def warm(cold, tmp_path, monkeypatch):
    """A copy of the cold cache, in use; booting or playing start frames
    fails the test. Returns the entries' directory."""
    shutil.copytree(cold[0], tmp_path, dirs_exist_ok=True)
    _use_cache(monkeypatch, tmp_path)

    def emulate(self, *args):
        raise AssertionError("emulated instead of loading the cache")
    monkeypatch.setattr(environment.AtariEnv, "_boot", emulate)
    monkeypatch.setattr(wrappers.AtariPreprocessing, "_start_frames",
                        emulate)
    return boot_cache.directory()


def _assert_identical(loaded, booted) -> None:
    """Same pytree structure, and every leaf the same bits, shape, dtype
    and weak type."""
    leaves, treedef = jax.tree.flatten(loaded)
    expected, expected_treedef = jax.tree.flatten(booted)
    assert treedef == expected_treedef
    for leaf, want in zip(leaves, expected, strict=True):
        assert isinstance(leaf, jax.Array)
        assert (leaf.dtype, leaf.shape, leaf.weak_type) == (
            want.dtype, want.shape, want.weak_type)
        assert np.array_equal(np.asarray(leaf), np.asarray(want))


def test_cold_boot_writes_one_entry_a_kind(cold):
    names = sorted(path.name for path in
                   (cold[0] / "jaxatari" / "boot").iterdir())
    assert len(names) == 3, names
    assert names[0].startswith("breakout-m0-d0-")
    assert names[1].startswith("breakout-m0-d0-scripts-")
    assert names[2].startswith("breakout-m0-d0-starts-")


def test_warm_make_loads_the_booted_states_without_booting(cold, warm):
    env, params = jaxatari.make(**GAME)
    _assert_identical(env.boot(), cold[1])
    _assert_identical(params.reset_states, boot_cache.stack(cold[1]))


def test_warm_starts_load_without_playing(cold, warm):
    params = _preprocessing().make_params(**STARTS)
    _assert_identical(params.reset_states, cold[2].reset_states)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty",
                                    "another key"])
def test_an_unreadable_entry_is_rebuilt(cold, warm, monkeypatch, damage):
    (path,) = warm.glob("breakout-m0-d0-[0-9a-f]*.npz")
    data = path.read_bytes()
    if damage == "another key":   # a whole entry, but of another key
        (data,) = [p.read_bytes() for p in warm.glob("*-starts-*.npz")]
    path.write_bytes({"garbage": b"\x00not a zip" * 50,
                      "truncated": data[:len(data) // 2],
                      "empty": b""}.get(damage, data))
    booted = []
    monkeypatch.setattr(environment.AtariEnv, "_boot",
                        lambda self, *args: booted.append(args) or cold[1])
    with pytest.warns(UserWarning, match="ignoring the boot cache entry"):
        jaxatari.make(**GAME)
    assert booted == [(0, 0)]
    monkeypatch.setattr(environment, "_BOOTED", {})
    monkeypatch.setattr(environment.AtariEnv, "_boot", None)   # must load
    env, _ = jaxatari.make(**GAME)
    _assert_identical(env.boot(), cold[1])
    assert not list(warm.glob(".tmp-*"))


def test_the_key_changes_with_each_setting(warm, monkeypatch):
    env = environment.AtariEnv("breakout")
    base = boot_cache.boot_entry(env, 0, 0)
    others = [boot_cache.boot_entry(env, 4, 0),
              boot_cache.boot_entry(env, 0, 1),
              boot_cache.boot_entry(environment.AtariEnv(
                  "breakout", num_reset_states=2), 0, 0),
              boot_cache.boot_entry(environment.AtariEnv(
                  "breakout", random_seed=1), 0, 0),
              boot_cache.boot_entry(environment.AtariEnv("pong"), 0, 0)]
    monkeypatch.setattr(jaxatari, "__version__", "0.0.0-other")
    others.append(boot_cache.boot_entry(env, 0, 0))
    # A test that cuts frames short boots to other states (stop 38's CI
    # loaded a Pong boot written under a cap of 1,500 and failed parity).
    monkeypatch.setattr(console, "INSTRUCTIONS_PER_UPDATE", 1_500)
    others.append(boot_cache.boot_entry(env, 0, 0))
    paths = {entry.path for entry in [base, *others]}
    assert len(paths) == len(others) + 1
    assert "mode\": 4" in others[0].key


def test_another_mode_boots(warm):
    """The cache holds mode 0 only: mode 4 misses it and boots."""
    with pytest.raises(AssertionError, match="emulated"):
        jaxatari.make(**GAME, mode=4)


def test_the_environment_variable_turns_the_cache_off(cold, warm,
                                                      monkeypatch):
    monkeypatch.setenv(boot_cache.ENV_VAR, "0")
    before = sorted(warm.iterdir())
    assert boot_cache.boot_entry(environment.AtariEnv("breakout"), 0,
                                 0) is None
    with pytest.raises(AssertionError, match="emulated"):
        jaxatari.make(**GAME)
    booted = []
    monkeypatch.setattr(environment.AtariEnv, "_boot",
                        lambda self, *args: booted.append(args) or cold[1])
    jaxatari.make(**GAME)
    assert booted and sorted(warm.iterdir()) == before


def test_rules_made_at_run_time_are_not_cached(warm, tmp_path):
    from jaxatari import cart
    rom = tmp_path / "mine.bin"
    rom.write_bytes(cart.rom_path("breakout").read_bytes())
    rules = environment.rules_for_rom(rom)
    assert boot_cache.boot_entry(environment.AtariEnv(rules, rom=rom), 0,
                                 0) is None


def test_a_failed_write_leaves_nothing(cold, warm, monkeypatch):
    def full(*args, **kwargs):
        raise OSError("No space left on device")
    monkeypatch.setattr(np, "savez_compressed", full)
    stored = boot_cache.entry("test", {"kind": "test"})
    with pytest.warns(UserWarning, match="could not write"):
        stored.save(cold[1], {"rows": 210})
    assert not stored.path.exists() and not list(warm.glob(".tmp-*"))


def test_the_source_digest_covers_the_emulator_not_the_cli():
    modules = boot_cache._import_closure(boot_cache.DIGESTED)
    assert {"jaxatari.environment", "jaxatari.wrappers", "jaxatari.console",
            "jaxatari.cpu6502", "jaxatari.tia", "jaxatari.cart",
            "jaxatari.games.core", "jaxatari.games.m_to_r",
            "jaxatari.boot_cache"} <= set(modules)
    assert not {name for name in modules
                if name in ("jaxatari.cli", "jaxatari.bench")
                or name.startswith("jaxatari.agents")}
    assert all(path.is_file() for path in modules.values())


def test_emulation_goes_through_lowering_on_host(cold, monkeypatch):
    """The boot, the start frames and the reset scripts are each emulated
    through `lowering.on_host` (on an accelerator: the host's CPU in the
    CPU's lowering; the H100's loan lost its stages to boots traced as
    the accelerator's variant), and what they return comes back."""
    from jaxatari import lowering
    monkeypatch.setenv(boot_cache.ENV_VAR, "0")
    calls = []

    def spy(fn):
        calls.append(fn)
        return fn()
    monkeypatch.setattr(lowering, "on_host", spy)
    env, states = environment.AtariEnv(**GAME), list(cold[1])
    booted, _ = boot_cache.cached_boot(env, 0, 0, lambda m, d: states)
    starts = boot_cache.cached_starts(env, 0, 0, {}, lambda: states * 2)
    scripts = boot_cache.cached_scripts(env, 0, 0, lambda: None)
    assert len(calls) == 3
    assert booted == states and scripts is None
    assert jax.tree.leaves(starts)[0].shape[0] == 2 * len(states)
