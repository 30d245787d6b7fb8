"""The `jaxatari` command line: list, train, sweep, play, bench, parity.

* `jaxatari list` — the games, their cartridge scheme, whether they are in
  Atari-57, and their parity with ale-py (PARITY.md's status, shipped with
  the package as `parity_status.json`).
* `jaxatari train ENV --algo ppo|a2c|ga3c --frames N --out DIR` — trains
  an agent (`jaxatari.agents.run`).
* `jaxatari sweep ENV --method pbt|hypertrick|es|random --members N
  --frames F --out DIR` — a population sweep (`jaxatari.population.sweep`).
* `jaxatari play GAME --steps N --out run.gif [--policy random|PATH|DIR]` —
  plays and records the screen as a GIF or MP4 (`render.save_video`).
  A policy file is Python that defines `policy(key, obs) -> action`,
  jittable, called on what the env returns (with `--preprocess`, the
  `make_atari` preset's stacked 84x84 frames, batch 1). A `jaxatari train`
  directory plays its trained agent.
* `jaxatari bench ...` — `benchmarks/env_throughput.py`
  (`jaxatari.bench`): jaxatari against ale-py and EnvPool.
* `jaxatari parity GAME... --steps N --seeds S...` — frame-by-frame
  comparison with ale-py (`jaxatari.parity`).

Long runs report their progress on stderr.
"""
from __future__ import annotations

import argparse
import importlib.resources
import json
import math
import pathlib
import runpy
import sys
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari import console, environment, games, palette, render, wrappers

PLAY_CHUNK = 100
"""Steps per compiled call of `play` (progress is reported between)."""


def parity_status() -> dict[str, str]:
    """Each game's parity status, as PARITY.md had it when the package was
    built (empty if the file is missing)."""
    try:
        text = (importlib.resources.files("jaxatari")
                / "parity_status.json").read_text()
    except FileNotFoundError:
        return {}
    return json.loads(text)


def list_command(args: argparse.Namespace) -> int:
    from jaxatari import cart
    status = parity_status()
    rows = []
    for game in games.list_games():
        try:
            scheme = cart.detect_scheme(cart.rom_path(game).read_bytes())
        except (FileNotFoundError, ValueError):
            scheme = "?"
        rows.append({"game": game, "cart": scheme,
                     "atari57": game in games.ATARI_57,
                     "parity": status.get(game, "not run")})
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    width = max(len(row["game"]) for row in rows)
    for row in rows:
        print(f"{row['game']:<{width}}  {row['cart']:<5} "
              f"{'A57' if row['atari57'] else '   '}  {row['parity']}")
    print(f"{len(rows)} games", file=sys.stderr)
    return 0


def load_policy(spec: str, num_actions: int, batch: tuple[int, ...] = ()
                ) -> Callable:
    """`policy(key, obs) -> action`: uniform random (actions of shape
    `batch`), or a file's."""
    if spec == "random":
        return lambda key, obs: jax.random.randint(key, batch, 0,
                                                   num_actions)
    path = pathlib.Path(spec)
    if not path.is_file():
        raise SystemExit(f"--policy: {spec!r} is neither 'random', a "
                         f"file defining policy(key, obs), nor a "
                         f"`jaxatari train` directory")
    policy = runpy.run_path(str(path)).get("policy")
    if not callable(policy):
        raise SystemExit(f"--policy: {spec} defines no policy(key, obs)")
    return policy


def _screen(state: Any) -> jax.Array:
    """The palette-index screen inside any wrapper's state (of a batch,
    the first env's)."""
    inner = wrappers.inner_state(state)
    machine = inner.machine
    if inner.episode_frame.ndim:                          # batched
        machine = jax.tree.map(lambda x: x[0], machine)
    return console.screen(machine)


def rollout(env: Any, params: Any, policy: Callable, key: jax.Array,
            steps: int, progress: bool = False) -> tuple[np.ndarray, dict]:
    """Plays `steps` steps from a reset: the screens (palette indices, the
    reset's first, so `steps + 1`) and a summary."""
    chunk = min(steps, PLAY_CHUNK)

    @jax.jit
    def play(key, state, obs):
        def body(carry, _):
            key, state, obs = carry
            key, act_key, step_key = jax.random.split(key, 3)
            action = policy(act_key, obs)
            obs, state, reward, done, _ = env.step(step_key, state, action,
                                                   params)
            return (key, state, obs), (_screen(state), jnp.sum(reward),
                                       jnp.sum(done))
        return jax.lax.scan(body, (key, state, obs), None, length=chunk)

    key, reset_key = jax.random.split(key)
    obs, state = env.reset(reset_key, params)
    screens, reward, episodes = [np.asarray(_screen(state))[None]], 0.0, 0
    calls = math.ceil(steps / chunk)
    for call in range(calls):
        (key, state, obs), (shown, rewards, dones) = play(key, state, obs)
        screens.append(np.asarray(shown))
        reward += float(np.sum(rewards[:steps - call * chunk]))
        episodes += int(np.sum(dones[:steps - call * chunk]))
        if progress:
            print(f"play: {min((call + 1) * chunk, steps)}/{steps} steps",
                  file=sys.stderr, flush=True)
    return np.concatenate(screens)[:steps + 1], {
        "steps": steps, "reward": reward, "episodes_ended": episodes}


def play_trained(args: argparse.Namespace) -> int:
    """`play GAME --policy DIR`: a `jaxatari train` run's agent, on the
    preset it trained on, recorded in full colour."""
    from jaxatari.agents import run   # the RL side, imported on demand
    agent, state, record = run.load_trained(args.policy)
    if games.lookup(record["env_id"]) is not games.lookup(args.game):
        raise ValueError(f"{args.policy} trained on {record['env_id']!r}, "
                         f"not {args.game!r}")
    base = wrappers.unwrapped(agent.env.env)
    frames = run.play_policy(
        agent, state.params, args.steps, args.seed,
        lambda s: base.screen_rgb(wrappers.inner_state(s)))
    path = render.save_video(frames, args.out,
                             args.fps or render.ALE_FPS / agent.env.frameskip)
    print(json.dumps({"game": base.rules.rom_id, "policy": str(args.policy),
                      "frames": len(frames), "out": str(path)}))
    return 0


def play_command(args: argparse.Namespace) -> int:
    if pathlib.Path(args.policy).is_dir():
        return play_trained(args)
    if args.preprocess:
        env, params = wrappers.make_atari(args.game, 1)
    else:
        env = environment.AtariEnv(args.game)
        params = env.make_params(
            frameskip=args.frameskip,
            repeat_action_probability=args.repeat_action_probability)
    base = wrappers.unwrapped(env)
    batch = (env.num_envs,) if isinstance(env, wrappers.VecEnv) else ()
    policy = load_policy(args.policy, len(base.action_set), batch)
    screens, summary = rollout(env, params, policy,
                               jax.random.key(args.seed), args.steps,
                               progress=True)
    frames = np.asarray(palette.to_rgb(jnp.asarray(screens),
                                       base.display_format))
    fps = args.fps or render.ALE_FPS / (4 if args.preprocess
                                        else args.frameskip)
    path = render.save_video(frames, args.out, fps)
    print(json.dumps({**summary, "game": base.rules.rom_id,
                      "frames": len(frames), "out": str(path)}))
    return 0


FORWARDED = {"train": ("jaxatari.agents.run", "train an agent (PPO, A2C, "
                         "GA3C) on a game or a gymnax env"),
             "sweep": ("jaxatari.population.sweep", "a population sweep "
                       "(PBT, HyperTrick, ES, random search) in one "
                       "program"),
             "bench": ("jaxatari.bench", "throughput against ale-py and "
                         "EnvPool (benchmarks/env_throughput.py)"),
             "parity": ("jaxatari.parity", "frame-by-frame comparison with "
                        "ale-py")}
"""Commands that hand their arguments to a module's `main`."""


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="jaxatari", description=__doc__
                                  .splitlines()[0])
    commands = top.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="the games and their parity")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(run=list_command)
    play = commands.add_parser("play", help="play and record a GIF or MP4")
    play.add_argument("game")
    play.add_argument("--steps", type=int, default=1000)
    play.add_argument("--out", type=pathlib.Path, default=None,
                      help="a .gif or .mp4 (default GAME.gif)")
    play.add_argument("--policy", default="random",
                      help="'random', a .py file defining "
                           "policy(key, obs) -> action, or a jaxatari "
                           "train directory (its agent, on its preset)")
    play.add_argument("--seed", type=int, default=0)
    play.add_argument("--frameskip", type=int, default=4)
    play.add_argument("--repeat-action-probability", type=float,
                      default=0.25)
    play.add_argument("--preprocess", action="store_true",
                      help="play the make_atari preset (the policy sees "
                           "its stacked 84x84 frames)")
    play.add_argument("--fps", type=float, default=None,
                      help="default: real time (60 / frameskip)")
    play.set_defaults(run=play_command)
    for name, (_, text) in FORWARDED.items():
        commands.add_parser(name, help=f"{text}; see jaxatari {name} -h",
                            add_help=False)
    return top


def main(argv: list[str] | None = None) -> int:
    """Runs a `jaxatari` command; returns its exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in FORWARDED:
        import importlib
        return importlib.import_module(FORWARDED[argv[0]][0]).main(
            argv[1:]) or 0
    args = parser().parse_args(argv)
    if args.command == "play":
        if args.steps < 1:
            raise SystemExit("--steps must be at least 1")
        args.out = args.out or pathlib.Path(f"{args.game}.gif")
        if args.out.suffix.lower() not in (".gif", ".mp4"):
            raise SystemExit(f"--out must end in .gif or .mp4, got "
                             f"{args.out}")
    try:
        return args.run(args)
    except ValueError as error:          # unknown game, bad settings
        raise SystemExit(f"jaxatari {args.command}: {error}") from error


def main_exit() -> None:
    """The console script's entry point."""
    sys.exit(main())


if __name__ == "__main__":
    main_exit()
