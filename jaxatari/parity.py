"""Frame-by-frame parity of jaxatari against ale-py.

    python -m jaxatari.parity GAME [GAME ...] [--steps N] [--seeds S ...]
                              [--out DIR] [--json]

Both emulators play the same seeded uniform-random actions from the game's
minimal action set, at frameskip 1 without sticky actions. After the reset
and after every frame the RAM, the screen (palette indices), the reward,
game over and the lives (ALE's `lives()`, the env's `info["lives"]`) are
compared. On game over both reset (`reset_game()` in ALE; the
same host-side reset sequence here, with the next RIOT timer draw).

The first divergence is printed with the step, the differing RAM bytes and
the number of differing pixels, and both screens are written side by side
(ours left) to `DIR/GAME_seedS_stepN.png`. Exit status 1 if any run
diverged. `--json` prints one JSON line per run instead. `dev`, `atari57`
and `all` stand for the dev set, the Atari-57 and every game. All runs are emulated together in one vmapped program
(`jaxatari.lockstep`); `benchmarks/parity_table.py` writes PARITY.md.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import pickle
import sys
import time
import zlib
from typing import Any, NamedTuple

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
            "game_over": (bool(ours["game_over"]), bool(theirs["game_over"])),
            "lives": (int(ours["lives"]), int(theirs["lives"]))}


def _diverged(diff: dict) -> bool:
    return bool(diff["ram_bytes"] or diff["pixels"]
                or any(diff[key][0] != diff[key][1]
                       for key in ("reward", "game_over", "lives")))


def _save_screens(out: pathlib.Path, name: str, ours: np.ndarray,
                  theirs: np.ndarray) -> None:
    out.mkdir(parents=True, exist_ok=True)
    image = np.concatenate([palette.RGB[ours], palette.RGB[theirs]], 1)
    _png(out / f"{name}.png", image)


def boot_both(handle: lockstep.Handle, game: str, seed: int):
    """ale-py after `loadROM()`, and the handle's console booted the same
    way (loadROM's closing reset included): the start of a parity run."""
    ale = make_ale(game, seed)
    environment.load_rom(handle)
    environment.reset_game(handle.rules, handle.env.mode, handle, 0)
    return ale


def reset_both(ale, handle: lockstep.Handle, resets: int) -> None:
    """`reset_game()` in both, the handle's being its `resets`-th."""
    ale.reset_game()
    environment.reset_game(handle.rules, handle.env.mode, handle, resets)


def _act_ale(ale, action: int) -> tuple[int, bool]:
    """One frame of `action` in ALE alone (as `act_both` does, or replaying to a snapshot)."""
    return int(ale.act(action)), bool(ale.game_over())


def act_both(ale, handle: lockstep.Handle, action: int
             ) -> tuple[tuple[int, bool], tuple[int, bool]]:
    """One frame of `action` in both: ((reward, game over) of ALE's,
    jaxatari's)."""
    theirs = _act_ale(ale, action)
    handle.frames(action, 0, 1)
    return theirs, (handle.reward, handle.terminal)


class Checkpoints(NamedTuple):
    """Where long runs save their progress, and how often.

    Each (game, seed) run saves a snapshot of both sides every `every`
    compared frames (`GAME_seedS.pkl`: our console's whole state, ALE's
    being replayed from its seed, which is cheap), and its result when it
    ends (`GAME_seedS.json`). A run started again resumes from its
    snapshot, and a finished one returns its result. `commit` names the
    code a segment ran at; a result lists every segment's.
    """
    directory: pathlib.Path
    every: int = 500
    commit: str = ""

    def path(self, game: str, seed: int, suffix: str) -> pathlib.Path:
        return self.directory / f"{game}_seed{seed}{suffix}"

    def save(self, game: str, seed: int, suffix: str, data: Any) -> None:
        """Write a snapshot (.pkl) or a result (.json), atomically."""
        self.directory.mkdir(parents=True, exist_ok=True)
        final = self.path(game, seed, suffix)
        partial = final.with_name(final.name + ".partial")
        partial.write_bytes(json.dumps(data).encode() if suffix == ".json"
                            else pickle.dumps(data))
        partial.replace(final)

    def load(self, game: str, seed: int, suffix: str) -> Any:
        """A saved snapshot or result, or None."""
        final = self.path(game, seed, suffix)
        if not final.exists():
            return None
        data = final.read_bytes()
        return json.loads(data) if suffix == ".json" else pickle.loads(data)


def _finished(checkpoints: Checkpoints | None, game: str, seed: int,
              steps: int) -> dict | None:
    """A saved result that answers a run of `steps` frames, if any."""
    result = checkpoints and checkpoints.load(game, seed, ".json")
    if result and (result["first_divergence"] is not None
                   or result["steps"] >= steps):
        return result
    return None


def _script(game: str, steps: int, seed: int, out: pathlib.Path | None,
            progress: int, checkpoints: Checkpoints | None = None):
    """The parity run of one (game, seed), as a `lockstep` script."""

    def script(handle: lockstep.Handle) -> dict:
        done = _finished(checkpoints, game, seed, steps)
        if done:
            return done
        saved = checkpoints and checkpoints.load(game, seed, ".pkl")
        # Seconds count all segments of the run.
        started = time.perf_counter() - (saved["seconds"] if saved else 0)
        start = saved["step"] if saved else 0
        ale = make_ale(game, seed) if saved else boot_both(handle, game, seed)
        rng = np.random.RandomState(seed)
        actions = handle.rules.minimal_actions
        result = {"game": game, "seed": seed, "steps": steps,
                  "first_divergence": None, "resets": 0}
        ours = theirs = (0, False)
        for step in range(steps + 1):
            live = step >= start   # our side is emulated from `start` on
            if saved and step == start:
                handle.restore(saved["console"])
                ours = (handle.reward, handle.terminal)
            if live:
                diff = compare(
                    {"ram": handle.ram()[:128], "screen": handle.screen(),
                     "reward": ours[0], "game_over": ours[1],
                     "lives": handle.lives},
                    {"ram": ale.getRAM(), "screen": ale.getScreen(),
                     "reward": theirs[0], "game_over": theirs[1],
                     "lives": ale.lives()})
                if _diverged(diff):
                    result.update(first_divergence=step, **diff)
                    if out is not None:
                        _save_screens(out, f"{game}_seed{seed}_step{step}",
                                      handle.screen(), ale.getScreen())
                    break
                if checkpoints and step > start and (
                        step % checkpoints.every == 0 or step == steps):
                    checkpoints.save(game, seed, ".pkl", {
                        "step": step, "resets": result["resets"],
                        "console": handle.snapshot(),
                        "seconds": time.perf_counter() - started,
                        "commits": _commits(saved, checkpoints)})
            if step == steps:
                break
            if live and progress and step and step % progress == 0:
                print(json.dumps({"game": game, "seed": seed,
                                  "identical_through": step}),
                      file=sys.stderr, flush=True)
            if theirs[1]:
                result["resets"] += 1
                if live:
                    reset_both(ale, handle, result["resets"])
                else:
                    ale.reset_game()
                ours = theirs = (0, False)
                continue
            action = int(actions[rng.randint(len(actions))])
            if live:
                theirs, ours = act_both(ale, handle, action)
            else:
                theirs = _act_ale(ale, action)
        result["seconds"] = round(time.perf_counter() - started, 1)
        if checkpoints:
            result["commits"] = _commits(saved, checkpoints)
            checkpoints.save(game, seed, ".json", result)
        return result

    return script


def _commits(saved: dict | None, checkpoints: Checkpoints) -> list[str]:
    """The commits of a run's segments so far, this one's last."""
    earlier = saved["commits"] if saved else []
    return list(dict.fromkeys(earlier + [checkpoints.commit]))


def run_many(runs: list[tuple[str, int]], steps: int,
             out: pathlib.Path | None = None,
             progress: int = 0,
             checkpoints: Checkpoints | None = None) -> list[dict]:
    """Parity of several (game, seed) runs, emulated together in lock-step.

    With `progress`, a JSON line goes to stderr every `progress` identical
    steps of each run; with `checkpoints`, runs save their progress and
    resume from it (`Checkpoints`). Returns one result per run:
    `first_divergence` (None, or the step), the differing RAM bytes and
    pixel count there, `resets` and `seconds`.
    """
    envs = {game: environment.AtariEnv(game) for game, _ in runs}
    group = lockstep.Lockstep([envs[game] for game, _ in runs])
    return group.run([_script(envs[game].rules.rom_id, steps, seed, out,
                              progress, checkpoints)
                      for game, seed in runs])


def checkpoint_results(directory: pathlib.Path) -> list[dict]:
    """Every run a checkpoint directory holds: its result if it ended,
    otherwise how far it is identical so far (`"in_progress": True`)."""
    checkpoints, results = Checkpoints(directory), []
    runs = {tuple(path.stem.rsplit("_seed", 1))
            for path in [*directory.glob("*.pkl"), *directory.glob("*.json")]}
    for game, seed in sorted(runs):
        result = checkpoints.load(game, int(seed), ".json")
        if result is None:
            saved = checkpoints.load(game, int(seed), ".pkl")
            result = {"game": game, "seed": int(seed),
                      "steps": saved["step"], "first_divergence": None,
                      "resets": saved["resets"],
                      "seconds": round(saved["seconds"], 1),
                      "commits": saved["commits"], "in_progress": True}
        results.append(result)
    return results


def latest_per_run(results: list[dict]) -> list[dict]:
    """One result per (game, seed): a divergence if any run of it found
    one (the earliest), otherwise the run with the most frames."""
    best: dict[tuple[str, int], dict] = {}
    for result in results:
        key = (result["game"], result["seed"])
        held = best.get(key)
        if held is None or _rank(result) < _rank(held):
            best[key] = result
    return list(best.values())


def _rank(result: dict) -> tuple:
    divergence = result["first_divergence"]
    return ((0, divergence) if divergence is not None
            else (1, -result["steps"]))


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
            f"{result['reward']}, game over {result['game_over']}, lives "
            f"{result['lives']}.")


def _game_status(runs: list[dict]) -> tuple[str, str]:
    """(status, episodes) cells of one game's row, from its runs."""
    seeds = ", ".join(str(r["seed"]) for r in runs)
    steps = min(r["steps"] for r in runs)
    commits = sorted({r["commit"] for r in runs if r.get("commit")})
    where = f" (at {', '.join(commits)})" if commits else ""
    bad = [r for r in runs if r["first_divergence"] is not None]
    episodes = sum(r["resets"] for r in runs)
    if not bad:
        so_far = " so far" if any(r.get("in_progress") for r in runs) else ""
        return (f"identical: {steps:,} frames{so_far}, seeds {seeds}{where}",
                str(episodes))
    first = min(bad, key=lambda r: r["first_divergence"])
    return (f"**diverges**: seed {first['seed']} at frame "
            f"{first['first_divergence']:,} "
            f"({len(first['ram_bytes'])} RAM bytes, {first['pixels']} "
            f"pixels; {len(bad)} of {len(runs)} seeds){where}",
            str(episodes))


def markdown_table(results: list[dict], schemes: dict[str, str],
                   notes: dict[str, str] | None = None,
                   order: list[str] | None = None) -> str:
    """PARITY.md's table: one row per game, all of its seeds together.

    Args:
        results: `run_many` results.
        schemes: each game's cartridge scheme.
        notes: per-game remarks (the known cause of a divergence, why a
            game has no runs).
        order: the games to list, in order (default: those with results);
            a game without results gets a "not run" row.
    """
    notes = notes or {}
    order = order or list(dict.fromkeys(r["game"] for r in results))
    rows = ["| game | cart | Atari-57 | status | game overs | notes |",
            "|---|---|---|---|---|---|"]
    for game in order:
        runs = sorted((r for r in results if r["game"] == game),
                      key=lambda r: r["seed"])
        status, episodes = _game_status(runs) if runs else ("not run", "")
        atari57 = "yes" if game in games.ATARI_57 else ""
        rows.append(f"| {game} | {schemes.get(game, '')} | {atari57} | "
                    f"{status} | {episodes} | {notes.get(game, '')} |")
    return "\n".join(rows) + "\n"


def status_by_game(results: list[dict]) -> dict[str, str]:
    """Each game's status cell of PARITY.md, without the commits (what
    `jaxatari list` shows)."""
    plain = [{k: v for k, v in r.items() if k not in ("commit", "commits")}
             for r in results]
    return {game: _game_status(sorted(
        (r for r in plain if r["game"] == game), key=lambda r: r["seed"]))[0]
            for game in dict.fromkeys(r["game"] for r in plain)}


GROUPS = {"dev": lambda: games.DEV_SET, "atari57": lambda: games.ATARI_57,
          "all": games.list_games}
"""Names that stand for a set of games on the command line."""


def expand_games(names: list[str]) -> list[str]:
    """ROM ids of command-line game names (`GROUPS` expanded), in order.

    Raises:
        ValueError: an unknown game name (the message lists the games).
    """
    expanded = [game for name in names
                for game in (GROUPS[name]() if name in GROUPS else [name])]
    return list(dict.fromkeys(games.lookup(name).rom_id
                              for name in expanded))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="+", help=(
        "ROM ids or ALE names; 'dev', 'atari57' or 'all' for those sets"))
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--out", type=pathlib.Path,
                        default=pathlib.Path("parity_out"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--progress", type=int, default=500, help=(
        "report every N identical frames of each run on stderr (0: never)"))
    args = parser.parse_args(argv)
    runs = [(game, seed) for game in expand_games(args.games)
            for seed in args.seeds]
    results = run_many(runs, args.steps, args.out, progress=args.progress)
    for result in results:
        print(json.dumps(result) if args.json else _describe(result),
              flush=True)
    return 1 if any(r["first_divergence"] is not None for r in results) \
        else 0


if __name__ == "__main__":
    sys.exit(main())
