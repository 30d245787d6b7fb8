"""Training benchmarks for jaxatari.agents: learning on MinAtar, and the
agents' overhead on the Atari preset.

`minatar`: PPO, A2C and GA3C on gymnax's Breakout-MinAtar (or another
gymnax env), each algorithm's seeds trained together in one program
(`jax.jit(jax.vmap(train))`), against a uniformly random policy measured
in the same run. Each algorithm keeps its own defaults (CleanRL's PPO,
the SB3 zoo's A2C, GA3C's) except the env count, `--num-envs` (64).
Reports, per algorithm, each seed's mean episode return over the last
10% of updates, agent steps/s and compile time; `--plot` draws the mean
curve over seeds.

`atari`: on the `make_atari` preset, the env alone (a random policy in a
scanned rollout) against each algorithm's training at the same batch,
so the agent's cost is a ratio: training frames/s / env frames/s.

`random`: a uniformly random policy's mean episode return on any env id
(a jaxatari game, whole games of unclipped score, or `gymnax:<id>`), the
baseline for a `jaxatari train` run's curve.

`conv`: the Nature CNN's gradient on a batch of stacked frames, under a
plain `jit`, `--steps` of them in a `lax.scan` (as the training loops run
it) and the same steps unrolled, with `conv.conv2d` (the networks'
convolution) against `lax.conv_general_dilated`'s own gradient, whose
convolutions XLA:CPU leaves non-canonical inside loops. Medians of
`--repeats` calls after a compiling one.

Prints one JSON line per measurement.

Usage:
    python benchmarks/train.py minatar [--env Breakout-MinAtar]
        [--steps 10000000] [--seeds 0 1 2] [--algos ppo a2c ga3c]
        [--plot benchmarks/train_minatar.png]
    python benchmarks/train.py atari [--game pong] [--num-envs 8]
        [--updates 2]
    python benchmarks/train.py random [--env breakout] [--num-envs 64]
        [--steps 2000] [--seeds 0 1 2]
    python benchmarks/train.py conv [--batch 256] [--steps 4]
"""
from __future__ import annotations

import argparse
import json
import platform
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxatari.agents import a2c, envs, ga3c, ppo

ALGORITHMS = {"ppo": (ppo, ppo.PPOConfig), "a2c": (a2c, a2c.A2CConfig),
              "ga3c": (ga3c, ga3c.GA3CConfig)}


def machine() -> dict[str, Any]:
    return {"backend": jax.default_backend(),
            "device": str(jax.devices()[0]), "host": platform.node(),
            "processor": platform.processor() or platform.machine()}


def random_policy_return(env: Any, params: Any, num_envs: int, steps: int,
                         seed: int = 0) -> float:
    """Mean return of the episodes a uniform random policy completes."""
    from jaxatari.agents import core
    batched = core.BatchedEnv(env, params, num_envs, False)

    @jax.jit
    def play(key):
        obs, state = batched.reset(key)

        def body(carry, key):
            state, running, total, count = carry
            act_key, step_key = jax.random.split(key)
            actions = jax.random.randint(act_key, (num_envs,), 0,
                                         batched.num_actions)
            out = batched.step(step_key, state, actions)
            running = running + out.score
            total = total + jnp.sum(jnp.where(out.done, running, 0.0))
            count = count + jnp.sum(out.done)
            return (out.env_state, jnp.where(out.done, 0.0, running), total,
                    count), None
        carry = (state, jnp.zeros(num_envs), 0.0, 0)
        carry, _ = jax.lax.scan(body, carry, jax.random.split(key, steps))
        return carry[2] / carry[3]

    return float(play(jax.random.key(seed)))


def train_seeds(algo: str, env: Any, params: Any, config: Any,
                seeds: list[int]) -> dict[str, Any]:
    """All seeds of one algorithm in one program; returns the figures and
    the per-update mean returns (seeds x updates)."""
    module = ALGORITHMS[algo][0]
    train = jax.jit(jax.vmap(module.make_train(config, env, params)))
    keys = jnp.stack([jax.random.key(s) for s in seeds])
    begin = time.perf_counter()
    compiled = train.lower(keys).compile()
    compile_seconds = time.perf_counter() - begin
    begin = time.perf_counter()
    _, metrics = jax.block_until_ready(compiled(keys))
    seconds = time.perf_counter() - begin
    returns = np.asarray(metrics["episode_return"])
    tail = returns[:, -max(1, returns.shape[1] // 10):]
    steps = int(np.asarray(metrics["env_steps"])[0, -1])
    return {"algo": algo, "seeds": seeds,
            "final_return": [round(float(np.nanmean(t)), 3) for t in tail],
            "agent_steps": steps, "seconds": round(seconds, 1),
            "steps_per_second": round(steps * len(seeds) / seconds),
            "compile_seconds": round(compile_seconds, 1),
            "curve": returns, "steps_axis":
                np.asarray(metrics["env_steps"])[0]}


def minatar(args: argparse.Namespace) -> None:
    env, params = envs.make_env(f"gymnax:{args.env}")
    baseline = random_policy_return(env, params, 64, 20_000)
    print(json.dumps({"benchmark": "minatar", "env": args.env,
                      "policy": "random", "return": round(baseline, 3),
                      **machine()}), flush=True)
    curves = {}
    for algo in args.algos:
        config = ALGORITHMS[algo][1](num_envs=args.num_envs,
                                     total_steps=args.steps,
                                     life_loss_terminal=False)
        result = train_seeds(algo, env, params, config, args.seeds)
        curves[algo] = (result.pop("steps_axis"), result.pop("curve"))
        print(json.dumps({"benchmark": "minatar", "env": args.env,
                          **result, "random_return": round(baseline, 3),
                          "num_envs": args.num_envs, **machine()}),
              flush=True)
    if args.plot:
        plot(curves, baseline, args.env, args.plot)


def plot(curves: dict, baseline: float, env: str, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(figsize=(7, 4), dpi=100)
    for algo, (steps, returns) in curves.items():
        window = max(1, returns.shape[1] // 50)
        mean = np.nanmean(returns, axis=0)
        seen = np.isfinite(mean)
        smooth = (np.convolve(np.where(seen, mean, 0.0), np.ones(window),
                              "same")
                  / np.maximum(np.convolve(seen, np.ones(window), "same"),
                               1))
        axes.plot(steps, smooth, label=f"{algo} (mean of "
                  f"{returns.shape[0]} seeds)")
    axes.axhline(baseline, color="gray", linestyle="--",
                 label="random policy")
    axes.set_xlabel("agent steps")
    axes.set_ylabel("episode return")
    axes.set_title(f"{env}, jaxatari.agents on the CPU")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)


def atari(args: argparse.Namespace) -> None:
    env, params = envs.make_env(args.game, args.num_envs)
    from jaxatari.agents import core
    batched = core.BatchedEnv(env, params, args.num_envs)
    steps = args.num_steps * args.updates
    env_fps = env_frames_per_second(batched, steps)
    print(json.dumps({"benchmark": "atari_env", "game": args.game,
                      "num_envs": args.num_envs, **env_fps, **machine()}),
          flush=True)
    for algo in args.algos:
        module, config_class = ALGORITHMS[algo]
        extra = ({"num_minibatches": 2, "update_epochs": 4}
                 if algo == "ppo" else {})
        config = config_class(num_envs=args.num_envs,
                              num_steps=args.num_steps,
                              total_steps=steps * args.num_envs, **extra)
        agent = module.make(config, env, params)
        run = jax.jit(lambda s: core.scan_updates(agent, s, args.updates))
        state = jax.jit(agent.init)(jax.random.key(0), config.hparams())
        begin = time.perf_counter()
        compiled = run.lower(state).compile()
        compile_seconds = time.perf_counter() - begin
        begin = time.perf_counter()
        jax.block_until_ready(compiled(state))
        seconds = time.perf_counter() - begin
        frames = steps * args.num_envs * batched.frameskip
        print(json.dumps({
            "benchmark": "atari_train", "game": args.game, "algo": algo,
            "num_envs": args.num_envs, "num_steps": args.num_steps,
            "updates": args.updates, "frames_per_second":
                round(frames / seconds, 1),
            "ratio_to_env": round(frames / seconds
                                  / env_fps["frames_per_second"], 3),
            "compile_seconds": round(compile_seconds, 1), **machine()}),
            flush=True)


def env_frames_per_second(batched: Any, steps: int) -> dict[str, Any]:
    """The preset alone under a random policy, `steps` scanned steps."""
    @jax.jit
    def play(key, state):
        def body(state, key):
            act_key, step_key = jax.random.split(key)
            actions = jax.random.randint(act_key, (batched.num_envs,), 0,
                                         batched.num_actions)
            return batched.step(step_key, state, actions).env_state, None
        return jax.lax.scan(body, state, jax.random.split(key, steps))[0]

    _, state = batched.reset(jax.random.key(0))
    begin = time.perf_counter()
    compiled = play.lower(jax.random.key(1), state).compile()
    compile_seconds = time.perf_counter() - begin
    begin = time.perf_counter()
    jax.block_until_ready(compiled(jax.random.key(1), state))
    seconds = time.perf_counter() - begin
    frames = steps * batched.num_envs * batched.frameskip
    return {"frames_per_second": round(frames / seconds, 1),
            "compile_seconds": round(compile_seconds, 1)}


def random_baseline(args: argparse.Namespace) -> None:
    env, params = envs.make_env(args.env, args.num_envs)
    returns = [random_policy_return(env, params, args.num_envs, args.steps,
                                    seed) for seed in args.seeds]
    print(json.dumps({"benchmark": "random_policy", "env": args.env,
                      "num_envs": args.num_envs, "steps": args.steps,
                      "seeds": args.seeds,
                      "mean_return": [round(r, 3) for r in returns],
                      **machine()}), flush=True)


def conv_gradients(args: argparse.Namespace) -> None:
    from jax import lax

    from jaxatari import bench
    from jaxatari.agents import conv, networks
    obs = jax.random.randint(jax.random.key(1), (args.batch, 4, 84, 84), 0,
                             256, jnp.int32).astype(jnp.uint8)
    for name, op in (("conv2d", conv.conv2d),
                     ("lax", lax.conv_general_dilated)):
        net = networks.NatureCNN(6, conv=op)
        params = jax.jit(net.init)(jax.random.key(0), obs[:1])
        for loop, program in _gradient_programs(net, args.steps).items():
            compiled = jax.jit(program).lower(params, obs).compile()
            def call(compiled=compiled):
                return jax.block_until_ready(compiled(params, obs))
            call()
            seconds = float(np.median(bench.timed(call, args.repeats,
                                                  budget=float("inf"))))
            count = 1 if loop == "plain" else args.steps
            print(json.dumps({
                "benchmark": "cnn_gradient", "conv": name, "loop": loop,
                "batch": args.batch, "gradients": count,
                "seconds": round(seconds, 3),
                "seconds_per_gradient": round(seconds / count, 3),
                **machine()}), flush=True)


def _gradient_programs(net: Any, steps: int) -> dict[str, Any]:
    def step(params, obs):
        def loss(p):
            logits, value = net.apply(p, obs)
            return jnp.sum(jax.nn.log_softmax(logits)[:, 0]) + jnp.sum(value)
        grads = jax.grad(loss)(params)
        return jax.tree.map(lambda p, g: p - 1e-6 * g, params, grads)

    def looped(unroll):
        def run(params, obs):
            return jax.lax.scan(lambda p, _: (step(p, obs), None), params,
                                None, length=steps, unroll=unroll)[0]
        return run
    return {"plain": step, "scan": looped(1), "unrolled": looped(True)}


def main(argv: list[str] | None = None) -> None:
    top = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    modes = top.add_subparsers(dest="mode", required=True)
    mini = modes.add_parser("minatar")
    mini.add_argument("--env", default="Breakout-MinAtar")
    mini.add_argument("--steps", type=int, default=10_000_000)
    mini.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    mini.add_argument("--algos", nargs="+", default=list(ALGORITHMS))
    mini.add_argument("--num-envs", type=int, default=64)
    mini.add_argument("--plot", default=None)
    mini.set_defaults(run=minatar)
    ale = modes.add_parser("atari")
    ale.add_argument("--game", default="pong")
    ale.add_argument("--num-envs", type=int, default=8)
    ale.add_argument("--num-steps", type=int, default=16)
    ale.add_argument("--updates", type=int, default=2)
    ale.add_argument("--algos", nargs="+", default=list(ALGORITHMS))
    ale.set_defaults(run=atari)
    rand = modes.add_parser("random")
    rand.add_argument("--env", default="breakout")
    rand.add_argument("--num-envs", type=int, default=64)
    rand.add_argument("--steps", type=int, default=2000)
    rand.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    rand.set_defaults(run=random_baseline)
    grads = modes.add_parser("conv")
    grads.add_argument("--batch", type=int, default=256)
    grads.add_argument("--steps", type=int, default=4)
    grads.add_argument("--repeats", type=int, default=3)
    grads.set_defaults(run=conv_gradients)
    args = top.parse_args(argv)
    args.run(args)


if __name__ == "__main__":
    from jaxatari import _config
    _config.enable_compilation_cache()
    main()
