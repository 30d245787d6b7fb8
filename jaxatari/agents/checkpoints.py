"""Training checkpoints with orbax: the whole `AgentState`, atomically.

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

from jaxatari.agents.core import AgentState


def _to_saved(state: AgentState) -> AgentState:
    return state.replace(key=jax.random.key_data(state.key))


def _from_saved(saved: AgentState, like: AgentState) -> AgentState:
    return saved.replace(key=jax.random.wrap_key_data(
        saved.key, impl=jax.random.key_impl(like.key)))


class Checkpoints:
    """`DIR/checkpoints/<update>/`, the last `keep` of them.

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

    def save(self, update: int, state: AgentState,
             meta: dict[str, Any]) -> None:
        """Saves `state` (and JSON `meta`) as step `update`; waits until
        it is on disk."""
        self.manager.save(update, args=ocp.args.Composite(
            state=ocp.args.StandardSave(_to_saved(state)),
            meta=ocp.args.JsonSave(meta)))
        self.manager.wait_until_finished()

    def latest(self) -> int | None:
        """The newest complete step, or None."""
        return self.manager.latest_step()

    def restore(self, update: int, like: AgentState
                ) -> tuple[AgentState, dict[str, Any]]:
        """Step `update`, shaped as `like` (a state of the same agent,
        e.g. a fresh `init`); returns (state, meta)."""
        abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct,
                                _to_saved(like))
        restored = self.manager.restore(update, args=ocp.args.Composite(
            state=ocp.args.StandardRestore(abstract),
            meta=ocp.args.JsonRestore()))
        return _from_saved(restored["state"], like), restored["meta"]

    def close(self) -> None:
        self.manager.close()
