"""Population benchmarks: PBT against random search, HyperTrick against
random search, on gymnax's CartPole-v1 (fast enough for a CPU).

`pbt`: for each master seed, the same population (A2C members drawn from
the same prior: learning rate log-uniform on [1e-5, 1e-1], entropy
coefficient log-uniform on [1e-4, 0.05]) trains for the same generations
and frames twice: with PBT's exploit and explore, and with both off
(random search). The figures per seed: the best member by its last
score, its return re-measured on 64 fresh episodes (sampled actions,
keys not used in training), and the population's median last score.

`hypertrick`: for each master seed, HyperTrick with a budget of B
configurations against random search training B configurations from the
same prior to the end: each method's best configuration's last-phase
score and the total frames each spent.

Prints one JSON line per run and a summary line per method.

`atari-cost`: the population's own cost on the Atari preset: 16 A2C
members of N envs each (one vmapped program) against one member of 16N
envs, frames/s of each, and the bytes of one member's state.

Usage: python benchmarks/population.py pbt [--seeds 0 1 2 3 4]
       python benchmarks/population.py hypertrick [--seeds 0 1 2 3 4]
       python benchmarks/population.py atari-cost [--members 16]
           [--envs-each 1] [--updates 2]
"""
from __future__ import annotations

import argparse
import json
import time
from typing import Any

import gymnax
import jax
import jax.numpy as jnp
import numpy as np

from jaxatari.agents import a2c, core
from jaxatari.population import es, hypertrick, pbt, spaces

SPACE = {"learning_rate": spaces.LogUniform(1e-5, 1e-1),
         "ent_coef": spaces.LogUniform(1e-4, 0.05)}
MEMBERS, READY, GENERATIONS = 16, 200, 15


def agent(updates: int) -> core.Agent:
    env, params = gymnax.make("CartPole-v1")
    config = a2c.A2CConfig(num_envs=8, num_steps=5, anneal_lr=False,
                           life_loss_terminal=False,
                           total_steps=updates * 40)
    return a2c.make(config, env, params)


def fresh_return(agent: core.Agent, params: Any, seed: int) -> float:
    """Mean return of 64 fresh episodes of a member's sampled policy."""
    env = core.BatchedEnv(agent.env.env, agent.env.params, 64, False)
    policy = es.make_policy(agent.network, greedy=False)
    returns, _ = jax.jit(lambda p, k: es.rollout_returns(
        env, policy, p, k, 500))(params, jax.random.key(10_000 + seed))
    return float(jnp.mean(returns))


def run_pbt(seed: int, search: bool) -> dict[str, Any]:
    learner = agent(READY * GENERATIONS)
    config = pbt.PBTConfig(members=MEMBERS, ready_updates=READY,
                           generations=GENERATIONS, score_window=50,
                           exploit=not search, explore=not search)
    train = jax.jit(pbt.make_train(config, learner, SPACE))
    begin = time.perf_counter()
    state, metrics = jax.block_until_ready(train(jax.random.key(seed)))
    seconds = time.perf_counter() - begin
    scores = np.asarray(metrics["scores"][-1])
    best = int(np.nanargmax(scores))
    params = jax.tree.map(lambda x: x[best], state.members.params)
    frames = int(np.sum(np.asarray(metrics["frames"][-1], np.int64)))
    return {"benchmark": "pbt", "method": "random" if search else "pbt",
            "seed": seed, "best_member": best,
            "best_score": float(scores[best]),
            "best_fresh_return": fresh_return(learner, params, seed),
            "median_score": float(np.nanmedian(scores)),
            "frames": frames, "seconds": round(seconds, 1),
            "best_learning_rate": float(
                state.members.hparams.learning_rate[best])}


def run_hypertrick(seed: int, budget: int, phases: int,
                   phase_updates: int) -> list[dict[str, Any]]:
    learner = agent(phases * phase_updates)
    ht = hypertrick.HyperTrickConfig(members=8, budget=budget,
                                     phases=phases,
                                     phase_updates=phase_updates,
                                     score_window=50)
    _, metrics = jax.jit(hypertrick.make_train(ht, learner, SPACE))(
        jax.random.key(seed))
    summary = hypertrick.summarise(ht, metrics)
    search = pbt.PBTConfig(members=budget, ready_updates=phase_updates,
                           generations=phases, score_window=50,
                           exploit=False, explore=False)
    _, searched = jax.jit(pbt.make_train(search, learner, SPACE))(
        jax.random.key(seed))
    last = np.asarray(searched["scores"][-1])
    frames = int(np.sum(np.asarray(searched["frames"][-1], np.int64)))
    return [{"benchmark": "hypertrick", "method": "hypertrick",
             "seed": seed, "best_score": summary["best_score"],
             "frames": summary["frames_spent"],
             "frames_full_training": summary["frames_full_training"],
             "evicted": summary["evicted"], "budget": budget},
            {"benchmark": "hypertrick", "method": "random", "seed": seed,
             "best_score": float(np.nanmax(last)), "frames": frames,
             "budget": budget}]


def atari_cost(game: str, members: int, envs_each: int,
               updates: int) -> list[dict[str, Any]]:
    """Frames/s of `members` A2C members of `envs_each` envs (one vmapped
    program) against one member of `members * envs_each` envs, on the
    Atari preset; and the bytes of one member's state."""
    from jaxatari.agents import envs as agent_envs
    env, params = agent_envs.make_env(game)
    env = agent_envs.unbatched(env)
    rows = []
    for count, num_envs in ((1, members * envs_each), (members, envs_each)):
        config = a2c.A2CConfig(num_envs=num_envs, total_steps=10**6)
        learner = a2c.make(config, env, params)
        def scan(s, learner=learner):
            return core.scan_updates(learner, s, updates)
        if count == 1:       # one agent, as `train` runs it: no vmap
            state = jax.jit(learner.init)(jax.random.key(0),
                                          config.hparams())
            run = jax.jit(scan)
        else:
            keys = jax.random.split(jax.random.key(0), count)
            hparams = jax.tree.map(lambda x: jnp.stack([x] * count),
                                   config.hparams())
            state = jax.jit(jax.vmap(learner.init))(keys, hparams)
            run = jax.jit(jax.vmap(scan))
        begin = time.perf_counter()
        compiled = run.lower(state).compile()
        compile_seconds = time.perf_counter() - begin
        begin = time.perf_counter()
        jax.block_until_ready(compiled(state))
        seconds = time.perf_counter() - begin
        frames = count * num_envs * config.num_steps * updates * 4
        member_bytes = sum(x.nbytes for x in jax.tree.leaves(state)
                           if hasattr(x, "nbytes")) // count
        rows.append({"benchmark": "atari_population_cost", "game": game,
                     "members": count, "envs_per_member": num_envs,
                     "frames_per_second": round(frames / seconds, 1),
                     "compile_seconds": round(compile_seconds, 1),
                     "bytes_per_member": member_bytes,
                     "backend": jax.default_backend()})
    rows[1]["ratio_to_one_member"] = round(
        rows[1]["frames_per_second"] / rows[0]["frames_per_second"], 3)
    return rows


def summarise(rows: list[dict[str, Any]], keys: tuple[str, ...]) -> None:
    for method in sorted({row["method"] for row in rows}):
        mine = [row for row in rows if row["method"] == method]
        summary = {"summary": mine[0]["benchmark"], "method": method,
                   "seeds": len(mine)}
        for key in keys:
            values = np.array([row[key] for row in mine], float)
            summary[key] = {"mean": round(float(values.mean()), 2),
                            "std": round(float(values.std()), 2),
                            "per_seed": [round(float(v), 2)
                                         for v in values]}
        print(json.dumps(summary), flush=True)


def main() -> None:
    top = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    top.add_argument("mode", choices=["pbt", "hypertrick", "atari-cost"])
    top.add_argument("--game", default="pong")
    top.add_argument("--members", type=int, default=16)
    top.add_argument("--envs-each", type=int, default=1)
    top.add_argument("--updates", type=int, default=2)
    top.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    top.add_argument("--budget", type=int, default=32)
    top.add_argument("--phases", type=int, default=4)
    top.add_argument("--phase-updates", type=int, default=500)
    args = top.parse_args()
    if args.mode == "atari-cost":
        for row in atari_cost(args.game, args.members, args.envs_each,
                              args.updates):
            print(json.dumps(row), flush=True)
        return
    rows = []
    for seed in args.seeds:
        if args.mode == "pbt":
            new = [run_pbt(seed, search=False), run_pbt(seed, search=True)]
        else:
            new = run_hypertrick(seed, args.budget, args.phases,
                                 args.phase_updates)
        for row in new:
            print(json.dumps(row), flush=True)
        rows += new
    keys = (("best_fresh_return", "median_score", "frames")
            if args.mode == "pbt" else ("best_score", "frames"))
    summarise(rows, keys)


if __name__ == "__main__":
    from jaxatari import _config
    _config.enable_compilation_cache()
    main()
