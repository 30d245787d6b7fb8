"""`jaxatari sweep`: a whole population on one machine, one program, with
everything the experiment needs to document itself.

    jaxatari sweep ENV --method pbt|hypertrick|es|random --members N
                   --frames F --out DIR [--resume]

ENV is as in `jaxatari train`. `--frames` is the budget summed over the
population. PBT and random search (the same program with exploit and
explore off) train `members` agents for `--generations` generations;
HyperTrick runs `--budget` configurations through `--phases` phases;
ES runs OpenAI-ES (`--strategy snes` for SNES) with `members` candidates
per generation. The member axis is sharded over all devices
(`NamedSharding`, when `members` divides evenly), so the program runs its
share of the population on each.

The sweep runs `--chunk` generations per compiled call; after each it
appends every member's line to `DIR/members.jsonl` (hyperparameters,
score, parent, frames), writes TensorBoard scalars and saves an orbax
checkpoint. At the end it writes `DIR/record.json` (options, agent and
method configs, search space, git SHA, package versions, devices and mesh,
seed, summary), `DIR/lineage.json` (PBT: who copied whom, when) and the
plots (`returns.png`, `hparams.png`, `lineage.png`). `--resume` continues
from the last checkpoint, bit for bit, and refuses a directory of another
config.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import sys
import time
from typing import Any, Callable

import jax
import numpy as np

from jaxatari.agents import checkpoints, core, envs, records
from jaxatari.agents.run import (ALGORITHMS, TrainingDiverged,
                                 parse_setting)
from jaxatari.population import es, hypertrick, pbt, reports, spaces

METHODS = ("pbt", "random", "hypertrick", "es")
SPACES = {"ppo_default": spaces.PPO_DEFAULT,
          "ga3c_hypertrick": spaces.GA3C_HYPERTRICK}
"""The search-space presets by name."""


@dataclasses.dataclass(frozen=True)
class SweepOptions:
    """A sweep's settings (the command line's).

    Attributes:
        env_id: a jaxatari game or `gymnax:<id>`.
        method: one of `METHODS`.
        members: members (PBT, random), slots (HyperTrick) or candidates
            per generation (ES).
        frames: the frame budget over the whole population.
        out: the sweep's directory.
        algo: the agent (not ES).
        space: a preset name (None: "ga3c_hypertrick" for GA3C, else
            "ppo_default").
        generations: PBT and random search: generations (exploit steps).
        budget, phases: HyperTrick's configurations and phases.
        strategy: ES's strategy.
        num_envs: envs per member (None: the algorithm's default).
        seed: the master seed.
        chunk: generations per compiled call and checkpoint.
        overrides: agent (or ES) config fields.
        resume: continue from the last checkpoint.
    """
    env_id: str
    method: str = "pbt"
    members: int = 8
    frames: int = 1_000_000
    out: str = "sweeps/sweep"
    algo: str = "a2c"
    space: str | None = None
    generations: int = 10
    budget: int | None = None
    phases: int = 4
    strategy: str = "open_es"
    num_envs: int | None = None
    seed: int = 0
    chunk: int = 1
    overrides: tuple[tuple[str, Any], ...] = ()
    resume: bool = False


@dataclasses.dataclass
class Sweep:
    """A method's pair of functions and what describes it."""
    init: Callable[[jax.Array], Any]
    step: Callable[[Any], tuple[Any, dict]]
    steps: int
    configs: dict[str, Any]
    space: dict[str, Any] | None
    member_fields: tuple[str, ...]


def _agent(options: SweepOptions, env: Any, env_params: Any,
           space: spaces.SearchSpace, updates: int) -> core.Agent:
    module, config_class = ALGORITHMS[options.algo]
    settings = dict(options.overrides)
    if options.num_envs is not None:
        settings["num_envs"] = options.num_envs
    if "t_max" in space:
        settings.setdefault("num_steps", int(max(
            spaces.from_dict(spaces.to_dict(space))["t_max"].high, 1)))
    settings.setdefault("anneal_lr", False)
    probe = config_class(**{**settings, "total_steps": 10**12})
    settings["total_steps"] = updates * probe.num_envs * probe.num_steps
    return module.make(config_class(**settings), env, env_params)


def _updates_per_member(options: SweepOptions, config: core.Config,
                        frameskip: int, runs: int) -> int:
    per_update = config.num_envs * config.num_steps * frameskip
    updates = options.frames // (runs * per_update)
    if updates < 1:
        raise ValueError(
            f"--frames {options.frames} is below one update for each of "
            f"{runs} runs ({per_update} frames an update); raise --frames")
    return updates


def build(options: SweepOptions) -> Sweep:
    """The method's functions for the options (host-side checks first).

    Raises:
        ValueError: an unknown method, algorithm, space or field, a value
            out of range, a population too small for the truncation, or a
            budget below one update per run; each names what to change.
    """
    if options.method not in METHODS:
        raise ValueError(f"unknown method {options.method!r}; choose one "
                         f"of {list(METHODS)}")
    env, env_params = envs.make_env(options.env_id)
    env = envs.unbatched(env)
    frameskip = int(getattr(env_params, "frameskip", 1))
    if options.method == "es":
        return _build_es(options, env, env_params, frameskip)
    if options.algo not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {options.algo!r}; choose one "
                         f"of {sorted(ALGORITHMS)}")
    name = options.space or ("ga3c_hypertrick" if options.algo == "ga3c"
                             else "ppo_default")
    if name not in SPACES:
        raise ValueError(f"unknown space {name!r}; choose one of "
                         f"{sorted(SPACES)}")
    space = dict(SPACES[name])
    probe = _agent(options, env, env_params, space, 1).config
    if options.method == "hypertrick":
        return _build_hypertrick(options, env, env_params, space, probe,
                                 frameskip)
    return _build_pbt(options, env, env_params, space, probe, frameskip)


def _build_pbt(options, env, env_params, space, probe, frameskip) -> Sweep:
    updates = _updates_per_member(options, probe, frameskip, options.members)
    ready = updates // options.generations
    if ready < 1:
        raise ValueError(f"--frames gives {updates} updates a member, "
                         f"fewer than --generations {options.generations}")
    search = options.method == "random"
    config = pbt.PBTConfig(members=options.members, ready_updates=ready,
                           generations=options.generations,
                           exploit=not search, explore=not search)
    agent = _agent(options, env, env_params, space,
                   ready * options.generations)
    init, step = pbt.make(config, agent, space)
    return Sweep(init, step, options.generations,
                 {"agent": agent.config.to_dict(),
                  "pbt": dataclasses.asdict(config)},
                 spaces.to_dict(space), ("members", "parents", "scores"))


def _build_hypertrick(options, env, env_params, space, probe, frameskip
                      ) -> Sweep:
    budget = options.budget or 2 * options.members
    updates = _updates_per_member(options, probe, frameskip, budget)
    phase_updates = updates // options.phases
    if phase_updates < 1:
        raise ValueError(f"--frames gives {updates} updates a "
                         f"configuration, fewer than --phases "
                         f"{options.phases}")
    config = hypertrick.HyperTrickConfig(
        members=options.members, budget=budget, phases=options.phases,
        phase_updates=phase_updates)
    agent = _agent(options, env, env_params, space,
                   options.phases * phase_updates)
    init, step = hypertrick.make(config, agent, space)

    def numbered(state):
        state, metrics = step(state)
        return state, {**metrics, "boundary": state.boundary}

    return Sweep(init, numbered, config.boundaries,
                 {"agent": agent.config.to_dict(),
                  "hypertrick": dataclasses.asdict(config)},
                 spaces.to_dict(space), ("slots", "slot_config", "active"))


def _build_es(options, env, env_params, frameskip) -> Sweep:
    settings = dict(options.overrides)
    if options.num_envs is not None:
        settings["num_envs"] = options.num_envs
    probe = es.ESConfig(strategy=options.strategy,
                        population_size=options.members, **settings)
    per_generation = (options.members * probe.num_envs
                      * probe.rollout_steps * frameskip)
    generations = options.frames // per_generation
    if generations < 1:
        raise ValueError(f"--frames {options.frames} is below one ES "
                         f"generation ({per_generation} frames); raise it")
    config = dataclasses.replace(probe, generations=generations)
    strategy = es.make(config, env, env_params)
    return Sweep(strategy.init, strategy.step, generations,
                 {"es": config.to_dict()}, None, ())


def shardings(sweep: Sweep, state: Any, members: int) -> tuple[Any, Any]:
    """The state's shardings: the member axis of `sweep.member_fields`
    split over all devices (when `members` divides evenly), the rest
    replicated. Returns (shardings, mesh description)."""
    from jax.sharding import NamedSharding, PartitionSpec
    devices = jax.devices()
    count = len(devices) if members % len(devices) == 0 else 1
    mesh = jax.sharding.Mesh(np.array(devices[:count]), ("members",))
    whole = NamedSharding(mesh, PartitionSpec())
    split = NamedSharding(mesh, PartitionSpec("members"))
    tree = jax.tree.map(lambda _: whole, state)
    parts = {name: jax.tree.map(lambda _: split, getattr(state, name))
             for name in sweep.member_fields}
    if parts:
        tree = tree.replace(**parts)
    return tree, {"axis": "members", "devices": [str(d) for d in
                                                 devices[:count]]}


class SweepRun:
    """One sweep: its program, directory, logs and checkpoints."""

    def __init__(self, options: SweepOptions):
        if options.chunk < 1:
            raise ValueError(f"--chunk must be >= 1, got {options.chunk}")
        self.options = options
        self.out = pathlib.Path(options.out)
        self.sweep = build(options)
        settings = {k: v for k, v in dataclasses.asdict(options).items()
                    if k not in ("out", "resume")}
        self.identity = json.loads(json.dumps({
            "env_id": options.env_id, "method": options.method,
            "members": options.members, "frames": options.frames,
            "seed": options.seed, "options": settings,
            "configs": self.sweep.configs, "space": self.sweep.space},
            default=str))

    def _start(self) -> tuple[Any, int]:
        self.out.mkdir(parents=True, exist_ok=True)
        fresh = jax.jit(self.sweep.init)(jax.random.key(self.options.seed))
        self.shardings, mesh = shardings(self.sweep, fresh,
                                         self.options.members)
        fresh = jax.device_put(fresh, self.shardings)
        self.checkpoints = checkpoints.Checkpoints(self.out / "checkpoints")
        record = self.out / "record.json"
        if not self.options.resume:
            if record.exists() or self.checkpoints.latest() is not None:
                raise ValueError(f"{self.out} already holds a sweep; pass "
                                 f"--resume to continue it, or choose "
                                 f"another --out")
            self.record = {**self.identity, **records.provenance(),
                           "mesh": mesh, "status": "running"}
            records.write_json(record, self.record)
            return fresh, 0
        self.record = _resumed_record(self.out, self.identity)
        records.write_json(record, self.record)
        latest = self.checkpoints.latest()
        if latest is None:
            return fresh, 0
        state, _ = self.checkpoints.restore(latest, fresh)
        return jax.device_put(state, self.shardings), latest

    def run(self) -> dict[str, Any]:
        """Runs the sweep to its end; returns the record."""
        from tensorboardX import SummaryWriter
        state, done = self._start()
        lines_path = self.out / "members.jsonl"
        kept = [line for line in records.read_jsonl(lines_path)
                if line["generation"] <= done]
        lines_path.write_text("".join(json.dumps(x) + "\n" for x in kept))
        writer = SummaryWriter(str(self.out / "tensorboard"))
        programs: dict[int, Any] = {}
        started = time.perf_counter()
        try:
            while done < self.sweep.steps:
                count = min(self.options.chunk, self.sweep.steps - done)
                if count not in programs:
                    programs[count] = self._compile(state, count)
                new_state, metrics = programs[count](state)
                metrics = jax.device_get(metrics)
                self._check_finite(metrics, done)
                lines = reports.member_lines(self.options.method, metrics)
                with lines_path.open("a") as file:
                    for line in lines:
                        file.write(json.dumps(line) + "\n")
                reports.write_tensorboard(writer, self.options.method, lines)
                state, done = new_state, done + count
                self.checkpoints.save(done, state, {"generation": done})
                print(f"sweep: {done}/{self.sweep.steps}", file=sys.stderr,
                      flush=True)
        finally:
            writer.close()
        self._finish(state, time.perf_counter() - started)
        return self.record

    def _compile(self, state: Any, count: int) -> Any:
        def chunk(state):
            return jax.lax.scan(lambda s, _: self.sweep.step(s), state, None,
                                length=count)
        program = jax.jit(chunk, in_shardings=(self.shardings,),
                          out_shardings=(self.shardings, None))
        return program.lower(state).compile()

    def _check_finite(self, metrics: dict[str, Any], done: int) -> None:
        finite = metrics.get("finite")
        if finite is None or np.all(finite):
            return
        generation, member = np.argwhere(~np.asarray(finite, bool))[0]
        self.record.update(status="diverged",
                           last_good_checkpoint=self.checkpoints.latest())
        records.write_json(self.out / "record.json", self.record)
        raise TrainingDiverged(
            f"member {member} diverged (NaN or infinite loss or "
            f"parameters) in generation {done + generation + 1}; the last "
            f"good checkpoint is {self.checkpoints.latest()}. Narrow the "
            f"search space's learning rates")

    def _finish(self, state: Any, seconds: float) -> None:
        lines = records.read_jsonl(self.out / "members.jsonl")
        method = self.options.method
        title = f"{method} on {self.options.env_id}"
        reports.plot_sweep(method, lines, self.out, title)
        if method in ("pbt", "random"):
            records.write_json(self.out / "lineage.json",
                               {"copies": reports.lineage(lines)})
        self.record.update(status="finished", seconds=seconds,
                           summary=summary(self.sweep, method, state, lines))
        records.write_json(self.out / "record.json", self.record)
        self.checkpoints.close()


def load(out: str | pathlib.Path) -> tuple[Any, dict[str, Any]]:
    """A sweep's latest checkpoint (its method's state, on this process's
    default device) and its record.

    Raises:
        ValueError: no record or no checkpoint in `out`.
    """
    out = pathlib.Path(out)
    if not (out / "record.json").exists():
        raise ValueError(f"{out} has no record.json: not a sweep directory")
    record = json.loads((out / "record.json").read_text())
    settings = dict(record["options"])
    settings["overrides"] = tuple(tuple(x) for x in settings["overrides"])
    built = build(SweepOptions(**settings, out=str(out)))
    saved = checkpoints.Checkpoints(out / "checkpoints")
    step = saved.latest()
    if step is None:
        raise ValueError(f"{out} has no checkpoint yet")
    like = jax.jit(built.init)(jax.random.key(record["seed"]))
    state, _ = saved.restore(step, like)
    saved.close()
    return state, record


def _resumed_record(out: pathlib.Path, identity: dict) -> dict:
    path = out / "record.json"
    if not path.exists():
        raise ValueError(f"--resume: {out} has no record.json; start the "
                         f"sweep without --resume")
    old = json.loads(path.read_text())
    changed = [key for key in identity if old.get(key) != identity[key]]
    if changed:
        raise ValueError(f"--resume: {out} holds a sweep with other "
                         f"settings ({', '.join(changed)}); resume with the "
                         f"same settings or sweep into a new --out")
    return {**old, "status": "running", "resumed": old.get("resumed", [])
            + [records.provenance()["started"]]}


def summary(sweep: Sweep, method: str, state: Any,
            lines: list[dict]) -> dict[str, Any]:
    """The sweep's outcome: the best member and the population's median
    at the end (PBT, random), HyperTrick's configuration totals, or ES's
    last centre return."""
    if method == "es":
        return {"centre_return": lines[-1]["centre_return"],
                "generations": len(lines)}
    if method == "hypertrick":
        table = jax.device_get(hypertrick.configurations(state))
        return hypertrick.summarise(
            hypertrick.HyperTrickConfig(**sweep.configs["hypertrick"]),
            {"configurations": table})
    last = max(line["generation"] for line in lines)
    final = [line for line in lines if line["generation"] == last]
    scored = [line for line in final if line["score"] is not None]
    best = max(scored, key=lambda line: line["score"]) if scored else None
    return {"generation": last,
            "median_score": (float(np.median([x["score"] for x in scored]))
                             if scored else None),
            "best_member": None if best is None else best["member"],
            "best_score": None if best is None else best["score"],
            "best_hparams": None if best is None else best["hparams"],
            "frames": int(sum(line["frames"] for line in final))}


def parser() -> argparse.ArgumentParser:
    """`jaxatari sweep`'s arguments."""
    top = argparse.ArgumentParser(
        prog="jaxatari sweep", description="A population sweep in one "
        "program; see jaxatari.population.sweep's docstring.")
    top.add_argument("env")
    top.add_argument("--method", default="pbt", choices=METHODS)
    top.add_argument("--members", type=int, default=8)
    top.add_argument("--frames", type=int, default=1_000_000)
    top.add_argument("--out", type=pathlib.Path, default=None)
    top.add_argument("--algo", default="a2c", choices=sorted(ALGORITHMS))
    top.add_argument("--space", default=None, choices=sorted(SPACES))
    top.add_argument("--generations", type=int, default=10)
    top.add_argument("--budget", type=int, default=None)
    top.add_argument("--phases", type=int, default=4)
    top.add_argument("--strategy", default="open_es",
                     choices=["open_es", "snes"])
    top.add_argument("--num-envs", type=int, default=None)
    top.add_argument("--seed", type=int, default=0)
    top.add_argument("--chunk", type=int, default=1,
                     help="generations per compiled call and checkpoint")
    top.add_argument("--set", type=parse_setting, action="append",
                     default=[], metavar="NAME=VALUE")
    top.add_argument("--resume", action="store_true")
    return top


def main(argv: list[str] | None = None) -> int:
    """Runs `jaxatari sweep`; prints the summary."""
    args = parser().parse_args(argv)
    from jaxatari import _config
    _config.enable_compilation_cache()
    out = args.out or pathlib.Path("sweeps") / (
        f"{args.env.replace(':', '-').replace('/', '-')}-{args.method}"
        f"-{args.seed}")
    options = SweepOptions(
        env_id=args.env, method=args.method, members=args.members,
        frames=args.frames, out=str(out), algo=args.algo, space=args.space,
        generations=args.generations, budget=args.budget,
        phases=args.phases, strategy=args.strategy, num_envs=args.num_envs,
        seed=args.seed, chunk=args.chunk, overrides=tuple(args.set),
        resume=args.resume)
    try:
        record = SweepRun(options).run()
    except (ValueError, TrainingDiverged) as error:
        raise SystemExit(f"jaxatari sweep: {error}") from error
    print(json.dumps({"out": str(out), "status": record["status"],
                      **record["summary"]}, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
