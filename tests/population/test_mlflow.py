"""`jaxatari sweep --mlflow` and `reports.log_to_mlflow`: a sweep as an
MLflow parent run with one nested run per member, read back with MLflow's
client; without MLflow, a clear error before the sweep starts."""
from __future__ import annotations

import json
import sys

import pytest

from jaxatari.population import reports, sweep

ARGV = ["gymnax:CartPole-v1", "--method", "pbt", "--members", "8",
        "--num-envs", "4", "--frames", "80000", "--generations", "2"]
"""8 A2C members of 4 envs, 2 generations of 250 updates."""


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """A sweep logged at its end to the default store, OUT/mlflow.db."""
    pytest.importorskip("mlflow")
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("alembic")
    out = tmp_path_factory.mktemp("mlflow") / "sweep"
    assert sweep.main([*ARGV, "--out", str(out), "--mlflow"]) == 0
    return out


def _runs(out):
    """(client, the parent run, its children by name)."""
    from mlflow import MlflowClient
    client = MlflowClient(tracking_uri=reports.default_mlflow_uri(out))
    experiment = client.get_experiment_by_name(reports.MLFLOW_EXPERIMENT)
    every = client.search_runs([experiment.experiment_id])
    parents = [run for run in every
               if "mlflow.parentRunId" not in run.data.tags]
    assert len(parents) == 1
    parent = parents[0]
    children = client.search_runs(
        [experiment.experiment_id],
        f"tags.mlflow.parentRunId = '{parent.info.run_id}'")
    assert len(every) == 1 + len(children)
    return client, parent, {run.info.run_name: run for run in children}


def _history(client, run, name):
    return [(m.step, m.value) for m in sorted(
        client.get_metric_history(run.info.run_id, name),
        key=lambda m: m.step)]


def test_a_sweep_logs_a_parent_run_with_a_child_per_member(logged):
    client, parent, children = _runs(logged)
    record = json.loads((logged / "record.json").read_text())
    lines = [json.loads(x) for x in
             (logged / "members.jsonl").read_text().splitlines()]
    assert parent.info.status == "FINISHED"
    tags = parent.data.tags
    assert tags["jaxatari.method"] == "pbt"
    assert tags["jaxatari.env_id"] == "gymnax:CartPole-v1"
    assert tags["git_sha"] == str(record["git_sha"])
    assert tags["package.jax"] == record["packages"]["jax"]
    params = parent.data.params
    assert params["options.members"] == "8"
    assert params["configs.pbt.ready_updates"] == "250"
    assert params["space.learning_rate.kind"] == "log_uniform"
    for generation in (1, 2):
        scores = [x["score"] for x in lines if x["generation"] == generation]
        assert (generation, pytest.approx(max(scores))) in _history(
            client, parent, "population/best_score")
    assert parent.data.metrics["summary/best_score"] == pytest.approx(
        record["summary"]["best_score"])
    assert sorted(children) == [f"member_{m:03d}" for m in range(8)]
    for member in range(8):
        child = children[f"member_{member:03d}"]
        own = [x for x in lines if x["member"] == member]
        assert child.info.status == "FINISHED"
        assert child.data.params["hparams.learning_rate"] == str(
            own[0]["hparams"]["learning_rate"])
        assert _history(client, child, "score") == [
            (x["generation"], x["score"]) for x in own]
        assert _history(client, child, "hparams/learning_rate") == [
            (x["generation"], x["hparams"]["learning_rate"]) for x in own]
        assert _history(client, child, "replaced") == [
            (x["generation"], float(x["replaced"])) for x in own]


def test_logging_again_after_the_fact_replaces_the_runs(logged):
    _, first, _ = _runs(logged)
    run_id = reports.log_to_mlflow(logged)
    _, parent, children = _runs(logged)
    assert parent.info.run_id == run_id != first.info.run_id
    assert len(children) == 8


def test_a_sweep_logs_to_another_store_and_experiment(logged, tmp_path):
    from mlflow import MlflowClient
    uri = f"sqlite:///{tmp_path / 'other.db'}"
    run_id = reports.log_to_mlflow(logged, uri, experiment="mine")
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("mine")
    children = client.search_runs([experiment.experiment_id],
                                  f"tags.mlflow.parentRunId = '{run_id}'")
    assert len(children) == 8


@pytest.mark.parametrize("missing", ["mlflow", "alembic"])
def test_without_mlflow_the_sweep_refuses_before_it_starts(
        tmp_path, monkeypatch, missing):
    if missing != "mlflow":
        pytest.importorskip("mlflow")
    monkeypatch.setitem(sys.modules, missing, None)
    with pytest.raises(SystemExit, match=(
            rf"needs the Python package '{missing}'.*"
            r"pip install 'jaxatari\[mlflow\]'")):
        sweep.main([*ARGV, "--out", str(tmp_path / "s"), "--mlflow"])
    assert not (tmp_path / "s").exists()


def test_log_to_mlflow_needs_a_sweep_directory(tmp_path):
    with pytest.raises(ValueError, match="no record.json"):
        reports.log_to_mlflow(tmp_path)


def test_mlflow_values_flatten_as_params_and_metrics():
    assert reports._flatten({"a": {"b": 1, "c": [1, 2]}}) == {
        "a.b": "1", "a.c": "[1, 2]"}
    line = {"generation": 3, "member": 1, "score": None, "replaced": True,
            "hparams": {"learning_rate": 1e-3}}
    assert reports._numbers(line, 3) == [
        ("replaced", 1.0, 3), ("hparams/learning_rate", 1e-3, 3)]
