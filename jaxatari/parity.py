"""Frame-by-frame parity of jaxatari against ale-py.

    python -m jaxatari.parity GAME [--steps N] [--seeds S ...] [--out DIR]

Both emulators play the same seeded uniform-random actions from the game's
minimal action set, at frameskip 1 without sticky actions. After the reset
and after every frame the RAM, the screen (palette indices), the reward and
game over are compared. On game over both reset (`reset_game()` in ALE; the
same host-side reset sequence here, with the next RIOT timer draw).

The first divergence is printed with the step, the differing RAM bytes, the
number of differing pixels, and both screens are
written side by side to `DIR/GAME_seedS_stepN.png`. Exit status 1 if any seed
diverged. `--json` prints one JSON line per seed instead.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
import zlib

import jax.numpy as jnp
import numpy as np

from jaxatari import console, environment, palette


def _ale(game: str, seed: int):
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


def run(game: str, steps: int, seed: int, out: pathlib.Path | None = None,
        env: environment.AtariEnv | None = None) -> dict:
    """Play `steps` frames in both emulators; report the first divergence."""
    env = env or environment.AtariEnv(game)
    ale = _ale(env.rules.rom_id, seed)
    states = env.boot()
    state = states[0]
    draws = console.system_draws(console.RAM_DRAWS + 4 + 10_000)
    resets = 0
    rng = np.random.RandomState(seed)
    actions = env.rules.minimal_actions
    started = time.perf_counter()

    def observe(state, reward, game_over):
        return {"ram": np.asarray(console.ram(state.machine)),
                "screen": np.asarray(console.screen(state.machine)),
                "reward": reward, "game_over": game_over}

    def ale_observe(reward):
        return {"ram": ale.getRAM(), "screen": ale.getScreen(),
                "reward": reward, "game_over": ale.game_over()}

    result = {"game": env.rules.rom_id, "seed": seed, "steps": steps}
    ours, theirs = observe(state, 0, False), ale_observe(0)
    for step in range(steps + 1):
        diff = compare(ours, theirs)
        if _diverged(diff):
            result.update(first_divergence=step, **diff)
            if out is not None:
                out.mkdir(parents=True, exist_ok=True)
                image = np.concatenate([palette.RGB[ours["screen"]],
                                        palette.RGB[theirs["screen"]]], 1)
                _png(out / f"{env.rules.rom_id}_seed{seed}_step{step}.png",
                     image)
            break
        if step == steps:
            break
        if theirs["game_over"]:
            ale.reset_game()
            resets += 1
            timer = console.riot_timer(draws[console.RAM_DRAWS + 3 + resets])
            state = env._reset_game(state, timer)
            ours, theirs = observe(state, 0, False), ale_observe(0)
            continue
        action = int(actions[rng.randint(len(actions))])
        reward = ale.act(action)
        state = env._frame(state, jnp.int32(action), jnp.int32(0), True)
        game_over = bool(state.terminal)
        ours = observe(state, int(state.reward), game_over)
        theirs = ale_observe(int(reward))
    result.setdefault("first_divergence", None)
    result["resets"] = resets
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--out", type=pathlib.Path,
                        default=pathlib.Path("parity_out"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    env = environment.AtariEnv(args.game)
    failed = False
    for seed in args.seeds:
        result = run(args.game, args.steps, seed, args.out, env)
        failed |= result["first_divergence"] is not None
        if args.json:
            print(json.dumps(result), flush=True)
        elif result["first_divergence"] is None:
            print(f"{result['game']} seed {seed}: identical for "
                  f"{args.steps} steps ({result['resets']} resets, "
                  f"{result['seconds']} s)", flush=True)
        else:
            print(f"{result['game']} seed {seed}: first divergence at step "
                  f"{result['first_divergence']}: RAM bytes "
                  f"{[hex(0x80 + i) for i in result['ram_bytes']]}, "
                  f"{result['pixels']} pixels, reward (ours, ALE) "
                  f"{result['reward']}, game over {result['game_over']}.",
                  flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
