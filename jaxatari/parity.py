"""Frame-by-frame parity of jaxatari against ale-py.

    python -m jaxatari.parity GAME [GAME ...] [--steps N] [--seeds S ...]
                              [--out DIR] [--json] [--driver user|lockstep]

Both emulators play the same seeded uniform-random actions from the game's
minimal action set, at frameskip 1 without sticky actions. After the reset
and after every frame the RAM, the screen (palette indices), the RGB
observation, the reward, game over and the lives (ALE's `lives()`) are
compared. On game over both reset: ALE's `reset_game()`, and here the
env's auto-reset (`env.reset_after`) to ALE's next reset.

jaxatari's side is the env users step (the "user" driver, the default):
`jaxatari.make(game, frameskip=1, repeat_action_probability=0,
max_num_frames_per_episode=0)`, each game's seeds one vmapped batch of its
`env.step_env` (what `env.step` runs before its auto-reset) and its
auto-reset `env.reset_after` given params that hold the k-th of
`params.reset_states` (and of `params.reset_scripts`, for a game that
replays its reset from the played console: `jaxatari.reset_carry`),
which `make` boots as ALE's consecutive `reset_game()` calls. So the runs
certify the compiled step users run, and that its auto-reset reaches the
states ALE reaches when it resets after play. `--driver lockstep` runs
every game in one program of the console instead (`jaxatari.lockstep`:
frames and game rules apart, the reset sequence replayed after play):
CI's quick screen over the Atari-57.

The first divergence is printed with the step, the differing RAM bytes and
the number of differing pixels, and both screens are written side by side
(ours left) to `DIR/GAME_seedS_stepN.png`. Exit status 1 if any run
diverged. `--json` prints one JSON line per run instead. A game's runs
are printed as soon as it ends. `dev`, `atari57` and `all` stand for the
dev set, the Atari-57 and every game; `benchmarks/parity_table.py`
writes PARITY.md.
"""
from __future__ import annotations

import argparse
import functools
import json
import pathlib
import pickle
import sys
import time
import zlib
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
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
    """What differs between two frames' observations: RAM bytes, screen
    pixels (palette indices), reward, game over and lives, and, when both
    have an "obs" (RGB, as `getScreenRGB`), its differing pixels."""
    ram = np.nonzero(ours["ram"] != theirs["ram"])[0]
    pixels = int((ours["screen"] != theirs["screen"]).sum())
    diff = {"ram_bytes": [int(i) for i in ram], "pixels": pixels,
            "reward": (int(ours["reward"]), int(theirs["reward"])),
            "game_over": (bool(ours["game_over"]), bool(theirs["game_over"])),
            "lives": (int(ours["lives"]), int(theirs["lives"]))}
    if "obs" in ours and "obs" in theirs:
        diff["obs_pixels"] = int(np.any(ours["obs"] != theirs["obs"],
                                        axis=-1).sum())
    return diff


def _diverged(diff: dict) -> bool:
    return bool(diff["ram_bytes"] or diff["pixels"]
                or diff.get("obs_pixels")
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


def act_both(ale, handle: lockstep.Handle, action: int
             ) -> tuple[tuple[int, bool], tuple[int, bool]]:
    """One frame of `action` in both: ((reward, game over) of ALE's,
    jaxatari's)."""
    theirs = int(ale.act(action)), bool(ale.game_over())
    handle.frames(action, 0, 1)
    return theirs, (handle.reward, handle.terminal)


class Checkpoints(NamedTuple):
    """Where long runs save their progress, and how often.

    Each (game, seed) run saves a snapshot of both sides every `every`
    compared frames (`GAME_seedS.pkl`: our env's whole `EnvState`, ALE's
    being replayed from its seed, which is cheap), and its result when it
    ends (`GAME_seedS.json`); only the user driver saves them. A run
    started again resumes from its snapshot, and a finished one returns
    its result. `commit` names the code a segment ran at; a result lists
    every segment's.
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
            progress: int):
    """The parity run of one (game, seed), as a `lockstep` script (the
    quick screen: no checkpoints), playing `_Run`'s sequence."""

    def script(handle: lockstep.Handle) -> dict:
        run = _Run(game, seed, steps, None, None, out, progress,
                   "lockstep", boot_both(handle, game, seed))
        ours = (0, False)
        while not run.check({"ram": handle.ram()[:128],
                             "screen": handle.screen(), "reward": ours[0],
                             "game_over": ours[1], "lives": handle.lives},
                            None):
            index, run.step = run.draw(), run.step + 1
            if index is None:
                environment.reset_game(handle.rules, handle.env.mode,
                                       handle, run.result["resets"])
                ours = (0, False)
            else:
                run.act(index)
                handle.frames(run.actions[index], 0, 1)
                ours = (handle.reward, handle.terminal)
        return run.result

    return script


def _commits(saved: dict | None, checkpoints: Checkpoints) -> list[str]:
    """The commits of a run's segments so far, this one's last."""
    earlier = saved["commits"] if saved else []
    return list(dict.fromkeys(earlier + [checkpoints.commit]))


USER_SETTINGS = {"frameskip": 1, "repeat_action_probability": 0.0,
                 "max_num_frames_per_episode": 0}
"""The env's settings in a parity run: one ALE frame a step, no sticky
actions, no truncation (as `make_ale` sets ale-py)."""


class ResetStates:
    """A game's resets as users get them: `params.reset_states` of
    `jaxatari.make(game, num_reset_states=n)`, state k being ALE's k-th
    `reset_game()` after `loadROM()` (0 is the one loadROM ends with).

    A run that needs a reset past the `n` booted boots them again, 4 times
    as many (the boot cache keeps them for later runs).
    """

    def __init__(self, game: str, count: int = 4):
        self.game, self.count = game, count
        self.env, self.params = environment.make(
            game, num_reset_states=count, **USER_SETTINGS)

    def __getitem__(self, k: int) -> environment.EnvParams:
        """Params whose only reset state is the k-th: `env.reset` with
        them starts the episode that ALE's k-th `reset_game()` starts."""
        while k >= self.count:
            self.count *= 4
            self.params = environment.make(
                self.game, num_reset_states=self.count, **USER_SETTINGS)[1]
        one = lambda tree: jax.tree.map(lambda x: x[k:k + 1], tree)
        return self.params.replace(
            reset_states=one(self.params.reset_states),
            reset_scripts=one(self.params.reset_scripts))


class UserPrograms(NamedTuple):
    """The env's own functions, compiled for a batch of one game's runs.

    `frames` is `env.step_env` vmapped (what `env.step` runs before its
    auto-reset; lanes not `active` keep their state), `start` is
    `env.reset` (a console just loaded: the run's first episode), `reset`
    is `env.reset_after` (the auto-reset of a played console), both given
    params that hold the reset state to start, and `observe` shows a state
    restored from a checkpoint. Each returns what `compare` reads.
    """
    frames: Callable
    start: Callable
    reset: Callable
    observe: Callable


def _observed(env: environment.AtariEnv, state: environment.EnvState,
              obs: jax.Array, reward: jax.Array,
              game_over: jax.Array) -> dict:
    return {"ram": env.ram(state), "screen": env.screen(state), "obs": obs,
            "reward": reward, "game_over": game_over, "lives": state.lives}


@functools.lru_cache(maxsize=1)
def user_programs(env: environment.AtariEnv) -> UserPrograms:
    """`UserPrograms` of `env` (compiled once per game and batch size).

    Only the last game's are kept (envs of the same game and settings are
    equal, so its next runs reuse them): kept for every game, a run of
    all 104 had XLA:CPU run out of memory maps before its last games."""
    def frame(key, state, action, active, params):
        obs, new, reward, done, _ = env.step_env(key, state, action, params)
        new = jax.tree.map(lambda a, b: jnp.where(active, a, b), new, state)
        return new, _observed(env, new, obs, reward, done)

    def start(key, params):
        obs, state = env.reset(key, params)
        return state, _observed(env, state, obs, state.reward,
                                state.terminal)

    def reset(key, played, params):
        obs, state = env.reset_after(key, played, params)
        return state, _observed(env, state, obs, state.reward,
                                state.terminal)

    def observe(state, params):
        return _observed(env, state, env.observation(state, params),
                         state.reward, state.terminal)

    return UserPrograms(jax.jit(jax.vmap(frame, (0, 0, 0, 0, None))),
                        jax.jit(start), jax.jit(reset), jax.jit(observe))


@jax.jit
def _set_lane(states: Any, lane: jax.Array, state: Any) -> Any:
    return jax.tree.map(lambda all_, one: all_.at[lane].set(one), states,
                        state)


class _Run:
    """One (game, seed) run, either driver's: ALE, the action draws, the
    comparison, checkpoints and the result so far, and the step the run
    stands at. Each step: `check` the frame, then `draw` the move (a reset
    after ALE's game over, or an action to `act` in both)."""

    def __init__(self, game: str, seed: int, steps: int, saved: dict | None,
                 checkpoints: Checkpoints | None, out: pathlib.Path | None,
                 progress: int, driver: str = "user", ale: Any = None):
        self.game, self.seed, self.steps = game, seed, steps
        self.saved, self.checkpoints = saved, checkpoints
        self.out, self.progress = out, progress
        self.start = self.step = saved["step"] if saved else 0
        self.started = time.perf_counter() - (saved["seconds"] if saved
                                              else 0)
        self.ale = make_ale(game, seed) if ale is None else ale
        self.rng = np.random.RandomState(seed)
        self.actions = [int(a) for a in games.lookup(game).minimal_actions]
        self.result = {"game": game, "seed": seed, "steps": steps,
                       "first_divergence": None, "resets": 0,
                       "driver": driver}
        self.theirs, self.ended = (0, False), False
        for _ in range(self.start):   # ALE alone, to the checkpoint
            index = self.draw()
            if index is not None:
                self.act(index)

    def draw(self) -> int | None:
        """This step's move: None after ALE's game over (ALE is reset, and
        ours must be: its `result["resets"]`-th), else the action's index
        in the minimal action set (the env's `action_set`)."""
        if self.theirs[1]:
            self.result["resets"] += 1
            self.ale.reset_game()
            self.theirs = (0, False)
            return None
        return int(self.rng.randint(len(self.actions)))

    def act(self, index: int) -> None:
        """ALE's frame of the minimal set's `index`-th action."""
        self.theirs = (int(self.ale.act(self.actions[index])),
                       bool(self.ale.game_over()))

    def check(self, ours: dict, state: Callable[[], Any] | None) -> bool:
        """Compare this step's frame, save a checkpoint when one is due
        (`state()` gives ours; only with checkpoints); True when the run
        has ended."""
        ale = self.ale
        diff = compare(ours, {
            "ram": ale.getRAM(), "screen": ale.getScreen(),
            "obs": ale.getScreenRGB(), "reward": self.theirs[0],
            "game_over": self.theirs[1], "lives": ale.lives()})
        if _diverged(diff):
            self.result.update(first_divergence=self.step, **diff)
            if self.out is not None:
                _save_screens(self.out, f"{self.game}_seed{self.seed}_step"
                              f"{self.step}", ours["screen"],
                              ale.getScreen())
            return self._end()
        every = self.checkpoints.every if self.checkpoints else 0
        if every and self.step > self.start and (
                self.step % every == 0 or self.step == self.steps):
            self.checkpoints.save(self.game, self.seed, ".pkl", {
                "step": self.step, "resets": self.result["resets"],
                "state": jax.device_get(state()), "driver": "user",
                "seconds": time.perf_counter() - self.started,
                "commits": _commits(self.saved, self.checkpoints)})
        if self.step == self.steps:
            return self._end()
        if self.progress and self.step and self.step % self.progress == 0:
            print(json.dumps({"game": self.game, "seed": self.seed,
                              "identical_through": self.step}),
                  file=sys.stderr, flush=True)
        return False

    def _end(self) -> bool:
        self.ended = True
        self.result["seconds"] = round(time.perf_counter() - self.started, 1)
        if self.checkpoints:
            self.result["commits"] = _commits(self.saved, self.checkpoints)
            self.checkpoints.save(self.game, self.seed, ".json", self.result)
        return True


def _first_states(runs: list[_Run], resets: ResetStates,
                  programs: UserPrograms) -> tuple[Any, list[dict]]:
    """Each run's state at its start (reset 0, or its checkpoint's) as one
    batch, and what `compare` reads of each."""
    states, seen = [], []
    for run in runs:
        if run.saved is None:
            state, observed = programs.start(jax.random.key(0), resets[0])
        else:
            if "state" not in run.saved:
                raise ValueError(
                    f"{run.checkpoints.path(run.game, run.seed, '.pkl')} was "
                    "saved by the lock-step driver; resume it with "
                    "driver='lockstep' (--driver lockstep), or start over "
                    "in another checkpoint directory")
            state = run.saved["state"]
            observed = programs.observe(state, resets[0])
        states.append(state)
        seen.append(jax.device_get(observed))
    return jax.tree.map(lambda *xs: jnp.stack(xs), *states), seen


def _run_user_batch(game: str, seeds: list[int], steps: int,
                    out: pathlib.Path | None, progress: int,
                    checkpoints: Checkpoints | None) -> list[dict]:
    """The runs of one game's seeds, through the env users step."""
    resets = ResetStates(game)
    programs = user_programs(resets.env)
    runs = [_Run(game, seed, steps, checkpoints and checkpoints.load(
        game, seed, ".pkl"), checkpoints, out, progress) for seed in seeds]
    states, seen = _first_states(runs, resets, programs)
    keys = jax.random.split(jax.random.key(0), len(runs))
    step_params = resets[0]   # `step_env` reads no reset state
    while not all(run.ended for run in runs):
        actions, active = np.zeros(len(runs), np.int32), [False] * len(runs)
        for lane, run in enumerate(runs):
            if run.ended or run.check(
                    seen[lane], lambda: jax.tree.map(lambda x: x[lane],
                                                     states)):
                continue
            action, run.step = run.draw(), run.step + 1
            if action is None:
                state, observed = programs.reset(
                    keys[lane], jax.tree.map(lambda x: x[lane], states),
                    resets[run.result["resets"]])
                states = _set_lane(states, lane, state)
                seen[lane] = jax.device_get(observed)
            else:
                actions[lane], active[lane] = action, True
        if any(active):   # ALE's frames while ours run
            states, observed = programs.frames(keys, states, actions,
                                               np.array(active), step_params)
            for lane in np.flatnonzero(active):
                runs[lane].act(int(actions[lane]))
            observed = jax.device_get(observed)
            for lane in np.flatnonzero(active):
                seen[lane] = jax.tree.map(lambda x: x[lane], observed)
    return [run.result for run in runs]


DRIVERS = ("user", "lockstep")
"""How `run_many` emulates jaxatari's side. "user": each game's runs are
one batch of the env users step (`jaxatari.make`, `env.step_env` and
`env.reset` over `params.reset_states`, compiled per game); PARITY.md is
measured so. "lockstep": every run in one batch of many games
(`jaxatari.lockstep`: the console's frame and the game rules apart, one
program for any mix of games), the quick screen CI runs on every commit."""


def run_many(runs: list[tuple[str, int]], steps: int,
             out: pathlib.Path | None = None,
             progress: int = 0,
             checkpoints: Checkpoints | None = None,
             driver: str = "user",
             report: Callable[[list[dict]], None] | None = None
             ) -> list[dict]:
    """Parity of several (game, seed) runs against ale-py.

    With `progress`, a JSON line goes to stderr every `progress` identical
    steps of each run; with `checkpoints`, runs save their progress and
    resume from it (`Checkpoints`).

    Args:
        runs: (game, seed) pairs.
        steps: frames to compare in each.
        out: where a divergence's screens are written.
        progress: see above (0: silent).
        checkpoints: see above.
        driver: one of `DRIVERS`.
        report: called with each game's results (its runs in the order
            given) as soon as they are known, so that a long run's
            finished games are not lost if a later one fails; the
            lock-step driver reports all of them at once, at the end.

    Returns:
        One result per run, in order: `first_divergence` (None, or the
        step), the differing RAM bytes and pixel counts there, `resets`,
        `seconds` and `driver`.
    """
    if driver not in DRIVERS:
        raise ValueError(f"driver {driver!r}: choose one of {DRIVERS}")
    runs = [(games.lookup(game).rom_id, seed) for game, seed in runs]
    if driver == "lockstep":
        if checkpoints:
            raise ValueError("checkpoints are the user driver's; the "
                             "lock-step screen runs in one sitting")
        envs = {game: environment.AtariEnv(game) for game, _ in runs}
        group = lockstep.Lockstep([envs[game] for game, _ in runs])
        results = group.run([_script(game, steps, seed, out, progress)
                             for game, seed in runs])
        if report:
            report(results)
        return results
    results = {}
    for game in dict.fromkeys(game for game, _ in runs):
        seeds = [seed for g, seed in runs if g == game]
        done = {seed: _finished(checkpoints, game, seed, steps)
                for seed in seeds}
        todo = [seed for seed in seeds if done[seed] is None]
        ran = _run_user_batch(game, todo, steps, out, progress,
                              checkpoints) if todo else []
        results.update({(game, s): r for s, r in done.items() if r})
        results.update({(game, r["seed"]): r for r in ran})
        if report:
            report([results[(game, seed)] for seed in seeds])
    return [results[run] for run in runs]


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
                      "commits": saved["commits"], "in_progress": True,
                      "driver": saved.get("driver", "lockstep")}
        results.append(result)
    return results


def latest_per_run(results: list[dict],
                   descends: Callable[[str, str], bool] | None = None
                   ) -> list[dict]:
    """One result per (game, seed): a divergence if any run of it found
    one (the earliest), otherwise the run with the most frames (the user
    driver's if both drivers reached as many; given `descends`, of runs
    alike in all that, the one at the latest commit, so a game run again
    after a change shows the change's commit).

    Args:
        results: the runs' results.
        descends: `descends(a, b)`: whether commit `b` descends from
            commit `a` (`git merge-base --is-ancestor a b`). Given it, a
            divergence is fixed by a run of the same driver at a
            descendant commit that is identical past the divergence's
            frame: it counts no more, and the rows show the fix.
    """
    if descends is not None:
        results = [r for r in results if not any(
            _fixes(later, r, descends) for later in results)]
    best: dict[tuple[str, int], dict] = {}
    for result in results:
        key = (result["game"], result["seed"])
        held = best.get(key)
        if held is None:
            best[key] = result
            continue
        rank, held_rank = _rank(result), _rank(held)
        if rank < held_rank or (rank == held_rank and _at_later_commit(
                result, held, descends)):
            best[key] = result
    return list(best.values())


def _at_later_commit(result: dict, held: dict,
                     descends: Callable[[str, str], bool] | None) -> bool:
    """Whether `result` was made at a commit descending from `held`'s."""
    commits = result.get("commit"), held.get("commit")
    return (descends is not None and None not in commits
            and commits[0] != commits[1] and descends(commits[1], commits[0]))


def _fixes(later: dict, diverged: dict,
           descends: Callable[[str, str], bool]) -> bool:
    """Whether `later` is identical where `diverged` diverged, same game,
    seed and driver, at a commit descending from `diverged`'s."""
    divergence = diverged["first_divergence"]
    return (divergence is not None and later["first_divergence"] is None
            and (later["game"], later["seed"], driver_of(later))
            == (diverged["game"], diverged["seed"], driver_of(diverged))
            and later["steps"] > divergence
            and bool(later.get("commit")) and bool(diverged.get("commit"))
            and later["commit"] != diverged["commit"]
            and descends(diverged["commit"], later["commit"]))


def _rank(result: dict) -> tuple:
    """Lower ranks first: a divergence (the earliest), then the longest,
    the user driver's before the lock-step screen's at equal length."""
    divergence = result["first_divergence"]
    return ((0, divergence) if divergence is not None
            else (1, -result["steps"], driver_of(result) != "user"))


def driver_of(result: dict) -> str:
    """The driver a result was made with (results saved before the user
    driver existed were the lock-step one's)."""
    return result.get("driver", "lockstep")


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
    drivers = {driver_of(r) for r in runs}
    through = ("user path" if drivers == {"user"} else "lock-step screen"
               if drivers == {"lockstep"} else "mixed drivers")
    where = f" ({through}{', at ' if commits else ''}{', '.join(commits)})"
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
    parser.add_argument("--driver", choices=DRIVERS, default="user", help=(
        "user: each game through the env users step (default); lockstep: "
        "all games in one batch of the console (DRIVERS)"))
    parser.add_argument("--progress", type=int, default=500, help=(
        "report every N identical frames of each run on stderr (0: never)"))
    args = parser.parse_args(argv)
    runs = [(game, seed) for game in expand_games(args.games)
            for seed in args.seeds]

    def print_results(results: list[dict]) -> None:   # as each game ends
        for result in results:
            print(json.dumps(result) if args.json else _describe(result),
                  flush=True)

    results = run_many(runs, args.steps, args.out, progress=args.progress,
                       driver=args.driver, report=print_results)
    return 1 if any(r["first_divergence"] is not None for r in results) \
        else 0


if __name__ == "__main__":
    sys.exit(main())
