"""Frame-by-frame parity of jaxatari against ale-py.

    python -m jaxatari.parity GAME [GAME ...] [--steps N] [--seeds S ...]
                              [--out DIR] [--json]

Both emulators play the same seeded uniform-random actions from the game's
minimal action set, at frameskip 1 without sticky actions. After the reset
and after every frame the RAM, the screen (palette indices), the reward and
game over are compared. On game over both reset (`reset_game()` in ALE; the
same host-side reset sequence here, with the next RIOT timer draw).

The first divergence is printed with the step, the differing RAM bytes and
the number of differing pixels, and both screens are written side by side
(ours left) to `DIR/GAME_seedS_stepN.png`. Exit status 1 if any run
diverged. `--json` prints one JSON line per run instead. `dev` stands for
the whole dev set. All runs are emulated together in one vmapped program
(`jaxatari.lockstep`); `benchmarks/parity_table.py` writes PARITY.md.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
import zlib

import numpy as np

from jaxatari import environment, games, lockstep, palette


def make_ale(game: str, seed: int):
    """ale-py as the parity runs use it: seeded, frameskip 1, no sticky
    actions, the game loaded (`loadROM`, which ends with `reset_game`)."""
    from ale_py import ALEInterface, LoggerMode, roms
    ALEInterface.setLoggerMode(LoggerMode.Error)
    ale = ALEInterface()
    ale.setInt("random_seed", seed)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.setInt("frame_skip", 1)
    ale.loadROM(str(roms.get_rom_path(game)))
    return ale


def _png(path: pathlib.Path, rgb: np.ndarray) -> None:
    """Write an RGB uint8 image as PNG (no imaging dependency)."""
    height, width, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return (len(data).to_bytes(4, "big") + body
                + zlib.crc32(body).to_bytes(4, "big"))
    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + \
        b"\x08\x02\x00\x00\x00"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                     + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def compare(ours: dict, theirs: dict) -> dict:
    """What differs between two frames' observations."""
    ram = np.nonzero(ours["ram"] != theirs["ram"])[0]
    pixels = int((ours["screen"] != theirs["screen"]).sum())
    return {"ram_bytes": [int(i) for i in ram], "pixels": pixels,
            "reward": (int(ours["reward"]), int(theirs["reward"])),
            "game_over": (bool(ours["game_over"]), bool(theirs["game_over"]))}


def _diverged(diff: dict) -> bool:
    return bool(diff["ram_bytes"] or diff["pixels"]
                or diff["reward"][0] != diff["reward"][1]
                or diff["game_over"][0] != diff["game_over"][1])


def _save_screens(out: pathlib.Path, name: str, ours: np.ndarray,
                  theirs: np.ndarray) -> None:
    out.mkdir(parents=True, exist_ok=True)
    image = np.concatenate([palette.RGB[ours], palette.RGB[theirs]], 1)
    _png(out / f"{name}.png", image)


def _script(game: str, steps: int, seed: int, out: pathlib.Path | None,
            progress: int):
    """The parity run of one (game, seed), as a `lockstep` script."""

    def script(handle: lockstep.Handle) -> dict:
        started = time.perf_counter()
        ale = make_ale(game, seed)
        environment.load_rom(handle)
        environment.reset_game(handle.rules, handle.env.mode, handle, 0)
        rng = np.random.RandomState(seed)
        actions = handle.rules.minimal_actions
        result = {"game": game, "seed": seed, "steps": steps,
                  "first_divergence": None, "resets": 0}
        ours = theirs = (0, False)
        for step in range(steps + 1):
            diff = compare(
                {"ram": handle.ram(), "screen": handle.screen(),
                 "reward": ours[0], "game_over": ours[1]},
                {"ram": ale.getRAM(), "screen": ale.getScreen(),
                 "reward": theirs[0], "game_over": theirs[1]})
            if _diverged(diff):
                result.update(first_divergence=step, **diff)
                if out is not None:
                    _save_screens(out, f"{game}_seed{seed}_step{step}",
                                  handle.screen(), ale.getScreen())
                break
            if step == steps:
                break
            if progress and step and step % progress == 0:
                print(json.dumps({"game": game, "seed": seed,
                                  "identical_through": step}),
                      file=sys.stderr, flush=True)
            if theirs[1]:
                ale.reset_game()
                result["resets"] += 1
                environment.reset_game(handle.rules, handle.env.mode, handle,
                                       result["resets"])
                ours = theirs = (0, False)
                continue
            action = int(actions[rng.randint(len(actions))])
            theirs = (int(ale.act(action)), bool(ale.game_over()))
            handle.frames(action, 0, 1)
            ours = (handle.reward, handle.terminal)
        result["seconds"] = round(time.perf_counter() - started, 1)
        return result

    return script


def run_many(runs: list[tuple[str, int]], steps: int,
             out: pathlib.Path | None = None,
             progress: int = 0) -> list[dict]:
    """Parity of several (game, seed) runs, emulated together in lock-step.

    With `progress`, a JSON line goes to stderr every `progress` identical
    steps of each run. Returns one result per run: `first_divergence` (None, or the step), the
    differing RAM bytes and pixel count there, `resets` and `seconds`.
    """
    envs = {game: environment.AtariEnv(game) for game, _ in runs}
    group = lockstep.Lockstep([envs[game] for game, _ in runs])
    return group.run([_script(envs[game].rules.rom_id, steps, seed, out,
                              progress) for game, seed in runs])


def run(game: str, steps: int, seed: int,
        out: pathlib.Path | None = None) -> dict:
    """Play `steps` frames in both emulators; report the first divergence."""
    return run_many([(game, seed)], steps, out)[0]


def _describe(result: dict) -> str:
    head = f"{result['game']} seed {result['seed']}"
    if result["first_divergence"] is None:
        return (f"{head}: identical for {result['steps']} steps "
                f"({result['resets']} resets, {result['seconds']} s)")
    return (f"{head}: first divergence at step "
            f"{result['first_divergence']}: RAM bytes "
            f"{[hex(0x80 + i) for i in result['ram_bytes']]}, "
            f"{result['pixels']} pixels, reward (ours, ALE) "
            f"{result['reward']}, game over {result['game_over']}.")


def markdown_table(results: list[dict]) -> str:
    """PARITY.md's table: one row per game, one column per seed."""
    seeds = sorted({r["seed"] for r in results})
    rows = ["| game | " + " | ".join(f"seed {s}" for s in seeds) + " |",
            "|---|" + "---|" * len(seeds)]
    for game in dict.fromkeys(r["game"] for r in results):
        cells = []
        for seed in seeds:
            r = next(r for r in results if (r["game"], r["seed"]) ==
                     (game, seed))
            cells.append(
                f"identical, {r['steps']} steps, {r['resets']} resets"
                if r["first_divergence"] is None else
                f"**diverges at step {r['first_divergence']}** "
                f"({len(r['ram_bytes'])} RAM bytes, {r['pixels']} pixels)")
        rows.append(f"| {game} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="+",
                        help="ROM ids or ALE names; 'dev' for the dev set")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--out", type=pathlib.Path,
                        default=pathlib.Path("parity_out"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    names = [g for name in args.games
             for g in (games.DEV_SET if name == "dev" else [name])]
    runs = [(games.lookup(name).rom_id, seed) for name in names
            for seed in args.seeds]
    results = run_many(runs, args.steps, args.out)
    for result in results:
        print(json.dumps(result) if args.json else _describe(result),
              flush=True)
    return 1 if any(r["first_divergence"] is not None for r in results) \
        else 0


if __name__ == "__main__":
    sys.exit(main())
