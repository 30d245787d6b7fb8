"""What a sweep leaves behind besides its record: per-member lines,
lineage, TensorBoard curves and plots.

* `member_lines`: one JSON-ready dict per member (PBT and random search),
  slot (HyperTrick) or generation (ES) per generation or phase boundary,
  from a chunk's stacked metrics.
* `write_tensorboard`: the same figures as scalars, one tag per member
  (`member_003/score`, `member_003/learning_rate`) plus the population's
  median and best.
* `plot_sweep`: `returns.png` (every member's score and the population's
  median over time), `hparams.png` (each hyperparameter's schedule per
  member) and, for PBT, `lineage.png` (who copied whom, and when).
"""
from __future__ import annotations

import pathlib
from typing import Any

import numpy as np

from jaxatari.agents.records import to_json_value


def member_lines(method: str, metrics: dict[str, Any]) -> list[dict]:
    """A chunk's metrics (a leading generation axis) as lines."""
    if method == "es":
        count = len(metrics["generation"])
        return [{k: to_json_value(np.asarray(v)[g])
                 for k, v in metrics.items()} for g in range(count)]
    if method == "hypertrick":
        return _hypertrick_lines(metrics)
    return _pbt_lines(metrics)


def _pbt_lines(metrics: dict[str, Any]) -> list[dict]:
    lines = []
    generations, members = np.asarray(metrics["scores"]).shape
    for g in range(generations):
        for m in range(members):
            lines.append({
                "generation": int(metrics["generation"][g]), "member": m,
                "score": to_json_value(metrics["scores"][g, m]),
                "parent": int(metrics["parents"][g, m]),
                "replaced": bool(metrics["replaced"][g, m]),
                "frames": int(metrics["frames"][g, m]),
                "hparams": {k: to_json_value(v[g, m]) for k, v in
                            metrics["trained_hparams"].items()},
                "next_hparams": {k: to_json_value(v[g, m]) for k, v in
                                 metrics["hparams"].items()}})
    return lines


def _hypertrick_lines(metrics: dict[str, Any]) -> list[dict]:
    lines = []
    boundaries, slots = np.asarray(metrics["scores"]).shape
    for b in range(boundaries):
        for s in range(slots):
            lines.append({
                "generation": int(metrics["boundary"][b]), "member": s,
                "config": int(metrics["slot_config"][b, s]),
                "active": bool(metrics["active"][b, s]),
                "score": to_json_value(metrics["scores"][b, s]),
                "evicted": bool(metrics["evicted"][b, s]),
                "finished": bool(metrics["finished"][b, s]),
                "frames": int(metrics["frames"][b, s])})
    return lines


def write_tensorboard(writer: Any, method: str, lines: list[dict]) -> None:
    """Each line's figures as scalars, step = generation."""
    by_generation: dict[int, list[float]] = {}
    for line in lines:
        step = line["generation"]
        if method == "es":
            for name, value in line.items():
                if value is not None and name != "generation":
                    writer.add_scalar(f"es/{name}", value, step)
            continue
        tag = f"member_{line['member']:03d}"
        if line["score"] is not None:
            writer.add_scalar(f"{tag}/score", line["score"], step)
            by_generation.setdefault(step, []).append(line["score"])
        for name, value in line.get("hparams", {}).items():
            writer.add_scalar(f"{tag}/{name}", value, step)
    for step, scores in by_generation.items():
        writer.add_scalar("population/median_score", np.median(scores), step)
        writer.add_scalar("population/best_score", np.max(scores), step)
    writer.flush()


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_sweep(method: str, lines: list[dict], out: pathlib.Path,
               title: str) -> list[pathlib.Path]:
    """The sweep's plots; returns their paths."""
    if method == "es":
        return [_plot_es(lines, out / "returns.png", title)]
    paths = [_plot_scores(lines, out / "returns.png", title)]
    if method in ("pbt", "random"):
        paths.append(_plot_hparams(lines, out / "hparams.png", title))
        paths.append(_plot_lineage(lines, out / "lineage.png", title))
    return paths


def _series(lines: list[dict], key: Any) -> tuple[np.ndarray, np.ndarray]:
    """`[generations]` axis and `[members, generations]` values."""
    generations = sorted({line["generation"] for line in lines})
    members = 1 + max(line["member"] for line in lines)
    values = np.full((members, len(generations)), np.nan)
    index = {g: i for i, g in enumerate(generations)}
    for line in lines:
        value = key(line)
        if value is not None:
            values[line["member"], index[line["generation"]]] = value
    return np.array(generations), values


def _plot_scores(lines: list[dict], path: pathlib.Path, title: str
                 ) -> pathlib.Path:
    plt = _pyplot()
    generations, scores = _series(lines, lambda line: line["score"])
    figure, axes = plt.subplots(figsize=(7, 4), dpi=100)
    for row in scores:
        axes.plot(generations, row, color="tab:blue", alpha=0.25,
                  linewidth=0.8)
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            axes.plot(generations, np.nanmedian(scores, axis=0),
                      color="black", label="median")
            axes.plot(generations, np.nanmax(scores, axis=0),
                      color="tab:red", label="best")
    axes.set_xlabel("generation")
    axes.set_ylabel("score (mean recent episode return)")
    axes.set_title(title)
    axes.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def _plot_hparams(lines: list[dict], path: pathlib.Path, title: str
                  ) -> pathlib.Path:
    plt = _pyplot()
    names = sorted(lines[0]["hparams"]) if lines else []
    tuned = [n for n in names if len({line["hparams"][n]
                                      for line in lines}) > 1] or names[:1]
    figure, all_axes = plt.subplots(len(tuned), 1, squeeze=False,
                                    figsize=(7, 2.2 * len(tuned)), dpi=100)
    for axes, name in zip(all_axes[:, 0], tuned):
        generations, values = _series(lines,
                                      lambda line: line["hparams"][name])
        for row in values:
            axes.step(generations, row, where="post", alpha=0.5,
                      linewidth=0.8)
        if np.nanmin(values) > 0 and np.nanmax(values) / np.nanmin(
                values) > 20:
            axes.set_yscale("log")
        axes.set_ylabel(name)
    all_axes[-1, 0].set_xlabel("generation")
    all_axes[0, 0].set_title(f"{title}: hyperparameter schedules")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def _plot_lineage(lines: list[dict], path: pathlib.Path, title: str
                  ) -> pathlib.Path:
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(7, 4), dpi=100)
    for line in lines:
        g, m, parent = line["generation"], line["member"], line["parent"]
        axes.plot([g - 1, g], [m, m], color="gray", linewidth=0.6)
        if line["replaced"]:
            axes.plot([g, g + 0.6], [parent, m], color="tab:red",
                      linewidth=0.8)
    axes.set_xlabel("generation")
    axes.set_ylabel("member")
    axes.set_title(f"{title}: lineage (red: a member copies another)")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def _plot_es(lines: list[dict], path: pathlib.Path, title: str
             ) -> pathlib.Path:
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(7, 4), dpi=100)
    generations = [line["generation"] for line in lines]
    for name in ("centre_return", "mean_fitness", "max_fitness"):
        axes.plot(generations, [np.nan if line[name] is None
                                else line[name] for line in lines],
                  label=name)
    axes.set_xlabel("generation")
    axes.set_ylabel("return")
    axes.set_title(title)
    axes.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def lineage(lines: list[dict]) -> list[dict]:
    """PBT's copies: `{generation, member, parent}` for each member that
    copied another at a generation's end."""
    return [{"generation": line["generation"], "member": line["member"],
             "parent": line["parent"]} for line in lines
            if line.get("replaced")]
