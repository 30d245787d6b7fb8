"""The README's "Training agents" snippets run and do what they say."""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

README = pathlib.Path(__file__).parents[2] / "README.md"


def _snippets() -> list[str]:
    section = README.read_text().split("## Training agents")[1]
    return re.findall(r"```\n(.*?)```", section.split("\n## ")[0], re.S)


@pytest.fixture(scope="module")
def scope() -> dict:
    """The CartPole snippet's names, shared by the population snippet."""
    scope: dict = {}
    exec(compile(_snippets()[0], "README.md", "exec"), scope)
    return scope


def test_the_cartpole_snippet_learns(scope):
    returns = np.asarray(scope["metrics"]["episode_return"])
    assert np.nanmean(returns[-100:]) > 400


def test_the_population_snippet_trains_four_members(scope):
    exec(compile(_snippets()[1], "README.md", "exec"), scope)
    returns = np.asarray(scope["metrics"]["episode_return"])
    assert returns.shape == (4, scope["config"].num_updates)
    rates = np.asarray(scope["states"].hparams.learning_rate)
    np.testing.assert_allclose(rates, [1e-4, 3e-4, 1e-3, 3e-3], rtol=1e-6)


def test_the_command_lines_name_real_options():
    from jaxatari.agents import run
    commands = [line.split("#")[0].split() for line in
                _snippets()[3].splitlines() if line.startswith("jaxatari")]
    options = {a.option_strings[0] for a in run.parser()._actions
               if a.option_strings}
    for command in commands:
        if command[1] == "train":
            used = {w for w in command if w.startswith("--")}
            assert used <= options, used - options
            run.parser().parse_args(command[2:])
