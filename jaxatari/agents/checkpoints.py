"""Training checkpoints with orbax: a whole state pytree, atomically.

A checkpoint holds everything an update reads (parameters, optimiser
state, hyperparameters, the PRNG key as raw key data, the envs' states and
observations, the episode counters), so a run resumed from one in a new
process continues bit for bit as the uninterrupted run would have. orbax
writes each step to a temporary directory and renames it when complete:
a run killed mid-save leaves the previous checkpoint as the latest.
"""
from __future__ import annotations

import pathlib
from typing import Any

import jax
import orbax.checkpoint as ocp



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
