"""Which games' resets keep something of the episode before (ALE and jaxatari).

    python benchmarks/reset_survey.py [--games all] [--seeds 0 1]
        [--max-frames 60000] [--jsonl out.jsonl]

For each game, one JSON line:

* `ale`: per seed, ale-py after `loadROM()` played uniform-random minimal
  actions until game over (or `--max-frames`), then `reset_game()`; the
  RAM bytes where that reset differs from ALE's same reset (its first
  `reset_game()`) of a console that never played, and whether the screens
  differ. Differences there are what a reset that copies a booted state
  (jaxatari before `reset_carry`, CuLE) gets wrong.
* `replays`: whether `jaxatari.make(game)` replays its reset from the
  played console (`params.reset_scripts`: its boot found that the reset
  depends on the RAM, `jaxatari.reset_carry.depends_on_console`), and
  `select_presses`, the SELECT frames a press of its setMode loop (0: no
  loop).

A game that `ale` shows differing must replay; one that replays but shows
no difference keeps bytes that the random play happened not to change.
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np


def ale_after_play(game: str, seed: int, max_frames: int) -> dict:
    """ALE's reset after a random game against its reset of a fresh load."""
    from ale_py import ALEInterface, LoggerMode, roms
    ALEInterface.setLoggerMode(LoggerMode.Error)

    def loaded() -> ALEInterface:
        ale = ALEInterface()
        ale.setInt("random_seed", 0)
        ale.setFloat("repeat_action_probability", 0.0)
        ale.loadROM(roms.get_rom_path(game))
        return ale
    fresh = loaded()
    fresh.reset_game()
    played, frames = loaded(), 0
    actions, rng = played.getMinimalActionSet(), np.random.default_rng(seed)
    while not played.game_over() and frames < max_frames:
        played.act(actions[rng.integers(len(actions))])
        frames += 1
    played.reset_game()
    return {"seed": seed, "frames": frames, "game_over": frames < max_frames,
            "ram_differs": np.flatnonzero(
                played.getRAM() != fresh.getRAM()).tolist(),
            "screen_differs": bool(
                (played.getScreen() != fresh.getScreen()).any())}


def jaxatari_replays(game: str) -> dict:
    """Whether `jaxatari.make(game)` replays its resets after play."""
    import jaxatari
    _, params = jaxatari.make(game)
    scripts = params.reset_scripts
    return {"replays": scripts is not None,
            "select_presses": 0 if scripts is None else scripts.presses}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=["all"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--max-frames", type=int, default=60_000)
    parser.add_argument("--jsonl", help="also append the lines here")
    args = parser.parse_args(argv)
    import jaxatari
    games = (jaxatari.list_games() if args.games == ["all"]
             else args.games)
    for game in games:
        line = {"game": game, **jaxatari_replays(game),
                "ale": [ale_after_play(game, seed, args.max_frames)
                        for seed in args.seeds]}
        text = json.dumps(line)
        print(text, flush=True)
        if args.jsonl:
            with open(args.jsonl, "a") as out:
                out.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
