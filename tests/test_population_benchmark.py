"""`benchmarks/population.py`'s HyperTrick comparison by configuration:
the retrain of a chosen configuration and the per-seed comparison."""
from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "population_benchmark", ROOT / "benchmarks" / "population.py")
benchmark = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(benchmark)


def _rows(seed, ht_return, rs_return, stderr, ht_frames, same=False):
    hparams = {"learning_rate": 0.01, "ent_coef": 0.001}
    other = hparams if same else {"learning_rate": 0.02, "ent_coef": 0.001}
    ht = {"method": "hypertrick", "seed": seed, "frames": ht_frames,
          "best_hparams": hparams, "config_return": ht_return,
          "config_stderr": stderr}
    rs = {"method": "random", "seed": seed, "frames": 100,
          "best_hparams": other, "config_return": rs_return,
          "config_stderr": stderr}
    return ht, rs


def test_configurations_compare_within_two_standard_errors():
    pairs = [_rows(0, 400.0, 400.0, 10.0, 60, same=True),   # same: as good
             _rows(1, 380.0, 400.0, 10.0, 60),   # -20 > -2*14.1: as good
             _rows(2, 300.0, 400.0, 10.0, 60),   # -100: not
             _rows(3, 450.0, 400.0, 10.0, 120)]  # better, more frames
    found = benchmark._compare_configurations(pairs)
    assert found["same_configuration"] == 1
    assert found["config_within_2se_or_better"] == 3
    assert found["config_as_good_fewer_frames"] == 2
    diffs = np.array([0.0, -20.0, -100.0, 50.0])
    assert found["config_difference"]["mean"] == pytest.approx(diffs.mean())
    assert found["config_difference"]["stderr"] == pytest.approx(
        diffs.std(ddof=1) / 2, abs=0.01)
    assert benchmark._compare_configurations(
        [({"method": "hypertrick"}, {"method": "random"})]) == {}


@pytest.mark.slow
def test_a_configuration_is_retrained_from_fresh_keys_reproducibly():
    learner = benchmark.agent(4)
    hparams = {"learning_rate": 3e-3, "ent_coef": 1e-3}
    first = benchmark.configuration_return(learner, hparams, 4, 0, 2)
    again = benchmark.configuration_return(learner, hparams, 4, 0, 2)
    assert first == again
    returns = first["config_returns"]
    assert len(returns) == 2 and all(0 < r <= 500 for r in returns)
    assert first["config_return"] == pytest.approx(np.mean(returns),
                                                   abs=0.01)
