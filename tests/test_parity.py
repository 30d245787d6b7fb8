"""The parity tool's own machinery: resuming a run from its checkpoint
gives the run it would have been, and saved results are read back as the
table needs them (one per game and seed)."""
import shutil

import jax
import numpy as np
import pytest

from jaxatari import environment, lockstep, parity

pytest.importorskip("ale_py")

GAME, SEED = "pong", 0
HALF, WHOLE = 12, 24


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """The same run made in one go, and in two sittings at other commits
    (the first sitting beside the one-go run, in one lock-step batch)."""
    root = tmp_path_factory.mktemp("checkpoints")
    whole = parity.Checkpoints(root / "whole", WHOLE, "one-go")
    resumed = parity.Checkpoints(root / "resumed", HALF, "first")
    env = environment.AtariEnv(GAME)
    one_go, first = lockstep.Lockstep([env, env]).run([
        parity._script(GAME, WHOLE, SEED, None, 0, whole),
        parity._script(GAME, HALF, SEED, None, 0, resumed)])
    shutil.copytree(resumed.directory, root / "halfway")
    second = parity.run_many([(GAME, SEED)], WHOLE,
                             checkpoints=resumed._replace(commit="second"))[0]
    return {"first": first, "second": second, "one_go": one_go,
            "whole": whole, "resumed": resumed,
            "halfway": parity.Checkpoints(root / "halfway")}


def test_resumed_run_ends_in_the_same_state(runs):
    ours = runs["resumed"].load(GAME, SEED, ".pkl")
    straight = runs["whole"].load(GAME, SEED, ".pkl")
    assert ours["step"] == straight["step"] == WHOLE
    for key in straight["console"]:
        jax.tree.map(np.testing.assert_array_equal, ours["console"][key],
                     straight["console"][key])


def test_resumed_result_names_both_segments(runs):
    assert runs["first"]["steps"] == HALF
    second, one_go = runs["second"], runs["one_go"]
    assert second["first_divergence"] is one_go["first_divergence"] is None
    assert (second["steps"], second["resets"]) == (WHOLE, one_go["resets"])
    assert second["commits"] == ["first", "second"]


def test_a_finished_run_is_not_run_again(runs):
    again = parity.run_many([(GAME, SEED)], HALF, checkpoints=runs["whole"])
    assert again[0] == runs["one_go"]


def test_checkpoint_results_lists_runs_in_progress(runs):
    (runs["halfway"].directory / f"{GAME}_seed{SEED}.json").unlink()
    [result] = parity.checkpoint_results(runs["halfway"].directory)
    assert result["in_progress"] and result["steps"] == HALF
    assert result["commits"] == ["first"]
    table = parity.markdown_table([result], {GAME: "2K"})
    assert f"identical: {HALF} frames so far, seeds {SEED}" in table


def test_latest_per_run_keeps_the_longest_or_a_divergence():
    run = lambda seed, steps, divergence=None: {
        "game": GAME, "seed": seed, "steps": steps,
        "first_divergence": divergence}
    kept = parity.latest_per_run([run(0, 300), run(0, 5000), run(1, 5000),
                                  run(1, 300, 120), run(2, 300)])
    assert sorted((r["seed"], r["steps"], r["first_divergence"])
                  for r in kept) == [(0, 5000, None), (1, 300, 120),
                                     (2, 300, None)]
