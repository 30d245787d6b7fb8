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
configurations (8 slots, P phases of U updates, evicting the bottom
fraction F of each phase's recorded scores) against random search
training S configurations from the same prior to the end (S = B unless
`--search-budget`). Both draw their configurations with the same master
seed the same way, so configuration c is the same hyperparameters and
`agent.init` key in both, and B >= S makes random search's S
configurations the first S of HyperTrick's. Each method's best
configuration is chosen by its last-phase training score (HyperTrick:
among the configurations that finished) and re-measured on 64 fresh
episodes, the same episodes for both (`fresh_returns`): the training
score is a max over noisy scores and biased upward the more
configurations it is taken over. The figures per seed: both scores, the
fresh return's standard error, the frames each method stepped, and how
many phases HyperTrick gave random search's winner. With `--retrains K`,
each method's chosen configuration is also trained K more times from
fresh keys and each run measured on fresh episodes (`configuration_return`):
one training run of a configuration is chaotic in its floating point (the
same configuration and key trained in the two methods' programs of
different sizes ends hundreds apart), so that is the figure for the
configuration a search found, apart from its one run's luck.

Prints one JSON line per run and a summary line per method; for
`hypertrick` also a `hypertrick_vs_random` line (`compare`).

`atari-cost`: the population's own cost on the Atari preset: 16 A2C
members of N envs each (one vmapped program) against one member of 16N
envs, frames/s of each, and the bytes of one member's state. With
`--env-only`, the same comparison for the env alone (random actions, no
agent), which splits the population's cost into the env's and the
agents'.

Usage: python benchmarks/population.py pbt [--seeds 0 1 2 3 4] [--generations 15]
       python benchmarks/population.py hypertrick [--seeds 0 1 2 3 4]
           [--budget 32] [--search-budget 32] [--phases 4]
           [--phase-updates 250] [--eviction-fraction 0.5]
           [--score-window 50] [--retrains 8]
       python benchmarks/population.py atari-cost [--members 16]
           [--envs-each 1] [--updates 2] [--repeats 1] [--env-only]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Callable

import gymnax
import jax
import jax.numpy as jnp
import numpy as np

from jaxatari.agents import a2c, core
from jaxatari.population import es, hypertrick, pbt, spaces

SPACE = {"learning_rate": spaces.LogUniform(1e-5, 1e-1),
         "ent_coef": spaces.LogUniform(1e-4, 0.05)}
MEMBERS, READY, GENERATIONS = 16, 200, 15
SCORE_WINDOW = 50
"""Updates a score averages (250 env steps of each of 8 envs, at most a
few CartPole episodes each); `hypertrick --score-window` changes it."""


def agent(updates: int) -> core.Agent:
    """A2C on CartPole-v1 (8 envs x 5 steps, no annealing) sized for
    `updates` updates."""
    env, params = gymnax.make("CartPole-v1")
    config = a2c.A2CConfig(num_envs=8, num_steps=5, anneal_lr=False,
                           life_loss_terminal=False,
                           total_steps=updates * 40)
    return a2c.make(config, env, params)


def fresh_program(agent: core.Agent
                  ) -> Callable[[Any, int], jax.Array]:
    """`(params, seed) ->` returns of 64 fresh episodes of a member's
    sampled policy (keys not used in training; the same episodes' keys
    for every member of a seed), compiled once for all the members it
    is called on."""
    env = core.BatchedEnv(agent.env.env, agent.env.params, 64, False)
    policy = es.make_policy(agent.network, greedy=False)
    run = jax.jit(lambda p, k: es.rollout_returns(env, policy, p, k, 500))
    return lambda params, seed: run(params,
                                    jax.random.key(10_000 + seed))[0]


def fresh_returns(agent: core.Agent, params: Any, seed: int) -> jax.Array:
    """`fresh_program`'s returns for one member."""
    return fresh_program(agent)(params, seed)


def _stderr(values: np.ndarray) -> float:
    """The standard error of `values`' mean."""
    return float(values.std(ddof=1) / np.sqrt(values.size))


def fresh_figures(agent: core.Agent, params: Any,
                  seed: int) -> dict[str, float]:
    """`best_fresh_return` (the mean of 64 fresh episodes) and
    `best_fresh_stderr` (its standard error)."""
    returns = np.asarray(fresh_returns(agent, params, seed), np.float64)
    return {"best_fresh_return": float(returns.mean()),
            "best_fresh_stderr": _stderr(returns)}


def best_by_last_score(config: pbt.PBTConfig, learner: core.Agent,
                       seed: int) -> tuple[dict[str, Any], Any, np.ndarray]:
    """Trains one population (PBT, or random search with exploit and
    explore off) and picks its best member by last score.

    Returns:
        The row's fields (`best_member`, `best_score`, the fresh-episode
        figures of that member, `frames`, `seconds`), the final state and
        the members' last scores.
    """
    train = jax.jit(pbt.make_train(config, learner, SPACE))
    begin = time.perf_counter()
    state, metrics = jax.block_until_ready(train(jax.random.key(seed)))
    seconds = time.perf_counter() - begin
    scores = np.asarray(metrics["scores"][-1])
    best = int(np.nanargmax(scores))
    params = jax.tree.map(lambda x: x[best], state.members.params)
    return ({"best_member": best, "best_score": float(scores[best]),
             **fresh_figures(learner, params, seed),
             "frames": int(np.sum(np.asarray(metrics["frames"][-1],
                                             np.int64))),
             "seconds": round(seconds, 1)}, state, scores)


def run_pbt(seed: int, search: bool,
            generations: int = GENERATIONS) -> dict[str, Any]:
    """PBT (or, with `search`, random search: exploit and explore off)
    for one master seed, `generations` of `READY` updates: its best
    member by last score, re-measured on fresh episodes, the population's
    median and its frames."""
    learner = agent(READY * generations)
    config = pbt.PBTConfig(members=MEMBERS, ready_updates=READY,
                           generations=generations, score_window=SCORE_WINDOW,
                           exploit=not search, explore=not search)
    row, state, scores = best_by_last_score(config, learner, seed)
    return {"benchmark": "pbt", "method": "random" if search else "pbt",
            "seed": seed, **row,
            "median_score": float(np.nanmedian(scores)),
            "best_learning_rate": float(state.members.hparams.learning_rate[
                row["best_member"]])}


def hypertrick_run(seed: int, ht: hypertrick.HyperTrickConfig,
                   learner: core.Agent) -> dict[str, Any]:
    """One HyperTrick schedule: its best finished configuration by
    last-phase score, re-measured on fresh episodes, and its frames."""
    begin = time.perf_counter()
    state, metrics = jax.block_until_ready(jax.jit(
        hypertrick.make_train(ht, learner, SPACE))(jax.random.key(seed)))
    seconds = time.perf_counter() - begin
    summary = hypertrick.summarise(ht, metrics)
    table = jax.device_get(metrics["configurations"])
    return {"benchmark": "hypertrick", "method": "hypertrick",
            "seed": seed, "budget": ht.budget, "phases": ht.phases,
            "phase_updates": ht.phase_updates,
            "eviction_fraction": ht.eviction_fraction,
            "best_config": summary["best_config"],
            "best_score": summary["best_score"],
            "best_hparams": {name: float(summary["best_hparams"][name])
                             for name in SPACE},
            **fresh_figures(learner, state.best.params, seed),
            "frames": summary["frames_spent"],
            "frames_full_training": summary["frames_full_training"],
            "evicted": summary["evicted"], "finished": summary["finished"],
            "phases_reached": table["phases_reached"].tolist(),
            "seconds": round(seconds, 1)}


def search_run(seed: int, budget: int, phases: int, phase_updates: int,
               learner: core.Agent,
               score_window: int = SCORE_WINDOW) -> dict[str, Any]:
    """Random search: `budget` configurations trained to the end (PBT
    with exploit and explore off); its best by last score, re-measured
    on fresh episodes, and its frames."""
    search = pbt.PBTConfig(members=budget, ready_updates=phase_updates,
                           generations=phases, score_window=score_window,
                           exploit=False, explore=False)
    row, state, _ = best_by_last_score(search, learner, seed)
    row["best_config"] = row.pop("best_member")
    row["best_hparams"] = {name: float(getattr(state.members.hparams, name)[
        row["best_config"]]) for name in SPACE}
    return {"benchmark": "hypertrick", "method": "random", "seed": seed,
            "budget": budget, **row}


def configuration_return(learner: core.Agent, hparams: dict[str, float],
                         updates: int, seed: int,
                         retrains: int) -> dict[str, Any]:
    """How good a configuration is, apart from the luck of one training
    run: `retrains` fresh trainings of it (one program, fixed
    hyperparameters, `agent.init` keys from a stream of their own), each
    trained for `updates` updates and measured on 64 fresh episodes.

    Returns:
        `config_return` (the mean of the retrains' fresh returns),
        `config_stderr` (its standard error) and `config_returns`.
    """
    fixed = {name: spaces.Categorical((float(hparams[name]),))
             for name in SPACE}
    config = pbt.PBTConfig(members=retrains, ready_updates=updates,
                           generations=1, exploit=False, explore=False,
                           truncation=0.5)   # unused (no exploit); valid
                           # for any retrains >= 2
    state, _ = jax.block_until_ready(jax.jit(pbt.make_train(
        config, learner, fixed))(jax.random.key(20_000 + seed)))
    evaluate = fresh_program(learner)
    returns = np.array([float(np.mean(np.asarray(evaluate(
        jax.tree.map(lambda x: x[k], state.members.params), seed))))
        for k in range(retrains)])
    return {"config_return": float(returns.mean()),
            "config_stderr": _stderr(returns),
            "config_returns": [round(float(r), 2) for r in returns]}


def run_hypertrick(seed: int, budget: int, phases: int, phase_updates: int,
                   eviction_fraction: float = 0.5,
                   search_budget: int | None = None,
                   score_window: int = SCORE_WINDOW, retrains: int = 0
                   ) -> list[dict[str, Any]]:
    """HyperTrick with `budget` configurations against random search with
    `search_budget` (default `budget`), one master seed, both scoring
    (ranking, evicting and selecting) by the mean return of the last
    `score_window` updates. With `retrains`, each method's selected
    configuration is also retrained that many times from fresh keys
    (`configuration_return`): the quality of the configuration found,
    apart from its one training run's luck.

    Returns:
        The HyperTrick row (with `search_best_phases_reached`: the phases
        HyperTrick gave random search's best configuration, when it drew
        it) and the random-search row.
    """
    learner = agent(phases * phase_updates)
    ht = hypertrick.HyperTrickConfig(
        members=8, budget=budget, phases=phases,
        phase_updates=phase_updates, eviction_fraction=eviction_fraction,
        score_window=score_window)
    mine = hypertrick_run(seed, ht, learner)
    mine["score_window"] = score_window
    searched = search_run(seed, search_budget or budget, phases,
                          phase_updates, learner, score_window)
    reached = mine.pop("phases_reached")
    winner = searched["best_config"]
    mine["search_best_phases_reached"] = (reached[winner]
                                          if winner < budget else None)
    if retrains:
        for row in (mine, searched):
            row.update(configuration_return(
                learner, row["best_hparams"], phases * phase_updates, seed,
                retrains))
    return [mine, searched]


def timed_alternately(programs: list[tuple[Any, Any]],
                      repeats: int) -> list[float]:
    """The median seconds of each compiled program's call on its input,
    after one untimed call each, timed in turns (A, B, A, B, ...) so
    that a drift in the machine's load falls on every program alike."""
    for compiled, arg in programs:
        jax.block_until_ready(compiled(arg))
    times: list[list[float]] = [[] for _ in programs]
    for _ in range(repeats):
        for (compiled, arg), own in zip(programs, times):
            begin = time.perf_counter()
            jax.block_until_ready(compiled(arg))
            own.append(time.perf_counter() - begin)
    return [float(np.median(own)) for own in times]


def _cost_rows(benchmark: str, game: str, shapes: list[tuple[int, int]],
               seconds: list[float], frames_per_env: int, repeats: int,
               extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (members, envs per member) shape, the second with its
    frames/s over the first's."""
    rows = [{"benchmark": benchmark, "game": game, "members": count,
             "envs_per_member": num_envs,
             "frames_per_second": round(
                 count * num_envs * frames_per_env / sec, 1),
             "timed_calls": repeats, **more,
             "backend": jax.default_backend()}
            for (count, num_envs), sec, more in zip(shapes, seconds, extra)]
    rows[1]["ratio_to_one_member"] = round(
        rows[1]["frames_per_second"] / rows[0]["frames_per_second"], 3)
    return rows


def atari_cost(game: str, members: int, envs_each: int, updates: int,
               repeats: int = 1) -> list[dict[str, Any]]:
    """Frames/s of `members` A2C members of `envs_each` envs (one vmapped
    program) against one member of `members * envs_each` envs, on the
    Atari preset (medians of `repeats` calls timed in turns, after one
    untimed call each); and the bytes of one member's state."""
    from jaxatari.agents import envs as agent_envs
    env, params = agent_envs.make_env(game)
    env = agent_envs.unbatched(env)
    shapes = [(1, members * envs_each), (members, envs_each)]
    programs, extra = [], []
    for count, num_envs in shapes:
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
        programs.append((run.lower(state).compile(), state))
        extra.append({
            "compile_seconds": round(time.perf_counter() - begin, 1),
            "bytes_per_member": sum(x.nbytes for x in jax.tree.leaves(state)
                                    if hasattr(x, "nbytes")) // count})
        print(json.dumps({"compiled": [count, num_envs], **extra[-1]}),
              file=sys.stderr, flush=True)   # progress, if time runs out
    seconds = timed_alternately(programs, repeats)
    return _cost_rows("atari_population_cost", game, shapes, seconds,
                      config.num_steps * updates * 4, repeats, extra)


def env_cost(game: str, members: int, envs_each: int, steps: int,
             repeats: int) -> list[dict[str, Any]]:
    """The env alone, no agent: frames/s of `steps` random-action preset
    steps for `members` members of `envs_each` envs (`jax.vmap` over
    members) against one batch of `members * envs_each` envs, timed as
    `atari_cost` times, so that the population's cost splits into the
    env's part and the agents'."""
    from jaxatari.agents import envs as agent_envs
    env, params = agent_envs.make_env(game)
    env = agent_envs.unbatched(env)
    actions = len(env.action_set)

    def rollout(key: jax.Array, num_envs: int) -> jax.Array:
        keys = jax.random.split(key, num_envs)
        _, state = jax.vmap(env.reset, in_axes=(0, None))(keys, params)

        def tick(carry, _):
            key, state = carry
            key, act, step = jax.random.split(key, 3)
            action = jax.random.randint(act, (num_envs,), 0, actions)
            _, state, reward, _, _ = jax.vmap(
                env.step, in_axes=(0, 0, 0, None))(
                jax.random.split(step, num_envs), state, action, params)
            return (key, state), reward.sum()
        return jax.lax.scan(tick, (key, state), None, steps)[1].sum()

    shapes = [(1, members * envs_each), (members, envs_each)]
    programs = []
    for count, num_envs in shapes:
        keys = jax.random.split(jax.random.key(1), count)
        run = jax.jit(jax.vmap(lambda k, n=num_envs: rollout(k, n)))
        programs.append((run.lower(keys).compile(), keys))
    seconds = timed_alternately(programs, repeats)
    return _cost_rows("atari_env_cost", game, shapes, seconds, steps * 4,
                      repeats, [{}, {}])


def summarise(rows: list[dict[str, Any]], keys: tuple[str, ...]) -> None:
    """Prints a summary line per method: each key's mean, std (over
    seeds, population std) and per-seed values."""
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


def compare(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """HyperTrick against random search, seed by seed: the seeds where
    HyperTrick's best is at least as good (by training score; by fresh
    return; by fresh return within two standard errors of the
    difference) and the fraction of random search's frames it spent."""
    pairs = [(ht, rs) for ht in rows for rs in rows
             if ht["method"] == "hypertrick" and rs["method"] == "random"
             and ht["seed"] == rs["seed"]]
    margins = [2 * float(np.hypot(ht["best_fresh_stderr"],
                                  rs["best_fresh_stderr"]))
               for ht, rs in pairs]
    ratios = [ht["frames"] / rs["frames"] for ht, rs in pairs]
    return {
        "summary": "hypertrick_vs_random", "seeds": len(pairs),
        "score_at_least": sum(ht["best_score"] >= rs["best_score"]
                              for ht, rs in pairs),
        "fresh_at_least": sum(ht["best_fresh_return"]
                              >= rs["best_fresh_return"]
                              for ht, rs in pairs),
        "fresh_within_2se_or_better": sum(
            ht["best_fresh_return"] >= rs["best_fresh_return"] - margin
            for (ht, rs), margin in zip(pairs, margins)),
        "frames_ratio": {"mean": round(float(np.mean(ratios)), 3),
                         "per_seed": [round(r, 3) for r in ratios]},
        **_compare_configurations(pairs)}


def _compare_configurations(pairs: list[tuple[dict, dict]]
                            ) -> dict[str, Any]:
    """With `--retrains`: the seeds where both chose the same
    configuration, where HyperTrick's configuration retrains at least
    as well as random search's within two standard errors of the
    difference (and with fewer frames), and the mean difference with its
    standard error over seeds."""
    pairs = [(ht, rs) for ht, rs in pairs if "config_return" in ht]
    if not pairs:
        return {}
    diffs = np.array([ht["config_return"] - rs["config_return"]
                      for ht, rs in pairs])
    good = [ht["config_return"] >= rs["config_return"] - 2 * float(
        np.hypot(ht["config_stderr"], rs["config_stderr"]))
        for ht, rs in pairs]
    fewer = [ht["frames"] < rs["frames"] for ht, rs in pairs]
    return {
        "same_configuration": sum(ht["best_hparams"] == rs["best_hparams"]
                                  for ht, rs in pairs),
        "config_within_2se_or_better": sum(good),
        "config_as_good_fewer_frames": sum(g and f
                                           for g, f in zip(good, fewer)),
        "config_difference": {
            "mean": round(float(diffs.mean()), 2),
            "stderr": round(_stderr(diffs), 2) if diffs.size > 1 else None,
            "per_seed": [round(float(d), 2) for d in diffs]}}


def main() -> None:
    """Parses the command line and runs the chosen benchmark."""
    top = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    top.add_argument("mode", choices=["pbt", "hypertrick", "atari-cost"])
    top.add_argument("--game", default="pong")
    top.add_argument("--members", type=int, default=16)
    top.add_argument("--envs-each", type=int, default=1)
    top.add_argument("--updates", type=int, default=2)
    top.add_argument("--repeats", type=int, default=1,
                     help="atari-cost: timed calls after an untimed one")
    top.add_argument("--env-only", action="store_true",
                     help="atari-cost: the env alone, no agent (random "
                          "actions, --updates x 5 steps)")
    top.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    top.add_argument("--budget", type=int, default=32)
    top.add_argument("--phases", type=int, default=4)
    top.add_argument("--phase-updates", type=int, default=500)
    top.add_argument("--eviction-fraction", type=float, default=0.5)
    top.add_argument("--search-budget", type=int, default=None,
                     help="random search's configurations (default: "
                          "--budget)")
    top.add_argument("--generations", type=int, default=GENERATIONS,
                     help=f"pbt: generations of {READY} updates")
    top.add_argument("--retrains", type=int, default=0,
                     help="hypertrick: retrain each method's selected "
                          "configuration this many times from fresh keys")
    top.add_argument("--score-window", type=int, default=SCORE_WINDOW,
                     help="hypertrick: updates a score averages, for "
                          "both methods")
    args = top.parse_args()
    if args.mode == "atari-cost":
        measure = env_cost if args.env_only else atari_cost
        steps = args.updates * 5 if args.env_only else args.updates
        for row in measure(args.game, args.members, args.envs_each, steps,
                           args.repeats):
            print(json.dumps(row), flush=True)
        return
    rows = []
    for seed in args.seeds:
        if args.mode == "pbt":
            new = [run_pbt(seed, False, args.generations),
                   run_pbt(seed, True, args.generations)]
        else:
            new = run_hypertrick(seed, args.budget, args.phases,
                                 args.phase_updates, args.eviction_fraction,
                                 args.search_budget, args.score_window,
                                 args.retrains)
        for row in new:
            print(json.dumps(row), flush=True)
        rows += new
    keys = (("best_fresh_return", "median_score", "frames")
            if args.mode == "pbt"
            else ("best_score", "best_fresh_return", "frames"))
    summarise(rows, keys)
    if args.mode == "hypertrick":
        print(json.dumps(compare(rows)), flush=True)


if __name__ == "__main__":
    from jaxatari import _config
    _config.enable_compilation_cache()
    main()
