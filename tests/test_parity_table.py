"""`benchmarks/parity_table.py`'s commit order: which of two runs alike in
all else PARITY.md shows (`parity.latest_per_run` with `_descends`)."""
from __future__ import annotations

import importlib.util
import pathlib
import subprocess

import pytest

from jaxatari import parity

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "parity_table", ROOT / "benchmarks" / "parity_table.py")
parity_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(parity_table)


@pytest.fixture
def commits(monkeypatch) -> tuple[str, str]:
    """This repository's last commit and the one before it."""
    monkeypatch.chdir(ROOT)
    found = [subprocess.run(["git", "rev-parse", "--short", rev],
                            capture_output=True, text=True, check=False)
             for rev in ("HEAD~1", "HEAD")]
    if any(f.returncode for f in found):
        pytest.skip("needs a git checkout with two commits")
    return tuple(f.stdout.strip() for f in found)


def test_a_dirty_earlier_commit_counts_as_its_commit(commits):
    parent, head = commits
    descends = parity_table._descends
    assert descends(parent, head) and descends(f"{parent}-dirty", head)
    assert descends(f"{head}-dirty", head)
    assert descends(f"x+{parent}-dirty", f"y+{head}")   # a run's last
    assert not descends(head, parent)
    assert not descends(parent, f"{head}-dirty")
    assert not descends("pre-fd55cd5", head)


def test_a_game_run_again_shows_its_new_commit(commits):
    parent, head = commits
    run = lambda commit: {"game": "pong", "seed": 0, "steps": 10_000,
                          "driver": "user", "first_divergence": None,
                          "commit": commit}
    old, new = run(f"{parent}-dirty"), run(head)
    for order in ([old, new], [new, old]):
        assert parity.latest_per_run(order, parity_table._descends) == [new]
