"""Env throughput: jaxatari's preprocessed env against the CPU systems RL
practitioners use, on the same workload, in one run.

The workload is the standard preprocessed Atari setup: frameskip 4, the
max of the last two frames, 84x84 gray, a stack of 4, up to 30 NOOP starts
(FIRE first where the game has it), clipped rewards, no sticky actions,
uniformly random actions. Each system plays it at its own batch sizes:

* **jaxatari**: `make_atari`'s env, batched as `VecEnv.step_each`
  batches it (each env's step, the resets made for the done envs alone
  on the CPU) inside a `lax.scan` of `--steps` steps with actions drawn
  on the device, the batch split over all devices (`jaxatari.sharding`;
  on the CPU one XLA host device per core). The program is compiled
  ahead of time; its compile time is reported apart.
* **ale-py AtariVectorEnv**: ale-py's C++ vector env, its defaults (the
  same workload), one thread per core.
* **EnvPool**: `envpool.make("<Name>-v5", env_type="gymnasium")` with the
  same settings, one thread per core (skipped when envpool is missing).
* **Gymnasium sync**: `SyncVectorEnv` over ale-py envs, each wrapped in
  `AtariPreprocessing` and `FrameStackObservation` (one core).

A figure is the median of `--repeats` timed calls (fewer when they pass
`--budget` seconds); env steps/s = batch x steps / seconds, frames/s = 4x
that. A batch is skipped when the one below it predicts a call longer than
`--max-call` seconds (compute-bound: time grows with the batch).

`jaxatari bench` runs this; so does `python benchmarks/env_throughput.py`.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import sys
import time
from typing import Any, Callable

FRAMESKIP = 4
NOOP_MAX = 30
DEFAULT_GAMES = ("breakout", "pong", "ms_pacman")   # ms_pacman: an F8 cart
MARKER = "<!-- env_throughput -->"


def timed(call: Callable[[], Any], repeats: int, budget: float
          ) -> list[float]:
    """Times `call()` up to `repeats` times, stopping once over `budget` s
    (at least once)."""
    times: list[float] = []
    while len(times) < repeats and (not times or sum(times) < budget):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times


def _result(system: str, game: str, batch: int, steps: int,
            times: list[float], **extra: Any) -> dict:
    median = statistics.median(times)
    return dict(system=system, game=game, batch=batch, steps_per_call=steps,
                timed_calls=len(times), seconds_per_call=median,
                steps_per_s=batch * steps / median,
                frames_per_s=batch * steps * FRAMESKIP / median, **extra)


def rollout_program(env: Any, params: Any, batch: int, steps: int):
    """A compiled `steps`-step rollout of `batch` copies of a single env
    (gymnax convention) with random actions, sharded over the devices.

    Returns:
        (run, carry, compile_seconds): `run(*carry, params)` returns the
        next carry and the summed rewards. The carry is donated: a call
        reuses its buffers, so a batch holds one state, not two.
    """
    import jax
    from jaxatari import sharding, wrappers
    mesh = sharding.batch_mesh(batch)
    count = len(env.action_set)

    def rollout(keys, state, params):
        def body(carry, _):
            keys, state = carry
            split = jax.vmap(lambda k: jax.random.split(k, 3))(keys)
            action = jax.vmap(lambda k: jax.random.randint(
                k, (), 0, count))(split[:, 1])
            _, state, reward, _, _ = wrappers.VecEnv(
                env, split.shape[0]).step_each(split[:, 2], state, action,
                                               params)
            return (split[:, 0], state), reward
        (keys, state), rewards = jax.lax.scan(body, (keys, state), None,
                                              length=steps)
        return keys, state, rewards.sum(0)

    keys = jax.device_put(jax.random.split(jax.random.key(0), batch),
                          sharding.batch_sharding(mesh))
    params = jax.device_put(params, sharding.replicated(mesh))
    reset = sharding.over_batch(jax.vmap(env.reset, in_axes=(0, None)),
                                mesh, (True, False))
    _, state = reset(keys, params)
    start = time.perf_counter()
    run = sharding.over_batch(rollout, mesh, (True, True, False),
                              donate_argnums=(0, 1)).lower(
        keys, state, params).compile()
    return run, [keys, state], time.perf_counter() - start


def measure_jaxatari(env: Any, params: Any, game: str, batch: int,
                     steps: int, repeats: int, budget: float) -> dict:
    """Median throughput of `rollout_program`."""
    import jax
    from jaxatari import lowering, sharding
    run, carry, compile_seconds = rollout_program(env, params, batch, steps)

    def call():
        carry[:] = jax.block_until_ready(run(*carry, params))[:2]
    times = timed(call, repeats, budget)
    return _result("jaxatari", game, batch, steps, times,
                   backend=jax.default_backend(),
                   devices=sharding.batch_mesh(batch).size,
                   compile_seconds=round(compile_seconds, 1),
                   plain_kernel=lowering.plain_kernel_mode())


def jaxatari_workload(game: str):
    """One env of `make_atari`'s preset (the batch is `vmap`ped by
    `rollout_program`) and its params, booted on the host CPU."""
    import jax
    from jaxatari import wrappers
    with jax.default_device(jax.devices("cpu")[0]):
        batched, params = wrappers.make_atari(game, 1, noop_max=NOOP_MAX)
    return batched.env, params


def _random_steps(envs: Any, batch: int, count: int, steps: int, seed: int
                  ) -> Callable[[], None]:
    import numpy as np
    rng = np.random.default_rng(seed)

    def call():
        for _ in range(steps):
            envs.step(rng.integers(count, size=batch))
    return call


def measure_ale_vector(game: str, batch: int, steps: int, repeats: int,
                       budget: float, threads: int) -> dict:
    """ale-py's AtariVectorEnv with its defaults (the workload)."""
    from ale_py.vector_env import AtariVectorEnv
    envs = AtariVectorEnv(game, num_envs=batch, num_threads=threads,
                          noop_max=NOOP_MAX, repeat_action_probability=0.0)
    envs.reset(seed=0)
    times = timed(_random_steps(envs, batch, envs.single_action_space.n,
                                steps, 0), repeats, budget)
    envs.close()
    return _result("ale-py AtariVectorEnv", game, batch, steps, times,
                   backend="cpu", devices=threads)


def measure_envpool(game: str, batch: int, steps: int, repeats: int,
                    budget: float, threads: int) -> dict:
    """EnvPool's Atari env with the workload's settings."""
    import envpool
    from jaxatari.gym import env_name
    envs = envpool.make(f"{env_name(game)}-v5", env_type="gymnasium",
                        num_envs=batch, num_threads=threads,
                        repeat_action_probability=0.0, noop_max=NOOP_MAX,
                        episodic_life=False, reward_clip=True,
                        use_fire_reset=True, stack_num=4, img_height=84,
                        img_width=84, frame_skip=FRAMESKIP)
    envs.reset()
    times = timed(_random_steps(envs, batch, envs.action_space.n, steps, 0),
                  repeats, budget)
    envs.close()
    return _result("EnvPool", game, batch, steps, times, backend="cpu",
                   devices=threads)


def measure_gym_sync(game: str, batch: int, steps: int, repeats: int,
                     budget: float) -> dict:
    """Gymnasium's SyncVectorEnv over preprocessed ale-py envs."""
    import ale_py
    import gymnasium
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation
    from jaxatari.gym import env_name
    gymnasium.register_envs(ale_py)

    def make():
        return FrameStackObservation(AtariPreprocessing(
            gymnasium.make(f"ALE/{env_name(game)}-v5", frameskip=1,
                           repeat_action_probability=0.0),
            noop_max=NOOP_MAX, frame_skip=FRAMESKIP), 4)
    envs = gymnasium.vector.SyncVectorEnv([make] * batch)
    envs.reset(seed=0)
    times = timed(_random_steps(envs, batch, envs.single_action_space.n,
                                steps, 0), repeats, budget)
    envs.close()
    return _result("Gymnasium sync", game, batch, steps, times,
                   backend="cpu", devices=1)


def profile_variants(game: str) -> dict[str, tuple[Any, Any]]:
    """The preset's step taken apart, cheapest last: what each layer adds
    is the difference of two neighbours' times."""
    import jax
    from jaxatari import environment, wrappers

    class Undrawn(wrappers._Wrapper):
        """`frameskip` frames, none drawn, no observation."""
        def reset(self, key, params):
            return self.env.reset(key, params)

        def step_env(self, key, state, action, params):
            base = self.env
            applied = jax.numpy.full(
                (params.frameskip,),
                environment.to_ale_action(base.played_actions, action))
            (state, total), _ = jax.lax.scan(
                lambda c, a: (base._skip_frame(c, a, params, False), None),
                (state, jax.numpy.int32(0)), applied)
            return (jax.numpy.zeros((), jax.numpy.uint8), state, total,
                    base._game_over(state, params), {})

    preset, preset_params = jaxatari_workload(game)
    with jax.default_device(jax.devices("cpu")[0]):
        base = environment.AtariEnv(game)
        params = base.make_params(frameskip=FRAMESKIP, obs_type="grayscale",
                                  repeat_action_probability=0.0)
    return {"preset step (2 frames drawn, max, resize, stack, clip)":
            (preset, preset_params),
            "AtariEnv.step, gray (last frame drawn)": (base, params),
            "4 frames, none drawn": (Undrawn(base), params)}


def profile(game: str, batch: int, steps: int, repeats: int,
            budget: float) -> list[dict]:
    """`measure_jaxatari` of each of `profile_variants`."""
    return [dict(measure_jaxatari(env, params, game, batch, steps, repeats,
                                  budget), system=f"jaxatari: {name}")
            for name, (env, params) in profile_variants(game).items()]


def sweep(measure: Callable[[int], dict], batches: list[int],
          max_call: float) -> list[dict]:
    """`measure(batch)` for growing batches; a batch is skipped once the
    last measured one predicts a call over `max_call` seconds."""
    results: list[dict] = []
    for batch in sorted(batches):
        last = next((r for r in reversed(results) if "skipped" not in r),
                    None)
        predicted = last and last["seconds_per_call"] * batch / last["batch"]
        if predicted and predicted > max_call:
            results.append(dict(last, batch=batch, skipped=(
                f"a call would take about {predicted:,.0f} s "
                f"(--max-call {max_call:g})")))
            continue
        results.append(measure(batch))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    return results


def _skipped(system: str, game: str, why: str) -> list[dict]:
    return [dict(system=system, game=game, skipped=why)]


def run_systems(args: argparse.Namespace) -> list[dict]:
    """Every (game, system) sweep asked for."""
    threads = os.cpu_count() or 1
    results: list[dict] = []
    for game in args.games:
        if "jaxatari" in args.systems:
            env, params = jaxatari_workload(game)
            results += sweep(lambda b: measure_jaxatari(
                env, params, game, b, args.steps, args.repeats, args.budget),
                args.batches, args.max_call)
        cpu = {"ale-py": lambda b: measure_ale_vector(
                   game, b, args.cpu_steps, args.repeats, args.budget,
                   threads),
               "envpool": lambda b: measure_envpool(
                   game, b, args.cpu_steps, args.repeats, args.budget,
                   threads),
               "gymnasium": lambda b: measure_gym_sync(
                   game, b, args.cpu_steps, args.repeats, args.budget)}
        for name, measure in cpu.items():
            if name not in args.systems:
                continue
            try:
                results += sweep(measure, args.cpu_batches, args.max_call)
            except ImportError as error:
                results += _skipped(name, game, f"not installed ({error}):"
                                    " pip install 'jaxatari[bench]'")
    return results


def markdown(results: list[dict], command: str) -> str:
    """The BENCHMARKS.md section: a table per game, then the raw lines."""
    import jax
    lines = [f"Command: `{command}` ({time.strftime('%Y-%m-%d')}), on "
             f"{platform.node() or 'this machine'} ({os.cpu_count()} cores, "
             f"JAX backend {jax.default_backend()}, "
             f"{jax.device_count()} devices).", ""]
    for game in dict.fromkeys(r["game"] for r in results):
        rows = [r for r in results if r["game"] == game]
        best = max((r["steps_per_s"] for r in rows if "skipped" not in r
                    and not r["system"].startswith("jaxatari")), default=None)
        lines += [f"**{game}**", "",
                  "| system | batch | env steps/s | frames/s | x best CPU "
                  "system |", "|---|---:|---:|---:|---:|"]
        for r in rows:
            if "skipped" in r:
                batch = f"{r['batch']:,}" if "batch" in r else ""
                lines.append(f"| {r['system']} | {batch} | "
                             f"skipped: {r['skipped']} | | |")
                continue
            ratio = f"{r['steps_per_s'] / best:.3g}" if best else ""
            lines.append(f"| {r['system']} | {r['batch']:,} | "
                         f"{r['steps_per_s']:,.0f} | {r['frames_per_s']:,.0f}"
                         f" | {ratio} |")
        lines.append("")
    raw = "\n".join(json.dumps(r) for r in results)
    return "\n".join(lines) + f"\nRaw output:\n\n```\n{raw}\n```\n"


def write_section(path: pathlib.Path, text: str, marker: str = MARKER,
                  heading: str = "Env throughput: "
                                 "`benchmarks/env_throughput.py`") -> None:
    """Replaces the text between the two `marker` lines of `path` (first
    appends a `heading` section holding them when absent)."""
    old = path.read_text() if path.exists() else "# Benchmarks\n"
    if old.count(marker) < 2:
        old += f"\n## {heading}\n\n{marker}\n{marker}\n"
    head, _, rest = old.partition(marker)
    _, _, tail = rest.partition(marker)
    path.write_text(f"{head}{marker}\n{text}{marker}{tail}")


def plot(results: list[dict], path: pathlib.Path) -> None:
    """Env steps/s against batch size, a line per system, a panel per
    game (log-log)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    played = [r for r in results                    # profile rows: apart
              if "skipped" not in r and ":" not in r["system"]]
    game_list = list(dict.fromkeys(r["game"] for r in played))
    figure, axes = plt.subplots(1, len(game_list), squeeze=False,
                                figsize=(5 * len(game_list), 4))
    for axis, game in zip(axes[0], game_list):
        for system in dict.fromkeys(r["system"] for r in played):
            rows = sorted((r for r in played if r["game"] == game
                           and r["system"] == system),
                          key=lambda r: r["batch"])
            if rows:
                axis.plot([r["batch"] for r in rows],
                          [r["steps_per_s"] for r in rows], "o-",
                          label=system)
        axis.set(xscale="log", yscale="log", title=game, xlabel="batch",
                 ylabel="env steps/s")
        batches = sorted({r["batch"] for r in played if r["game"] == game})
        axis.set_xticks(batches, [f"{b:,}" for b in batches])
        axis.minorticks_off()
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def _one_device_per_core() -> None:
    """On the CPU, one XLA host device per core (unless XLA_FLAGS sets a
    count): counts only before JAX's backend starts."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = (f"{flags} --xla_force_host_platform_"
                                   f"device_count={os.cpu_count() or 1}")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=list(DEFAULT_GAMES))
    parser.add_argument("--systems", nargs="+", default=[
        "jaxatari", "ale-py", "envpool", "gymnasium"])
    parser.add_argument("--batches", type=int, nargs="+",
                        default=[64, 256, 1024, 4096, 16384],
                        help="jaxatari's batch sizes")
    parser.add_argument("--cpu-batches", type=int, nargs="+",
                        default=[8, 64, 256], help="the CPU systems'")
    parser.add_argument("--steps", type=int, default=4,
                        help="jaxatari steps per timed call")
    parser.add_argument("--cpu-steps", type=int, default=100,
                        help="the CPU systems' steps per timed call")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget", type=float, default=60.0,
                        help="seconds of timed calls per measurement")
    parser.add_argument("--max-call", type=float, default=600.0)
    parser.add_argument("--profile", type=int, default=None, metavar="BATCH",
                        help="also time the preset's layers apart at this "
                             "batch, on the first game")
    parser.add_argument("--write", type=pathlib.Path, default=None,
                        help="BENCHMARKS.md: replace its section")
    parser.add_argument("--plot", type=pathlib.Path, default=None,
                        help="a PNG of throughput against batch size")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Runs the benchmark; prints one JSON line per measurement."""
    args = parse(argv)
    _one_device_per_core()
    from jaxatari import _config, games
    for game in args.games:
        games.lookup(game)                       # unknown: a clear error
    _config.enable_compilation_cache()
    results = run_systems(args)
    if args.profile:
        results += profile(args.games[0], args.profile, args.steps,
                           args.repeats, args.budget)
    for result in results:
        print(json.dumps(result), flush=True)
    command = "jaxatari bench " + " ".join(argv if argv is not None
                                           else sys.argv[1:])
    if args.write:
        write_section(args.write, markdown(results, command.strip()))
    if args.plot:
        plot(results, args.plot)
    return 0
