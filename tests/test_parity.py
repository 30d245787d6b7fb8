"""The parity tool's own machinery, through the env users step (the
"user" driver): a run crosses a game over into ALE's next reset, resuming
from a checkpoint gives the run it would have been, and saved results are
read back as the table needs them (one per game and seed)."""
import gc
import shutil
import weakref

import jax
import numpy as np
import pytest

from jaxatari import parity

pytest.importorskip("ale_py")

# Road Runner's first game over under seed 0's random play is at frame 303
# (ALE alone), so a run of 320 frames compares the episode's last frame,
# ALE's reset after it and the env's reset state 1; the resumed run's
# checkpoint (160) is before it.
GAME, SEED = "road_runner", 0
HALF, WHOLE = 160, 320


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """The same run made in one go, and in two sittings at two commits."""
    root = tmp_path_factory.mktemp("checkpoints")
    whole = parity.Checkpoints(root / "whole", WHOLE, "one-go")
    resumed = parity.Checkpoints(root / "resumed", HALF, "first")
    [one_go] = parity.run_many([(GAME, SEED)], WHOLE, checkpoints=whole)
    [first] = parity.run_many([(GAME, SEED)], HALF, checkpoints=resumed)
    shutil.copytree(resumed.directory, root / "halfway")
    [second] = parity.run_many([(GAME, SEED)], WHOLE,
                               checkpoints=resumed._replace(commit="second"))
    return {"first": first, "second": second, "one_go": one_go,
            "whole": whole, "resumed": resumed,
            "halfway": parity.Checkpoints(root / "halfway")}


def test_a_run_through_a_game_over_is_identical(runs):
    one_go = runs["one_go"]
    assert one_go["first_divergence"] is None, one_go
    assert (one_go["steps"], one_go["resets"]) == (WHOLE, 1)
    assert one_go["driver"] == "user"


def test_resumed_run_ends_in_the_same_state(runs):
    ours = runs["resumed"].load(GAME, SEED, ".pkl")
    straight = runs["whole"].load(GAME, SEED, ".pkl")
    assert ours["step"] == straight["step"] == WHOLE
    jax.tree.map(np.testing.assert_array_equal, ours["state"],
                 straight["state"])


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
    table = parity.markdown_table([result], {GAME: "4K"})
    assert f"identical: {HALF} frames so far, seeds {SEED}" in table


def test_a_lock_step_snapshot_is_refused(tmp_path):
    checkpoints = parity.Checkpoints(tmp_path, 10, "old")
    checkpoints.save(GAME, SEED, ".pkl", {
        "step": 10, "resets": 0, "console": {}, "seconds": 1.0,
        "commits": ["old"]})
    with pytest.raises(ValueError, match="lock-step driver"):
        parity.run_many([(GAME, SEED)], 20, checkpoints=checkpoints)


def test_bad_driver_settings_are_refused(tmp_path):
    with pytest.raises(ValueError, match="choose one of"):
        parity.run_many([(GAME, SEED)], 1, driver="ale")
    with pytest.raises(ValueError, match="one sitting"):
        parity.run_many([(GAME, SEED)], 1, driver="lockstep",
                        checkpoints=parity.Checkpoints(tmp_path))


def test_latest_per_run_keeps_the_longest_or_a_divergence():
    run = lambda seed, steps, divergence=None: {
        "game": GAME, "seed": seed, "steps": steps,
        "first_divergence": divergence}
    kept = parity.latest_per_run([run(0, 300), run(0, 5000), run(1, 5000),
                                  run(1, 300, 120), run(2, 300)])
    assert sorted((r["seed"], r["steps"], r["first_divergence"])
                  for r in kept) == [(0, 5000, None), (1, 300, 120),
                                     (2, 300, None)]


def test_a_divergence_is_fixed_by_a_later_identical_run_past_it():
    run = lambda steps, divergence, commit, driver="user": {
        "game": GAME, "seed": 0, "steps": steps, "driver": driver,
        "first_divergence": divergence, "commit": commit}
    diverged = run(10_000, 3_601, "old")
    fixed = run(10_000, None, "new")
    descends = lambda a, b: (a, b) == ("old", "new")
    assert parity.latest_per_run([diverged, fixed]) == [diverged]
    assert parity.latest_per_run([diverged, fixed], descends) == [fixed]
    # not by an older commit, a run short of the divergence, or the other
    # driver
    for other in (run(10_000, None, "older"), run(3_000, None, "new"),
                  run(10_000, None, "new", "lockstep")):
        assert parity.latest_per_run([diverged, other], descends)[0] is \
            diverged


def test_a_run_as_long_at_a_later_commit_is_the_one_kept():
    run = lambda commit, driver="user", steps=10_000: {
        "game": GAME, "seed": 0, "steps": steps, "driver": driver,
        "first_divergence": None, "commit": commit}
    old, new = run("old"), run("new")
    descends = lambda a, b: (a, b) == ("old", "new")
    assert parity.latest_per_run([old, new], descends) == [new]
    assert parity.latest_per_run([new, old], descends) == [new]
    assert parity.latest_per_run([old, new]) == [old]   # order, unknown
    # not over a longer run, nor the lock-step screen over the user path
    for kept, other in ((run("old", steps=20_000), new),
                        (old, run("new", "lockstep"))):
        assert parity.latest_per_run([kept, other], descends) == [kept]


def test_the_user_path_outranks_the_lock_step_screen_at_equal_length():
    screen = {"game": GAME, "seed": 0, "steps": 10_000,
              "first_divergence": None, "resets": 0}   # before drivers
    user = dict(screen, driver="user")
    shorter = dict(user, steps=500)
    assert parity.latest_per_run([screen, user]) == [user]
    assert parity.latest_per_run([screen, shorter]) == [screen]
    table = parity.markdown_table([user], {GAME: "4K"})
    assert "identical: 10,000 frames, seeds 0 (user path)" in table


def test_each_games_results_are_reported_as_it_ends_and_let_go(
        monkeypatch):
    """`run_many` hands each game's results to `report` as soon as that
    game ends (the command line prints them then, so a failure later
    loses none), and lets a game's compiled programs go once the next
    game's are made (kept, a run of every game ran out of memory maps
    near its end)."""
    kept, reported = [], []
    made = parity.user_programs

    def recording(env):
        programs = made(env)
        kept.append(weakref.ref(programs.frames))
        return programs

    def report(results):
        reported.append([(r["game"], r["seed"]) for r in results])
        assert len(kept) == len(reported)   # before the next game starts

    monkeypatch.setattr(parity, "user_programs", recording)
    runs = [(GAME, SEED), ("journey_escape", 1)]
    results = parity.run_many(runs, 5, report=report)
    assert reported == [[run] for run in runs]
    assert [(r["game"], r["seed"]) for r in results] == runs
    assert all(r["first_divergence"] is None for r in results)
    gc.collect()
    assert kept[0]() is None, "the first game's programs are still kept"
