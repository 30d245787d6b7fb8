"""Training checkpoints with orbax: a whole state pytree, atomically.

A checkpoint holds everything an update reads (parameters, optimiser
state, hyperparameters, the PRNG key as raw key data, the envs' states and
observations, the episode counters), so a run resumed from one in a new
process continues bit for bit as the uninterrupted run would have. orbax
writes each step to a temporary directory and renames it when complete:
a run killed mid-save leaves the previous checkpoint as the latest.

`save_learned` and `load_learned` keep the part of an agent that training
learns (parameters, optimiser state, an algorithm's own state such as
GA3C's lagged parameters) without the envs, as one `.npz` file a part: a
few MB for the Nature CNN, whatever the number of envs, where a
checkpoint holds every env's console (about 135 KB each on Atari). A new
run starts from it with `jaxatari train --init-from`.
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp

LEARNED_PARTS = ("params", "opt_state", "extra")
"""The fields of an `AgentState` that `save_learned` keeps."""


def is_key(x: Any) -> bool:
    """Whether `x` is an array of typed PRNG keys."""
    return jax.dtypes.issubdtype(getattr(x, "dtype", None),
                                 jax.dtypes.prng_key)


def keys_as_data(tree: Any) -> Any:
    """PRNG keys (anywhere in the tree) as their raw key data."""
    return jax.tree.map(
        lambda x: jax.random.key_data(x) if is_key(x) else x, tree)


def keys_from_data(saved: Any, like: Any) -> Any:
    """Key data back into keys where `like` holds keys."""
    return jax.tree.map(
        lambda x, template: (jax.random.wrap_key_data(
            x, impl=jax.random.key_impl(template))
            if is_key(template) else x), saved, like)


class Checkpoints:
    """`DIR/checkpoints/<step>/`, the last `keep` of them.

    Args:
        directory: where the steps go (made if missing).
        keep: how many recent checkpoints to keep.
    """

    def __init__(self, directory: str | pathlib.Path, keep: int = 3):
        self.directory = pathlib.Path(directory).absolute()
        self.manager = ocp.CheckpointManager(
            self.directory,
            options=ocp.CheckpointManagerOptions(max_to_keep=keep,
                                                 create=True))

    def save(self, update: int, state: Any, meta: dict[str, Any]) -> None:
        """Saves `state` (an `AgentState`, or any pytree of arrays and
        PRNG keys) and JSON `meta` as step `update`; waits until it is on
        disk."""
        self.manager.save(update, args=ocp.args.Composite(
            state=ocp.args.StandardSave(keys_as_data(state)),
            meta=ocp.args.JsonSave(meta)))
        self.manager.wait_until_finished()

    def latest(self) -> int | None:
        """The newest complete step, or None."""
        return self.manager.latest_step()

    def restore(self, update: int, like: Any) -> tuple[Any, dict[str, Any]]:
        """Step `update`, shaped as `like` (a state of the same agent,
        e.g. a fresh `init`); returns (state, meta)."""
        abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct,
                                keys_as_data(like))
        restored = self.manager.restore(update, args=ocp.args.Composite(
            state=ocp.args.StandardRestore(abstract),
            meta=ocp.args.JsonRestore()))
        return keys_from_data(restored["state"], like), restored["meta"]

    def close(self) -> None:
        self.manager.close()


def _leaf_arrays(tree: Any) -> dict[str, np.ndarray]:
    """A pytree's leaves by their key paths (`jax.tree_util.keystr`)."""
    return {jax.tree_util.keystr(path): np.asarray(leaf) for path, leaf
            in jax.tree_util.tree_flatten_with_path(tree)[0]}


def save_learned(directory: str | pathlib.Path, state: Any,
                 meta: dict[str, Any]) -> pathlib.Path:
    """Writes `state`'s `LEARNED_PARTS` to `directory` (`<part>.npz` each,
    and `meta` as `learned.json`), replacing what was there as a whole:
    the files are written beside it first, so a kill mid-save leaves the
    old directory or the new one, not a mix (the old one as
    `<directory>.old` if the kill fell between the two renames, where
    `load_learned` finds it)."""
    directory = pathlib.Path(directory)
    partial = directory.with_name(directory.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    arrays = learned_arrays(state)
    for name, leaves in arrays.items():
        np.savez(partial / f"{name}.npz", **leaves)
    (partial / "learned.json").write_text(json.dumps(
        {**meta, "parts": list(arrays)}, indent=1, default=str))
    old = directory.with_name(directory.name + ".old")
    if directory.exists():
        os.replace(directory, old)
    os.replace(partial, directory)
    shutil.rmtree(old, ignore_errors=True)
    return directory


def learned_arrays(state: Any) -> dict[str, dict[str, np.ndarray]]:
    """`state`'s `LEARNED_PARTS` (those not None) as arrays by key path."""
    return {name: _leaf_arrays(jax.device_get(getattr(state, name)))
            for name in LEARNED_PARTS if getattr(state, name) is not None}


def _restored_part(saved: dict[str, np.ndarray], like: Any,
                   name: str) -> Any:
    """`like`'s leaves replaced by `saved`'s, which must have the same
    paths, shapes and dtypes."""
    wanted = _leaf_arrays(like)
    if set(saved) != set(wanted):
        differing = sorted(set(saved) ^ set(wanted))[:3]
        raise ValueError(f"{name}: the saved agent's structure differs "
                         f"from this run's (first differing leaves: "
                         f"{differing})")
    for path, want in wanted.items():
        got = saved[path]
        if got.shape != want.shape or got.dtype != want.dtype:
            raise ValueError(
                f"{name}{path}: saved {got.dtype}{list(got.shape)}, this "
                f"run's {want.dtype}{list(want.shape)}")
    return jax.tree.unflatten(jax.tree.structure(like), [
        jax.numpy.asarray(saved[path]) for path in wanted])


def with_learned(like: Any, arrays: dict[str, dict[str, np.ndarray]]
                 ) -> Any:
    """`like` (an `AgentState`) with its `LEARNED_PARTS` taken from
    `arrays` (`learned_arrays`' form).

    Raises:
        ValueError: a part present on one side only, or leaves whose
            paths, shapes or dtypes differ from `like`'s (another network,
            action count, optimiser or GA3C lag), naming the first.
    """
    replaced = {}
    for name in LEARNED_PARTS:
        template = getattr(like, name)
        if (template is None) != (name not in arrays):
            saved, this = ("one", "none") if template is None else (
                "none", "one")
            raise ValueError(f"{name}: the saved agent has {saved} and "
                             f"this run's agent has {this} (another "
                             f"algorithm, or another GA3C lag)")
        if template is not None:
            replaced[name] = _restored_part(arrays[name], template, name)
    return like.replace(**replaced)


def load_learned(directory: str | pathlib.Path, like: Any
                 ) -> tuple[Any, dict[str, Any]]:
    """`like` with its `LEARNED_PARTS` read from a `save_learned`
    directory (`with_learned`); returns (state, the `meta` it was saved
    with).

    Raises:
        ValueError: no saved agent in `directory`, or one that does not
            fit `like` (see `with_learned`).
    """
    directory = pathlib.Path(directory)
    old = directory.with_name(directory.name + ".old")
    if not (directory / "learned.json").exists() and (
            old / "learned.json").exists():
        directory = old
    if not (directory / "learned.json").exists():
        raise ValueError(f"{directory} holds no saved agent "
                         f"(learned.json is missing)")
    meta = json.loads((directory / "learned.json").read_text())
    arrays = {}
    for name in meta.pop("parts"):
        with np.load(directory / f"{name}.npz") as saved:
            arrays[name] = dict(saved)
    return with_learned(like, arrays), meta
