"""The game registry: every ale-py ROM has rules, and names find them."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import jax
import jax.numpy as jnp
import pytest

import jaxatari
from jaxatari import games

roms = pytest.importorskip("ale_py.roms")


def test_every_ale_py_rom_has_rules() -> None:
    """list_games() is every ROM id ale-py ships and plays, sorted."""
    playable = sorted(set(roms.get_all_rom_ids()) - set(games.NOT_IN_ALE))
    assert jaxatari.list_games() == playable
    assert set(games.DEV_SET) <= set(games.GAMES)


def test_not_in_ale_is_refused_by_ale_py() -> None:
    """ale-py ships these ROMs but cannot load them for single-agent play.

    ale-py's `loadROM` ends the process for them, so each runs in its own
    interpreter.
    """
    pytest.importorskip("ale_py")
    script = ("import sys, ale_py; from ale_py import roms; "
              "ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error); "
              "ale_py.ALEInterface().loadROM(roms.get_rom_path(sys.argv[1]))")
    for game in games.NOT_IN_ALE + ("pong",):
        done = subprocess.run([sys.executable, "-c", script, game],
                              capture_output=True, check=False)
        assert (done.returncode != 0) == (game != "pong"), game


@pytest.mark.parametrize("game", sorted(games.GAMES))
def test_lookup_names(game: str) -> None:
    """ROM ids, Gymnasium stems and ids of every form find the game."""
    rules = games.GAMES[game]
    stem = rules.ale_name
    for name in (game, stem, stem.lower(), f"ALE/{stem}-v5",
                 f"{stem}NoFrameskip-v4", f"{stem}-v4", f"{stem}-v0",
                 f"{stem}NoFrameskip-v0"):
        assert games.lookup(name) is rules, name


@pytest.mark.parametrize("name", ["tetrís", "ALE/Tetris-v9x", "", "Pong-v",
                                  "ALE/pong/v5", "galaga"])
def test_lookup_unknown(name: str) -> None:
    """An unknown name is a ValueError that lists the games and the fix."""
    with pytest.raises(ValueError) as error:
        games.lookup(name)
    message = str(error.value)
    assert repr(name) in message
    assert "space_invaders" in message and "ALE/SpaceInvaders-v5" in message
    assert "make_from_rom" in message


def test_rules_are_hashable_static_args() -> None:
    """GameRules can be a static argument of jit (frozen, hashable)."""
    rules = games.lookup("breakout")
    step = jax.jit(lambda r, ram, v: r.step(ram, v), static_argnums=0)
    reward, terminal, lives, new_vars = step(
        rules, jnp.zeros(128, jnp.uint8), rules.reset_vars())
    assert (int(reward), bool(terminal), int(lives)) == (0, False, 0)
    assert new_vars.shape == (rules.num_vars,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.ystart = 0  # type: ignore[misc]
