"""What a training run leaves behind: its record, metrics, curve and
progress.

* `provenance()`: git SHA, package versions, devices, host, time, command.
* `MetricsLog`: one JSON line per update in `metrics.jsonl` (NaN as null),
  the same scalars as TensorBoard event files (tensorboardX), x-axis frames.
* `plot_curve`: the learning curve as a PNG (matplotlib, no display).
* `Progress`: a tqdm bar of frames with frames/s and the latest return,
  fed from inside the compiled program by `jax.debug.callback`.
"""
from __future__ import annotations

import datetime
import importlib.metadata
import json
import math
import pathlib
import platform
import subprocess
import sys
import time
from typing import Any, Iterable

import jax
import numpy as np

PACKAGES = ("jaxatari", "jax", "jaxlib", "flax", "optax", "chex",
            "orbax-checkpoint", "gymnax", "numpy", "ale-py",
            "tensorboardX", "matplotlib", "tqdm")
"""The packages whose versions a record lists."""


def git_sha(path: pathlib.Path | None = None) -> str | None:
    """The commit of the checkout jaxatari runs from (None outside git),
    with "-dirty" when it has uncommitted changes."""
    path = path or pathlib.Path(__file__).resolve().parent
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=path,
                             capture_output=True, text=True, timeout=10,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "-uno"],
                               cwd=path, capture_output=True, text=True,
                               timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return sha + ("-dirty" if dirty else "")


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str]:
    """Installed versions of `names` (missing ones left out)."""
    versions = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return versions


def provenance() -> dict[str, Any]:
    """Where and with what a run ran."""
    return {"git_sha": git_sha(), "packages": package_versions(),
            "python": sys.version.split()[0],
            "devices": [str(d) for d in jax.devices()],
            "backend": jax.default_backend(), "host": platform.node(),
            "platform": platform.platform(),
            "started": datetime.datetime.now(datetime.timezone.utc)
            .isoformat(timespec="seconds"),
            "command": sys.argv}


def to_json_value(value: Any) -> Any:
    """A scalar (numpy or Python) as JSON: NaN and infinities as None."""
    value = np.asarray(value).item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_json(path: pathlib.Path, data: dict[str, Any]) -> None:
    """Writes JSON atomically (a temporary file, then a rename)."""
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(json.dumps(data, indent=1, default=str) + "\n")
    temporary.replace(path)


class MetricsLog:
    """`metrics.jsonl` and TensorBoard events under a run's directory.

    Args:
        directory: the run's directory.
        resume_after: on resume, the checkpoint's update: lines past it
            (written after the checkpoint by the interrupted run) are
            dropped, since the resumed run writes them again.
    """

    def __init__(self, directory: pathlib.Path,
                 resume_after: int | None = None):
        from tensorboardX import SummaryWriter
        self.path = directory / "metrics.jsonl"
        if resume_after is None:
            self.path.write_text("")
        else:
            kept = [line for line in read_jsonl(self.path)
                    if line["update"] <= resume_after]
            self.path.write_text("".join(json.dumps(line) + "\n"
                                         for line in kept))
        self.tensorboard = SummaryWriter(str(directory / "tensorboard"),
                                         purge_step=None)

    def write(self, metrics: dict[str, np.ndarray]) -> list[dict]:
        """Appends each update of a chunk's stacked metrics; returns the
        lines."""
        count = len(metrics["update"])
        lines = [{k: to_json_value(v[i]) for k, v in metrics.items()}
                 for i in range(count)]
        with self.path.open("a") as file:
            for line in lines:
                file.write(json.dumps(line) + "\n")
        for line in lines:
            for name, value in line.items():
                if value is not None and name not in ("update", "frames"):
                    self.tensorboard.add_scalar(name, value, line["frames"])
        self.tensorboard.flush()
        return lines

    def close(self) -> None:
        self.tensorboard.close()


def read_jsonl(path: pathlib.Path) -> list[dict[str, Any]]:
    """The lines of a JSONL file (a torn last line, from a kill mid-write,
    is skipped)."""
    lines = []
    if not path.exists():
        return lines
    for text in path.read_text().splitlines():
        try:
            lines.append(json.loads(text))
        except json.JSONDecodeError:
            continue
    return lines


def pyplot() -> Any:
    """`matplotlib.pyplot` on the Agg backend (no display needed),
    imported on first use."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save_figure(figure: Any, path: pathlib.Path) -> pathlib.Path:
    """Lays `figure` out, writes it to `path` and closes it."""
    figure.tight_layout()
    figure.savefig(path)
    pyplot().close(figure)
    return path


def plot_curve(lines: list[dict[str, Any]], path: pathlib.Path,
               title: str) -> pathlib.Path:
    """The mean episode return per update against frames, with a running
    mean over 5% of the updates, as a PNG."""
    plt = pyplot()
    frames = np.array([line["frames"] for line in lines], float)
    returns = np.array([np.nan if line["episode_return"] is None
                        else line["episode_return"] for line in lines])
    figure, axes = plt.subplots(figsize=(7, 4), dpi=100)
    axes.plot(frames, returns, ".", alpha=0.3, markersize=3,
              label="per update")
    window = max(1, len(lines) // 20)
    seen = np.isfinite(returns)
    if seen.any():
        smooth = np.convolve(np.where(seen, returns, 0), np.ones(window),
                             "same") / np.maximum(np.convolve(
                                 seen, np.ones(window), "same"), 1)
        axes.plot(frames, np.where(seen.cumsum() > 0, smooth, np.nan),
                  label=f"running mean ({window} updates)")
    axes.set_xlabel("frames")
    axes.set_ylabel("episode return")
    axes.set_title(title)
    axes.legend(loc="lower right")
    return save_figure(figure, path)


class Progress:
    """A tqdm bar over the run's frames, with frames/s and the latest
    mean return; `update(metrics)` is the `jax.debug.callback` target.

    Args:
        total_frames: the bar's end.
        start_frames: frames already done (a resumed run).
        enabled: False for no bar (the callback then does nothing).
    """

    def __init__(self, total_frames: int, start_frames: int = 0,
                 enabled: bool = True):
        self.enabled = enabled
        self.latest_return = math.nan
        self.frames = start_frames
        self.started = time.perf_counter()
        self.start_frames = start_frames
        if enabled:
            from tqdm import tqdm
            self.bar = tqdm(total=total_frames, initial=start_frames,
                            unit="frame", unit_scale=True, dynamic_ncols=True,
                            file=sys.stderr)

    def update(self, metrics: dict[str, Any]) -> None:
        """Moves the bar to the metrics' frame count."""
        if not self.enabled:
            return
        frames = int(np.max(metrics["frames"]))
        returns = np.asarray(metrics["episode_return"], float)
        if np.isfinite(returns).any():
            self.latest_return = float(np.nanmean(returns))
        self.bar.update(max(frames - self.frames, 0))
        self.frames = max(frames, self.frames)
        elapsed = max(time.perf_counter() - self.started, 1e-9)
        self.bar.set_postfix(
            fps=f"{(self.frames - self.start_frames) / elapsed:,.0f}",
            ret=f"{self.latest_return:.2f}", refresh=False)

    def close(self) -> None:
        if self.enabled:
            self.bar.close()
