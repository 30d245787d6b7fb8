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
* `log_to_mlflow`: a sweep directory's records as MLflow runs, a parent
  for the sweep and one nested run per member (the optional extra
  `jaxatari[mlflow]`); the record files stay the source of truth, so it
  can run at the sweep's end (`jaxatari sweep --mlflow`) or any time
  after.
"""
from __future__ import annotations

import datetime
import hashlib
import importlib
import json
import pathlib
import time
from typing import Any, Iterable

import numpy as np

from jaxatari.agents.records import (pyplot, read_jsonl, save_figure,
                                     to_json_value)

MLFLOW_EXPERIMENT = "jaxatari-sweep"
"""The MLflow experiment sweeps log to unless told otherwise."""
MLFLOW_INSTALL = "pip install 'jaxatari[mlflow]'"
DATABASE_SCHEMES = ("sqlite", "postgresql", "mysql", "mssql")
"""Tracking URI schemes that MLflow stores through SQLAlchemy."""
STATUS = {"finished": "FINISHED", "diverged": "FAILED"}
"""A sweep record's status as an MLflow run status (else KILLED)."""


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
        for name, value in line.get("hparams", {}).items():
            writer.add_scalar(f"{tag}/{name}", value, step)
    if method != "es":
        for name, value, step in population_scores(lines):
            writer.add_scalar(name, value, step)
    writer.flush()


def population_scores(lines: list[dict]) -> list[tuple[str, float, int]]:
    """`(name, value, generation)`: the population's median and best
    score at each generation (members that scored, PBT, random search and
    HyperTrick)."""
    by_generation: dict[int, list[float]] = {}
    for line in lines:
        if line["score"] is not None:
            by_generation.setdefault(line["generation"], []).append(
                line["score"])
    return [item for step, scores in by_generation.items() for item in (
        ("population/median_score", float(np.median(scores)), step),
        ("population/best_score", float(np.max(scores)), step))]


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
    plt = pyplot()
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
    return save_figure(figure, path)


def _plot_hparams(lines: list[dict], path: pathlib.Path, title: str
                  ) -> pathlib.Path:
    plt = pyplot()
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
    return save_figure(figure, path)


def _plot_lineage(lines: list[dict], path: pathlib.Path, title: str
                  ) -> pathlib.Path:
    plt = pyplot()
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
    return save_figure(figure, path)


def _plot_es(lines: list[dict], path: pathlib.Path, title: str
             ) -> pathlib.Path:
    plt = pyplot()
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
    return save_figure(figure, path)


def lineage(lines: list[dict]) -> list[dict]:
    """PBT's copies: `{generation, member, parent}` for each member that
    copied another at a generation's end."""
    return [{"generation": line["generation"], "member": line["member"],
             "parent": line["parent"]} for line in lines
            if line.get("replaced")]


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message names the
    `pip install` that brings it."""


def default_mlflow_uri(out: str | pathlib.Path) -> str:
    """A local SQLite store in the sweep's directory, `OUT/mlflow.db`."""
    return f"sqlite:///{(pathlib.Path(out) / 'mlflow.db').absolute()}"


def require_mlflow(uri: str) -> None:
    """Checks that MLflow can log to `uri` (and SQLAlchemy and Alembic,
    which MLflow's database stores need, for a database URI).

    Raises:
        MissingExtra: naming what is missing and `pip install
            'jaxatari[mlflow]'`.
    """
    needed = ["mlflow"]
    if uri.split(":", 1)[0].split("+", 1)[0] in DATABASE_SCHEMES:
        needed += ["sqlalchemy", "alembic"]
    for name in needed:
        try:
            importlib.import_module(name)
        except ImportError as error:
            raise MissingExtra(
                f"--mlflow {uri} needs the Python package {name!r}, which "
                f"is not installed ({error}): {MLFLOW_INSTALL}") from error


def log_to_mlflow(sweep_dir: str | pathlib.Path, uri: str | None = None,
                  experiment: str = MLFLOW_EXPERIMENT) -> str:
    """Logs a sweep directory's records to MLflow.

    A parent run for the sweep: params from the record's options, configs
    and search space (`options.members`, `configs.agent.gamma`, ...),
    tags (method, env, seed, git SHA, devices, package versions, the
    sweep's directory) and the population's median and best score per
    generation (ES: its per-generation figures), plus the summary's
    numbers (`summary/...`). One nested run per member (tag
    `mlflow.parentRunId`), named `member_003`: its first hyperparameters
    as params and, per generation as the step, every number of its
    members.jsonl lines (score, frames, parent, `hparams/learning_rate`,
    ...). Logging a sweep again (say after `--resume`) replaces the runs
    it logged before.

    Args:
        sweep_dir: a `jaxatari sweep` directory (record.json and
            members.jsonl).
        uri: the tracking URI (None: `default_mlflow_uri(sweep_dir)`).
        experiment: the experiment's name (made if missing).

    Returns:
        The parent run's id.

    Raises:
        ValueError: `sweep_dir` has no record.json.
        MissingExtra: MLflow is not installed.
    """
    out = pathlib.Path(sweep_dir).absolute()
    if not (out / "record.json").exists():
        raise ValueError(f"{out} has no record.json: not a sweep directory")
    uri = uri or default_mlflow_uri(out)
    require_mlflow(uri)
    from mlflow import MlflowClient
    client = MlflowClient(tracking_uri=uri)
    record = json.loads((out / "record.json").read_text())
    lines = read_jsonl(out / "members.jsonl")
    experiment_id = _experiment_id(client, experiment)
    sweep_id = _sweep_id(out, record)
    _delete_runs(client, experiment_id, sweep_id)
    start, end = _run_times(record)
    status = STATUS.get(record.get("status"), "KILLED")
    parent = client.create_run(
        experiment_id, start_time=start, run_name=_run_name(record, out),
        tags={"jaxatari.sweep_id": sweep_id,
              **_sweep_tags(record, out)}).info.run_id
    _log_batch(client, parent, _flatten({
        "options": record.get("options", {}),
        "configs": record.get("configs", {}),
        "space": record.get("space") or {}}),
        _sweep_metrics(record, lines), end)
    if record["method"] != "es":
        for member, own in _by_member(lines).items():
            child = client.create_run(
                experiment_id, start_time=start,
                run_name=f"member_{member:03d}",
                tags={"jaxatari.sweep_id": sweep_id,
                      "mlflow.parentRunId": parent,
                      "jaxatari.member": str(member)}).info.run_id
            _log_batch(client, child,
                       _flatten({"hparams": own[0].get("hparams", {})}),
                       _member_metrics(own), end)
            client.set_terminated(child, status, end)
    client.set_terminated(parent, status, end)
    return parent


def _experiment_id(client: Any, name: str) -> str:
    found = client.get_experiment_by_name(name)
    return (found.experiment_id if found is not None
            else client.create_experiment(name))


def _delete_runs(client: Any, experiment_id: str, sweep_id: str) -> None:
    """Deletes the runs an earlier logging of the sweep made."""
    for old in client.search_runs(
            [experiment_id], f"tags.`jaxatari.sweep_id` = '{sweep_id}'",
            max_results=50_000):
        client.delete_run(old.info.run_id)


def _sweep_id(out: pathlib.Path, record: dict) -> str:
    """The sweep's identity across loggings: its directory and start."""
    text = f"{out}|{record.get('started')}"
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _run_name(record: dict, out: pathlib.Path) -> str:
    return f"{out.name}: {record['method']} on {record['env_id']}"


def _run_times(record: dict) -> tuple[int, int]:
    """The sweep's start and end in epoch milliseconds (now for what the
    record lacks)."""
    now = int(time.time() * 1000)
    try:
        start = int(datetime.datetime.fromisoformat(
            record["started"]).timestamp() * 1000)
    except (KeyError, TypeError, ValueError):
        return now, now
    seconds = record.get("seconds")
    return start, (start + int(seconds * 1000) if seconds else now)


def _sweep_tags(record: dict, out: pathlib.Path) -> dict[str, str]:
    mesh = record.get("mesh", {})
    tags = {"jaxatari.method": record["method"],
            "jaxatari.env_id": record["env_id"],
            "jaxatari.seed": str(record.get("seed")),
            "jaxatari.status": str(record.get("status")),
            "jaxatari.sweep_dir": str(out),
            "jaxatari.devices": str(len(mesh.get("devices", []))),
            "jaxatari.processes": str(mesh.get("processes", 1)),
            "jaxatari.host": str(record.get("host")),
            "git_sha": str(record.get("git_sha"))}
    if record.get("git_sha"):
        tags["mlflow.source.git.commit"] = record["git_sha"]
    for name, version in record.get("packages", {}).items():
        tags[f"package.{name}"] = version
    return tags


def _sweep_metrics(record: dict, lines: list[dict]
                   ) -> list[tuple[str, float, int]]:
    """The parent run's series: ES's per-generation figures, or the
    population's median and best score, and the summary's numbers at
    the last generation."""
    if record["method"] == "es":
        metrics = [item for line in lines
                   for item in _numbers(line, line["generation"])]
    else:
        metrics = population_scores(lines)
    last = max((line["generation"] for line in lines), default=0)
    summary = {k: v for k, v in record.get("summary", {}).items()
               if not isinstance(v, dict)}
    return metrics + _numbers({"summary": summary}, last)


def _by_member(lines: list[dict]) -> dict[int, list[dict]]:
    members: dict[int, list[dict]] = {}
    for line in sorted(lines, key=lambda x: (x["member"], x["generation"])):
        members.setdefault(line["member"], []).append(line)
    return members


def _member_metrics(lines: list[dict]) -> list[tuple[str, float, int]]:
    return [item for line in lines
            for item in _numbers(line, line["generation"])]


def _numbers(line: dict, step: int, prefix: str = ""
             ) -> list[tuple[str, float, int]]:
    """`(name, value, step)` for every number in a line (nested dicts as
    `outer/inner`; booleans as 0 or 1; None, the generation and the
    member left out)."""
    items = []
    for name, value in line.items():
        if name in ("generation", "member") and not prefix:
            continue
        if isinstance(value, dict):
            items += _numbers(value, step, f"{prefix}{name}/")
        elif isinstance(value, (bool, int, float)):
            items.append((f"{prefix}{name}", float(value), step))
    return items


def _flatten(tree: dict, prefix: str = "") -> dict[str, str]:
    """Nested dicts as `{"a.b": "value"}` (lists as JSON)."""
    flat = {}
    for name, value in tree.items():
        key = f"{prefix}{name}"
        if isinstance(value, dict):
            flat.update(_flatten(value, key + "."))
        else:
            flat[key] = (json.dumps(value) if isinstance(value, (list, tuple))
                         else str(value))
    return flat


def _log_batch(client: Any, run_id: str, params: dict[str, str],
               metrics: Iterable[tuple[str, float, int]],
               timestamp: int) -> None:
    """`log_batch` within MLflow's limits (100 params, 1,000 metrics a
    call)."""
    from mlflow.entities import Metric, Param
    params = [Param(k, v) for k, v in params.items()]
    metrics = [Metric(name, value, timestamp, step)
               for name, value, step in metrics]
    for i in range(0, len(params), 100):
        client.log_batch(run_id, params=params[i:i + 100])
    for i in range(0, len(metrics), 1000):
        client.log_batch(run_id, metrics=metrics[i:i + 1000])
