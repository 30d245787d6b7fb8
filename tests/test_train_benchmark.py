"""`benchmarks/train.py`'s `conv` and `random` modes, at toy sizes: the
lines they print and what those lines must say."""
from __future__ import annotations

import importlib.util
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "train_benchmark", ROOT / "benchmarks" / "train.py")
benchmark = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(benchmark)


def _lines(capsys, argv):
    benchmark.main(argv)
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_conv_times_both_convolutions_in_each_loop(capsys):
    lines = _lines(capsys, ["conv", "--batch", "2", "--steps", "2",
                            "--repeats", "1"])
    assert [(line["conv"], line["loop"]) for line in lines] == [
        (conv, loop) for conv in ("conv2d", "lax")
        for loop in ("plain", "scan", "unrolled")]
    for line in lines:
        assert line["gradients"] == (1 if line["loop"] == "plain" else 2)
        assert line["seconds"] > 0 and line["backend"] == "cpu"


def test_random_baseline_on_cartpole(capsys):
    (line,) = _lines(capsys, ["random", "--env", "gymnax:CartPole-v1",
                              "--num-envs", "8", "--steps", "200",
                              "--seeds", "0", "1"])
    assert line["benchmark"] == "random_policy" and line["seeds"] == [0, 1]
    # a random CartPole policy lasts about 22 steps (reward 1 a step)
    assert all(15 < r < 35 for r in line["mean_return"])
