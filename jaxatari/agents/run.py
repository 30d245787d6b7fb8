"""`jaxatari train`: one agent's training run, with everything it leaves.

    jaxatari train ENV --algo ppo|a2c|ga3c --frames N --num-envs N
                   --seed S --out DIR [--resume] [--init-from SRC]

ENV is a jaxatari game id (the `make_atari` preset) or `gymnax:<id>`. The
run compiles `checkpoint_every` updates into one program (`core.
scan_updates`) and runs it until the frames are spent; after each such
chunk it checks that the loss and parameters are finite, appends the
chunk's metrics to `DIR/metrics.jsonl` and TensorBoard, and saves an orbax
checkpoint. It writes:

* `DIR/record.json`: the command's options, the full algorithm config,
  git SHA, package versions, devices, seed, timings and final metrics;
* `DIR/metrics.jsonl` (one line per update), `DIR/tensorboard/`,
  `DIR/curve.png`, `DIR/checkpoints/<update>/`;
* `DIR/agent/`: the trained agent without its envs (parameters and
  optimiser state, `checkpoints.save_learned`), a few MB at any number of
  envs, written after each checkpoint;
* for Atari, `DIR/agent.gif`: the trained agent playing.

`--resume` continues from the last checkpoint, bit for bit as the
uninterrupted run (the same chunk programs run from the same state), and
refuses a directory whose record has another config. `--init-from SRC`
starts a new run from the agent another run trained (SRC: a run
directory, finished or killed, or a saved agent), with fresh envs, this
run's seed and config, and its own update count (so `anneal_lr` anneals
again); the record's `init_from` names SRC, and `final.total_frames`
adds the frames SRC and its own sources trained. A NaN stops the
run with the update it appeared at and leaves the last good checkpoint.
Frames are emulated Atari frames (agent steps times the frameskip, 4) or,
for gymnax envs, agent steps.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import sys
import time
from typing import Any

import jax
import numpy as np

from jaxatari.agents import checkpoints, core, envs, records
from jaxatari.agents import a2c, ga3c, ppo

ALGORITHMS = {"ppo": (ppo, ppo.PPOConfig), "a2c": (a2c, a2c.A2CConfig),
              "ga3c": (ga3c, ga3c.GA3CConfig)}
"""Algorithm name -> (module, config class)."""


class TrainingDiverged(RuntimeError):
    """The loss or the parameters stopped being finite."""


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """A training run's settings (the command line's).

    Attributes:
        env_id: a jaxatari game or `gymnax:<id>`.
        algo: "ppo", "a2c" or "ga3c".
        frames: the frame budget (see the module docstring).
        out: the run's directory.
        num_envs: envs in parallel (None: the algorithm's default).
        seed: the PRNG seed.
        resume: continue from `out`'s last checkpoint.
        checkpoint_every: updates per chunk and checkpoint (None: about
            20 over the run).
        overrides: other config fields (`--set name=value`).
        progress: show the progress bar.
        gif_steps: agent steps in `agent.gif` (Atari; 0 for none).
        init_from: a run directory or saved agent to start from (see the
            module docstring), or None for a fresh agent.
    """
    env_id: str
    algo: str = "ppo"
    frames: int = 1_000_000
    out: str = "runs/run"
    num_envs: int | None = None
    seed: int = 0
    resume: bool = False
    checkpoint_every: int | None = None
    overrides: tuple[tuple[str, Any], ...] = ()
    progress: bool = True
    gif_steps: int = 1000
    init_from: str | None = None


def build_config(options: RunOptions, frameskip: int) -> core.Config:
    """The algorithm's config for the options.

    Raises:
        ValueError: an unknown algorithm or config field, or a value out
            of range (naming the field).
    """
    if options.algo not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {options.algo!r}; choose one "
                         f"of {sorted(ALGORITHMS)}")
    config_class = ALGORITHMS[options.algo][1]
    fields = {f.name for f in dataclasses.fields(config_class)}
    settings = dict(options.overrides)
    unknown = set(settings) - fields
    if unknown:
        raise ValueError(f"unknown {options.algo} config fields "
                         f"{sorted(unknown)}; known: {sorted(fields)}")
    if options.num_envs is not None:
        settings["num_envs"] = options.num_envs
    if not isinstance(options.frames, int) or options.frames < 1:
        raise ValueError(f"frames must be a positive integer, got "
                         f"{options.frames!r}")
    settings["total_steps"] = options.frames // frameskip
    return config_class(**settings)


def _run_record(options: RunOptions, config: core.Config,
                frameskip: int) -> dict[str, Any]:
    """The part of the record a resume must match."""
    return {"env_id": options.env_id, "algo": options.algo,
            "seed": options.seed, "frames": options.frames,
            "frameskip": frameskip,
            "checkpoint_every": options.checkpoint_every,
            "init_from": options.init_from, "config": config.to_dict()}


def _check_resume(out: pathlib.Path, identity: dict[str, Any]) -> dict:
    """The old record, if it is this run's; else a ValueError."""
    path = out / "record.json"
    if not path.exists():
        raise ValueError(f"--resume: {out} has no record.json; start the "
                         f"run without --resume")
    old = json.loads(path.read_text())
    changed = [k for k in identity
               if k != "config" and old.get(k) != identity[k]]
    changed += [f"config.{k}" for k, v in identity["config"].items()
                if old.get("config", {}).get(k) != v]
    if changed:
        raise ValueError(
            f"--resume: {out} holds a run with other settings ({', '.join(changed)}); "
            f"resume with the same settings, or train into a new --out")
    return old


def _first_bad_update(metrics: dict[str, np.ndarray]) -> int | None:
    bad = np.flatnonzero(~metrics["finite"].astype(bool))
    return None if bad.size == 0 else int(metrics["update"][bad[0]])


class TrainingRun:
    """One run: its agent, directory, logs and checkpoints."""

    def __init__(self, options: RunOptions):
        self.options = options
        self.out = pathlib.Path(options.out)
        env, env_params = envs.make_env(options.env_id)
        env = envs.unbatched(env)
        frameskip = int(getattr(env_params, "frameskip", 1))
        self.config = build_config(options, frameskip)
        self.agent = ALGORITHMS[options.algo][0].make(self.config, env,
                                                      env_params)
        self.identity = _run_record(options, self.config, frameskip)
        self.chunk = (max(1, -(-self.config.num_updates // 20))
                      if options.checkpoint_every is None
                      else options.checkpoint_every)
        if self.chunk < 1:
            raise ValueError(f"checkpoint_every must be >= 1, got "
                             f"{options.checkpoint_every}")
        self.record: dict[str, Any] = {}

    def _start(self) -> tuple[core.AgentState, int]:
        """The fresh (or `--init-from`) or restored state and its update
        count."""
        fresh = jax.jit(self.agent.init)(jax.random.key(self.options.seed),
                                         self.config.hparams())
        if not self.options.resume:
            self.record = {**self.identity, **records.provenance(),
                           "status": "running"}
            fresh = self._warm_start(fresh)     # refusals before DIR is made
            self._open_checkpoints()
            if (self.out / "record.json").exists() or self.checkpoints.latest():
                raise ValueError(
                    f"{self.out} already holds a run; pass --resume to "
                    f"continue it, or choose another --out")
            records.write_json(self.out / "record.json", self.record)
            return fresh, 0
        old = _check_resume(self.out, self.identity)
        self.record = {**old, "status": "running",
                       "resumed": old.get("resumed", []) + [
                           records.provenance()["started"]]}
        self._open_checkpoints()
        latest = self.checkpoints.latest()
        if latest is None:
            fresh = self._warm_start(fresh)
        records.write_json(self.out / "record.json", self.record)
        if latest is None:
            return fresh, 0
        state, _ = self.checkpoints.restore(latest, fresh)
        return state, latest

    def _open_checkpoints(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        self.checkpoints = checkpoints.Checkpoints(self.out / "checkpoints")

    def _warm_start(self, fresh: core.AgentState) -> core.AgentState:
        """`fresh` with `--init-from`'s learned parts (unchanged without
        one); the record's `init_from_agent` says what they were."""
        if self.options.init_from is None:
            return fresh
        state, meta = learned_from(self.options.init_from, fresh)
        self.record["init_from_agent"] = meta
        return state

    def run(self) -> dict[str, Any]:
        """Trains to the frame budget; returns the record."""
        state, done = self._start()
        log = records.MetricsLog(self.out, done if self.options.resume
                                 else None)
        total_frames = (self.config.num_updates * self.config.num_steps
                        * self.config.num_envs * self.agent.env.frameskip)
        progress = records.Progress(total_frames,
                                    int(state.env_steps)
                                    * self.agent.env.frameskip,
                                    self.options.progress)
        programs: dict[int, Any] = {}
        started, compile_seconds = time.perf_counter(), 0.0
        try:
            while done < self.config.num_updates:
                count = min(self.chunk, self.config.num_updates - done)
                if count not in programs:
                    begin = time.perf_counter()
                    programs[count] = self._compile(state, count, progress)
                    compile_seconds += time.perf_counter() - begin
                new_state, metrics = programs[count](state)
                metrics = jax.device_get(metrics)
                bad = _first_bad_update(metrics)
                if bad is not None:
                    self._diverged(bad, log, metrics)
                state, done = new_state, done + count
                lines = log.write(metrics)
                self.checkpoints.save(done, state, {"update": done})
                checkpoints.save_learned(self.out / "agent", state,
                                         learned_meta(
                                             self.record, state,
                                             self.agent.env.frameskip))
                self.record["last"] = lines[-1]
        finally:
            progress.close()
            log.close()
        seconds = time.perf_counter() - started
        self._finish(state, seconds, compile_seconds)
        return self.record

    def _compile(self, state: core.AgentState, count: int,
                 progress: records.Progress):
        every = max(1, self.config.num_updates // 200)
        run = jax.jit(lambda s: core.scan_updates(
            self.agent, s, count, progress.update, every))
        return run.lower(state).compile()

    def _diverged(self, update: int, log: records.MetricsLog,
                  metrics: dict[str, np.ndarray]) -> None:
        keep = metrics["update"] < update
        log.write({k: v[keep] for k, v in metrics.items()})
        last = self.checkpoints.latest()
        self.record.update(status="diverged", diverged_at_update=update,
                           last_good_checkpoint=last)
        records.write_json(self.out / "record.json", self.record)
        raise TrainingDiverged(
            f"the loss or the parameters became NaN or infinite at update "
            f"{update}; the last good checkpoint is update {last} in "
            f"{self.out / 'checkpoints'}. Lower the learning rate or "
            f"max_grad_norm (--set learning_rate=...) and train again")

    def _finish(self, state: core.AgentState, seconds: float,
                compile_seconds: float) -> None:
        lines = records.read_jsonl(self.out / "metrics.jsonl")
        frames = lines[-1]["frames"] if lines else 0
        returns = [line["episode_return"] for line in lines[-max(
            1, len(lines) // 10):] if line["episode_return"] is not None]
        earlier = _frames_before(self.record)
        self.record.update(
            status="finished", seconds=seconds,
            compile_seconds=compile_seconds,
            final={"frames": frames, "total_frames": frames + earlier,
                   "updates": len(lines),
                   "mean_return_last_10pct": (float(np.mean(returns))
                                              if returns else None),
                   "last": lines[-1] if lines else None})
        title = f"{self.options.algo} on {self.options.env_id}"
        records.plot_curve(lines, self.out / "curve.png", title)
        gif = record_gif(self.agent, state, self.out / "agent.gif",
                         self.options.gif_steps, self.options.seed)
        self.record["gif"] = None if gif is None else str(gif)
        records.write_json(self.out / "record.json", self.record)
        self.checkpoints.close()


def record_gif(agent: core.Agent, state: core.AgentState,
               path: pathlib.Path, steps: int, seed: int = 0
               ) -> pathlib.Path | None:
    """The trained policy playing one Atari env for `steps` agent steps,
    as a GIF of the full-colour screen (None for non-Atari envs)."""
    from jaxatari import render, wrappers
    base = envs.atari_base(agent.env.env)
    if steps < 1 or base is None:
        return None
    screens = play_policy(agent, state.params, steps, seed,
                          lambda s: base.screen_rgb(wrappers.inner_state(s)))
    return render.save_video(screens, path, 60 / agent.env.frameskip)


def play_policy(agent: core.Agent, params: Any, steps: int, seed: int,
                screen: Any) -> np.ndarray:
    """One env under the policy (actions sampled) for `steps` steps; the
    `screen(env_state)` after the reset and after each step."""
    env, env_params = agent.env.env, agent.env.params

    @jax.jit
    def play(key):
        key, reset_key = jax.random.split(key)
        obs, env_state = env.reset(reset_key, env_params)

        def body(carry, _):
            key, env_state, obs = carry
            key, act_key, step_key = jax.random.split(key, 3)
            logits, _ = agent.network.apply(params, obs[None])
            action = jax.random.categorical(act_key, logits[0])
            out = env.step(step_key, env_state, action, env_params)
            return (key, out[1], out[0]), screen(out[1])
        _, shown = jax.lax.scan(body, (key, env_state, obs), None,
                                length=steps)
        return jax.numpy.concatenate([screen(env_state)[None], shown])

    return np.asarray(play(jax.random.key(seed)))


def load_trained(directory: str | pathlib.Path
                 ) -> tuple[core.Agent, core.AgentState, dict[str, Any]]:
    """A run's agent and its latest checkpoint's state, from its
    record.json (the same env, algorithm and config).

    Raises:
        ValueError: no record or no checkpoint in `directory`.
    """
    out = pathlib.Path(directory)
    if not (out / "record.json").exists():
        raise ValueError(f"{out} has no record.json: not a jaxatari train "
                         f"directory")
    record = json.loads((out / "record.json").read_text())
    config = dict(record["config"])
    config.pop("algo_config")
    config_class = ALGORITHMS[record["algo"]][1]
    config = config_class(**config)
    env, env_params = envs.make_env(record["env_id"])
    env = envs.unbatched(env)
    agent = ALGORITHMS[record["algo"]][0].make(config, env, env_params)
    saved = checkpoints.Checkpoints(out / "checkpoints")
    latest = saved.latest()
    if latest is None:
        raise ValueError(f"{out} has no checkpoint yet")
    fresh = jax.jit(agent.init)(jax.random.key(0), config.hparams())
    state, _ = saved.restore(latest, fresh)
    saved.close()
    return agent, state, record


def learned_meta(record: dict[str, Any], state: core.AgentState,
                 frameskip: int) -> dict[str, Any]:
    """What a saved agent says of itself: its run's env, algorithm, seed
    and commit, its update, and the frames it trained (`total_frames`
    with those of the agents it started from)."""
    frames = int(state.env_steps) * frameskip
    return {"env_id": record["env_id"], "algo": record["algo"],
            "seed": record["seed"], "git_sha": record.get("git_sha"),
            "update": int(state.update), "frames": frames,
            "total_frames": frames + _frames_before(record)}


def _frames_before(record: dict[str, Any]) -> int:
    """The frames the agents a run started from trained (0 from scratch)."""
    return (record.get("init_from_agent") or {}).get("total_frames", 0)


def learned_from(source: str | pathlib.Path, like: core.AgentState
                 ) -> tuple[core.AgentState, dict[str, Any]]:
    """`like` with the learned parts (`checkpoints.LEARNED_PARTS`) of the
    agent in `source`, and that agent's `learned_meta`.

    Args:
        source: a saved agent (a directory with `learned.json`), or a run
            directory: its `agent/` (its latest checkpoint's agent, or the
            one before if a kill fell between the two saves), else (a run
            from before `agent/` was written) its latest checkpoint.
        like: a state of the agent that takes them (a fresh `init`).

    Raises:
        ValueError: nothing trained in `source`, or an agent that does not
            fit `like` (another network, action count, optimiser or GA3C
            lag), naming what differs.
    """
    source = pathlib.Path(source)
    saved = next((d for d in (source, source / "agent")
                  if (d / "learned.json").exists()), None)
    if saved is None and not (source / "record.json").exists():
        raise ValueError(f"--init-from: {source} is neither a jaxatari "
                         f"train directory nor a saved agent")
    if saved is not None:
        meta = json.loads((saved / "learned.json").read_text())
        load = lambda: checkpoints.load_learned(saved, like)[0]
    else:
        agent, trained, record = load_trained(source)
        meta = learned_meta(record, trained, agent.env.frameskip)
        load = lambda: checkpoints.with_learned(
            like, checkpoints.learned_arrays(trained))
    meta.pop("parts", None)
    try:
        return load(), meta
    except ValueError as error:
        raise ValueError(
            f"--init-from {source}: its agent ({meta.get('algo')} on "
            f"{meta.get('env_id')}) does not fit this run's: {error}"
        ) from error


def export_learned(directory: str | pathlib.Path) -> pathlib.Path:
    """Writes a run's `agent/` from its latest checkpoint (for a run
    killed between its checkpoint's two saves, or one from before
    `agent/` was written); returns the path."""
    agent, state, record = load_trained(directory)
    return checkpoints.save_learned(
        pathlib.Path(directory) / "agent", state,
        learned_meta(record, state, agent.env.frameskip))


def parse_setting(text: str) -> tuple[str, Any]:
    """`--set name=value`: the value as JSON if it parses, else text."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--set takes name=value, got "
                                         f"{text!r}")
    name, value = text.split("=", 1)
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value


def parser() -> argparse.ArgumentParser:
    """`jaxatari train`'s arguments."""
    top = argparse.ArgumentParser(
        prog="jaxatari train", description="Train an agent; see "
        "jaxatari.agents.run's docstring for what DIR holds.")
    top.add_argument("env", help="a jaxatari game (jaxatari list) or "
                     "gymnax:<id>, e.g. gymnax:Breakout-MinAtar")
    top.add_argument("--algo", default="ppo", choices=sorted(ALGORITHMS))
    top.add_argument("--frames", type=int, default=1_000_000)
    top.add_argument("--num-envs", type=int, default=None)
    top.add_argument("--seed", type=int, default=0)
    top.add_argument("--out", type=pathlib.Path, default=None,
                     help="the run's directory (default runs/ENV-ALGO-SEED)")
    top.add_argument("--resume", action="store_true")
    top.add_argument("--init-from", default=None, metavar="SRC",
                     help="start from the agent of another run (its "
                     "directory) or a saved agent, with fresh envs")
    top.add_argument("--checkpoint-every", type=int, default=None,
                     help="updates between checkpoints (default: 20 a run)")
    top.add_argument("--set", type=parse_setting, action="append",
                     default=[], metavar="NAME=VALUE",
                     help="any config field, e.g. --set learning_rate=1e-3")
    top.add_argument("--gif-steps", type=int, default=1000)
    top.add_argument("--no-progress", action="store_true")
    return top


def default_out(root: str, env_id: str, kind: str, seed: int
                ) -> pathlib.Path:
    """`ROOT/ENV-KIND-SEED`, the env id made a directory name (`runs/`
    for `jaxatari train`, `sweeps/` for `jaxatari sweep`)."""
    name = env_id.replace(":", "-").replace("/", "-")
    return pathlib.Path(root) / f"{name}-{kind}-{seed}"


def main(argv: list[str] | None = None) -> int:
    """Runs `jaxatari train`; prints the final record's summary."""
    args = parser().parse_args(argv)
    from jaxatari import _config
    _config.enable_compilation_cache()
    out = args.out or default_out("runs", args.env, args.algo, args.seed)
    options = RunOptions(
        env_id=args.env, algo=args.algo, frames=args.frames, out=str(out),
        num_envs=args.num_envs, seed=args.seed, resume=args.resume,
        checkpoint_every=args.checkpoint_every, overrides=tuple(args.set),
        progress=not args.no_progress, gif_steps=args.gif_steps,
        init_from=args.init_from)
    try:
        with _config.default_backend_lowering():
            record = TrainingRun(options).run()
    except (ValueError, TrainingDiverged) as error:
        raise SystemExit(f"jaxatari train: {error}") from error
    print(json.dumps({"out": str(out), "status": record["status"],
                      **record["final"], "seconds": record["seconds"]},
                     default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
