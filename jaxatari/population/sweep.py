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
config. `--mlflow [URI]` then logs the sweep to MLflow from those records
(`reports.log_to_mlflow`; the optional extra `jaxatari[mlflow]`).

Across processes (`jax.distributed`): start one process per host (or
several on one machine) with the same command plus `--coordinator
HOST:PORT --num-processes N --process-id I` (I = 0 .. N-1; the
coordinator is process 0's address). The member axis is then split over
every process's devices (`--members` a multiple of their count), each
process runs its share of one SPMD program (CPU collectives: gloo), and
process 0 alone writes the records, plots and TensorBoard files; all of
them write their shards of each orbax checkpoint, so `--out` must be one
directory that every process can reach. The directory ends as a
single-process run's would.
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
from jax.experimental import multihost_utils
from jax.sharding import NamedSharding, PartitionSpec

from jaxatari.agents import checkpoints, core, envs, records
from jaxatari.agents.run import (ALGORITHMS, TrainingDiverged,
                                 default_out, parse_setting)
from jaxatari.population import hypertrick, pbt, reports, spaces

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
        mlflow: log the sweep to this MLflow tracking URI at its end (""
            for `reports.default_mlflow_uri`, `sqlite:///OUT/mlflow.db`;
            None: no MLflow).
        mlflow_experiment: the MLflow experiment's name.
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
    mlflow: str | None = None
    mlflow_experiment: str = reports.MLFLOW_EXPERIMENT


UNTRACKED = ("out", "resume", "mlflow", "mlflow_experiment")
"""Options that are not part of a sweep's identity (`--resume` accepts
them changed)."""


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
    # Imported here: evosax starts JAX's backend on import, and a sweep
    # across processes joins them (`init_distributed`) before that.
    from jaxatari.population import es
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


def init_distributed(coordinator: str | None, num_processes: int | None,
                     process_id: int | None) -> None:
    """Joins a sweep run as several processes (`jax.distributed`); does
    nothing when all three are None. Call it before any JAX computation.

    Args:
        coordinator: process 0's `HOST:PORT`, the same for every process.
        num_processes: how many processes run the sweep.
        process_id: this process's index, 0 .. num_processes - 1.

    Raises:
        ValueError: only some of the three given, or a value out of range.
    """
    given = (coordinator, num_processes, process_id)
    if all(value is None for value in given):
        return
    if any(value is None for value in given):
        raise ValueError("--coordinator, --num-processes and --process-id "
                         "go together: give every process all three (the "
                         "same --coordinator HOST:PORT and --num-processes, "
                         "its own --process-id 0..N-1)")
    if ":" not in coordinator:
        raise ValueError(f"--coordinator must be HOST:PORT (process 0's "
                         f"address), got {coordinator!r}")
    if num_processes < 1 or not 0 <= process_id < num_processes:
        raise ValueError(f"--process-id must be in 0..{num_processes - 1} "
                         f"and --num-processes >= 1, got --process-id "
                         f"{process_id} of --num-processes {num_processes}")
    if jax.config.jax_cpu_collectives_implementation in (None, "none"):
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=coordinator,
                               num_processes=num_processes,
                               process_id=process_id)


def to_host(tree: Any) -> Any:
    """A pytree of (possibly sharded) arrays as numpy, on every process:
    `jax.device_get` in one process; across processes, shards that live
    on other processes' devices are gathered first (`process_allgather`),
    since a process can read only its own."""
    if jax.process_count() == 1:
        return jax.device_get(tree)
    return multihost_utils.process_allgather(tree, tiled=True)


def to_global(tree: Any, tree_shardings: Any) -> Any:
    """A pytree with the same values on every process, placed on
    `tree_shardings` (which may span other processes' devices): each
    process puts its own shards from a host copy, so the values keep
    every bit. PRNG keys travel as their key data."""
    def put(x: Any, sharding: NamedSharding) -> jax.Array:
        host = np.asarray(x)
        return jax.make_array_from_callback(host.shape, sharding,
                                            lambda index: host[index])

    placed = jax.tree.map(put, checkpoints.keys_as_data(tree),
                          tree_shardings)
    return checkpoints.keys_from_data(placed, tree)


def shardings(sweep: Sweep, state: Any, members: int) -> tuple[Any, Any]:
    """The state's shardings: the member axis of `sweep.member_fields`
    split over all devices (of all processes), the rest replicated.

    In one process a population that does not divide evenly runs on one
    device; across processes it is an error, since every process must
    hold its share. Returns (shardings, mesh description).

    Raises:
        ValueError: across processes, `members` not a multiple of the
            devices.
    """
    devices = jax.devices()
    processes = jax.process_count()
    count = len(devices)
    if members % count and sweep.member_fields:
        if processes > 1:
            raise ValueError(
                f"--members {members} must be a multiple of the {count} "
                f"devices of the {processes} processes; choose --members "
                f"{count * -(-members // count)}")
        devices = devices[:1]
    mesh = jax.sharding.Mesh(np.array(devices), ("members",))
    whole = NamedSharding(mesh, PartitionSpec())
    split = NamedSharding(mesh, PartitionSpec("members"))
    tree = jax.tree.map(lambda _: whole, state)
    parts = {name: jax.tree.map(lambda _: split, getattr(state, name))
             for name in sweep.member_fields}
    if parts:
        tree = tree.replace(**parts)
    return tree, {"axis": "members", "devices": [str(d) for d in devices],
                  "processes": processes}


class SweepRun:
    """One sweep: its program, directory, logs and checkpoints.

    Raises:
        ValueError: from `build`, or `--chunk` below 1.
        reports.MissingExtra: `options.mlflow` set without MLflow.
    """

    def __init__(self, options: SweepOptions):
        if options.chunk < 1:
            raise ValueError(f"--chunk must be >= 1, got {options.chunk}")
        self.options = options
        self.out = pathlib.Path(options.out)
        self.primary = jax.process_index() == 0
        self.mlflow_uri = None
        if options.mlflow is not None:
            self.mlflow_uri = (options.mlflow
                               or reports.default_mlflow_uri(self.out))
            reports.require_mlflow(self.mlflow_uri)
        self.sweep = build(options)
        settings = {k: v for k, v in dataclasses.asdict(options).items()
                    if k not in UNTRACKED}
        self.identity = json.loads(json.dumps({
            "env_id": options.env_id, "method": options.method,
            "members": options.members, "frames": options.frames,
            "seed": options.seed, "options": settings,
            "configs": self.sweep.configs, "space": self.sweep.space},
            default=str))

    def _start(self) -> tuple[Any, int]:
        key = jax.random.key(self.options.seed)
        self.shardings, mesh = shardings(
            self.sweep, jax.eval_shape(self.sweep.init, key),
            self.options.members)
        fresh = to_global(jax.jit(self.sweep.init)(key), self.shardings)
        self.out.mkdir(parents=True, exist_ok=True)
        self.checkpoints = checkpoints.Checkpoints(self.out / "checkpoints")
        self._open_record(mesh)
        latest = self.checkpoints.latest() if self.options.resume else None
        if latest is None:
            return fresh, 0
        state, _ = self.checkpoints.restore(latest, fresh)
        return jax.device_put(state, self.shardings), latest

    def _open_record(self, mesh: dict[str, Any]) -> None:
        """Process 0 checks the directory and writes `record.json`; the
        others learn whether it could, so that all go on or all stop."""
        error = None
        if self.primary:
            try:
                self._write_first_record(mesh)
            except ValueError as refused:
                error = refused
        if jax.process_count() > 1:
            failed = multihost_utils.broadcast_one_to_all(
                np.int32(error is not None))
            if failed and error is None:
                raise ValueError(f"process 0 refused to start the sweep in "
                                 f"{self.out}; its error says why")
        if error is not None:
            raise error

    def _write_first_record(self, mesh: dict[str, Any]) -> None:
        record = self.out / "record.json"
        if self.options.resume:
            self.record = _resumed_record(self.out, self.identity)
        elif record.exists() or self.checkpoints.latest() is not None:
            raise ValueError(f"{self.out} already holds a sweep; pass "
                             f"--resume to continue it, or choose "
                             f"another --out")
        else:
            self.record = {**self.identity, **records.provenance(),
                           "mesh": mesh, "status": "running"}
        records.write_json(record, self.record)

    def run(self) -> dict[str, Any]:
        """Runs the sweep to its end; returns the record (on processes
        other than 0, which write nothing, an empty dict)."""
        state, done = self._start()
        writer = self._open_logs(done) if self.primary else None
        programs: dict[int, Any] = {}
        started = time.perf_counter()
        try:
            while done < self.sweep.steps:
                count = min(self.options.chunk, self.sweep.steps - done)
                if count not in programs:
                    programs[count] = self._compile(state, count)
                new_state, metrics = programs[count](state)
                metrics = to_host(metrics)
                self._check_finite(metrics, done)
                if self.primary:
                    self._log_chunk(writer, metrics)
                state, done = new_state, done + count
                self.checkpoints.save(done, state, {"generation": done})
                if self.primary:
                    print(f"sweep: {done}/{self.sweep.steps}",
                          file=sys.stderr, flush=True)
        finally:
            if writer is not None:
                writer.close()
        self._finish(state, time.perf_counter() - started)
        return self.record if self.primary else {}

    def _open_logs(self, done: int) -> Any:
        """Drops members.jsonl's lines past generation `done` (written
        after the checkpoint by an interrupted run); returns the
        TensorBoard writer."""
        from tensorboardX import SummaryWriter
        lines_path = self.out / "members.jsonl"
        kept = [line for line in records.read_jsonl(lines_path)
                if line["generation"] <= done]
        lines_path.write_text("".join(json.dumps(x) + "\n" for x in kept))
        return SummaryWriter(str(self.out / "tensorboard"))

    def _log_chunk(self, writer: Any, metrics: dict[str, Any]) -> None:
        lines = reports.member_lines(self.options.method, metrics)
        with (self.out / "members.jsonl").open("a") as file:
            for line in lines:
                file.write(json.dumps(line) + "\n")
        reports.write_tensorboard(writer, self.options.method, lines)

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
        if self.primary:
            self.record.update(status="diverged",
                               last_good_checkpoint=self.checkpoints.latest())
            records.write_json(self.out / "record.json", self.record)
            self._track()
        raise TrainingDiverged(
            f"member {member} diverged (NaN or infinite loss or "
            f"parameters) in generation {done + generation + 1}; the last "
            f"good checkpoint is {self.checkpoints.latest()}. Narrow the "
            f"search space's learning rates")

    def _finish(self, state: Any, seconds: float) -> None:
        method = self.options.method
        table = None
        if method == "hypertrick":
            table = to_host(jax.jit(hypertrick.configurations)(state))
        self.checkpoints.close()
        if not self.primary:
            return
        lines = records.read_jsonl(self.out / "members.jsonl")
        title = f"{method} on {self.options.env_id}"
        reports.plot_sweep(method, lines, self.out, title)
        if method in ("pbt", "random"):
            records.write_json(self.out / "lineage.json",
                               {"copies": reports.lineage(lines)})
        self.record.update(status="finished", seconds=seconds,
                           summary=summary(self.sweep, method, lines, table))
        records.write_json(self.out / "record.json", self.record)
        self._track()

    def _track(self) -> None:
        """Logs the sweep's records to MLflow, if asked (process 0)."""
        if self.mlflow_uri is not None:
            run_id = reports.log_to_mlflow(self.out, self.mlflow_uri,
                                           self.options.mlflow_experiment)
            print(f"sweep: logged to MLflow {self.mlflow_uri} as run "
                  f"{run_id}", file=sys.stderr, flush=True)


def load(out: str | pathlib.Path) -> tuple[Any, dict[str, Any]]:
    """A sweep's latest checkpoint (its method's state, on this process's
    default device) and its record. A checkpoint written by several
    processes loads in one.

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


def summary(sweep: Sweep, method: str, lines: list[dict],
            configurations: dict[str, Any] | None = None) -> dict[str, Any]:
    """The sweep's outcome: the best member and the population's median
    at the end (PBT, random), HyperTrick's configuration totals (from
    `configurations`, `hypertrick.configurations` of the last state on
    the host), or ES's last centre return."""
    if method == "es":
        return {"centre_return": lines[-1]["centre_return"],
                "generations": len(lines)}
    if method == "hypertrick":
        return hypertrick.summarise(
            hypertrick.HyperTrickConfig(**sweep.configs["hypertrick"]),
            {"configurations": configurations})
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
    _tracking_and_process_arguments(top)
    return top


def _tracking_and_process_arguments(top: argparse.ArgumentParser) -> None:
    """`--mlflow` and the `jax.distributed` options."""
    top.add_argument(
        "--mlflow", nargs="?", const="", default=None, metavar="URI",
        help="at the end, log the sweep to MLflow: a parent run with one "
        "nested run per member (needs pip install 'jaxatari[mlflow]'); "
        "URI defaults to sqlite:///OUT/mlflow.db. Put it after ENV, or "
        "write --mlflow=URI")
    top.add_argument("--mlflow-experiment",
                     default=reports.MLFLOW_EXPERIMENT,
                     help="the MLflow experiment's name")
    processes = top.add_argument_group(
        "across processes (jax.distributed)",
        "Run the same command once per process, adding these three; the "
        "member axis is split over all processes' devices and process 0 "
        "writes the records. --out must be one directory all can reach.")
    processes.add_argument("--coordinator", default=None,
                           metavar="HOST:PORT",
                           help="process 0's address, the same for all")
    processes.add_argument("--num-processes", type=int, default=None,
                           metavar="N")
    processes.add_argument("--process-id", type=int, default=None,
                           metavar="I", help="this process, 0..N-1")


def main(argv: list[str] | None = None) -> int:
    """Runs `jaxatari sweep`; prints the summary."""
    args = parser().parse_args(argv)
    from jaxatari import _config
    _config.enable_compilation_cache()
    out = args.out or default_out("sweeps", args.env, args.method,
                                  args.seed)
    options = SweepOptions(
        env_id=args.env, method=args.method, members=args.members,
        frames=args.frames, out=str(out), algo=args.algo, space=args.space,
        generations=args.generations, budget=args.budget,
        phases=args.phases, strategy=args.strategy, num_envs=args.num_envs,
        seed=args.seed, chunk=args.chunk, overrides=tuple(args.set),
        resume=args.resume, mlflow=args.mlflow,
        mlflow_experiment=args.mlflow_experiment)
    try:
        init_distributed(args.coordinator, args.num_processes,
                         args.process_id)
        with _config.default_backend_lowering():   # after the distributed
            record = SweepRun(options).run()    # start: it reads the backend
    except (ValueError, TrainingDiverged, reports.MissingExtra) as error:
        raise SystemExit(f"jaxatari sweep: {error}") from error
    if record:
        print(json.dumps({"out": str(out), "status": record["status"],
                          **record["summary"]}, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
