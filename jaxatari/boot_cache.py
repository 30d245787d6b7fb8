"""A disk cache of the states a game boots to, so that `make` starts at once.

`AtariEnv.boot` plays ALE's `loadROM()` and `reset_game()` calls on the
host, frame by frame, which takes seconds to a minute a game, and
`AtariPreprocessing.make_params` then plays the NOOP (and FIRE) start
frames after each reset (most of `make_atari`'s time once the boot is
stored). Both are deterministic, so their states are kept on disk, under
`_config.cache_dir() / "boot"`
(`$XDG_CACHE_HOME/jaxatari/boot`, by default `~/.cache/jaxatari/boot`), and
a later process loads it instead. `JAXATARI_BOOT_CACHE=0` turns the cache
off (nothing is read or written).

An entry is a numpy `.npz` file (no pickles): each leaf of the states'
pytree, stacked over the states, plus the key and the pytree's structure
as text. The key is everything the boot depends on: the game, the ROM's
md5, mode, difficulty, seed settings, the board's features, the versions
of jaxatari, JAX and jaxlib, and a digest of jaxatari's own source (so a
changed emulator never loads the boots of an older one, version bump or
not), and a frame's instruction cap (`console.INSTRUCTIONS_PER_UPDATE`,
which a test may lower: a boot under another cap is another game's
states). The file's name is a digest of the key and the file holds the key:
a file whose key, structure, shapes or dtypes differ is not used. Entries
are written to a temporary file in the same directory and renamed into
place (`os.replace`), so a crash or two writers at once (pytest-xdist)
leave either a whole entry or none; an unreadable one is rebuilt, with a
warning.

Only games of the registry (`jaxatari.games`) are cached: rules made at
run time (`make_from_rom`, your own `GameRules`) carry functions whose
code the key cannot name.
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import json
import os
import pathlib
import tempfile
import warnings
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
import jaxlib
import numpy as np

from jaxatari import (_config, console, games, lowering, reset_carry,
                      system_rng)

if TYPE_CHECKING:
    from jaxatari.environment import AtariEnv, EnvState

ENV_VAR = "JAXATARI_BOOT_CACHE"
"""Set to 0 (or false, no, off) to turn the cache off."""
FORMAT = 1
"""The layout of an entry; part of the key."""
_UNREADABLE = (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile,
               zlib.error)


def enabled() -> bool:
    """Whether the cache is on (`JAXATARI_BOOT_CACHE` is not 0)."""
    value = os.environ.get(ENV_VAR, "1").strip().lower()
    return value not in ("0", "false", "no", "off")


def directory() -> pathlib.Path:
    """Where the entries live: `_config.cache_dir() / "boot"`."""
    return _config.cache_dir() / "boot"


DIGESTED = ("jaxatari.environment", "jaxatari.wrappers")
"""The modules whose code (with every jaxatari module they import, at any
depth) plays a boot or the start frames: `source_digest` covers them, and
no other module (the CLI, the agents) invalidates the cache."""


@functools.cache
def source_digest() -> str:
    """sha256 of the source of `DIGESTED` and the jaxatari modules they
    import, transitively: any change to the code that boots makes new
    keys, with or without a version bump."""
    digest = hashlib.sha256()
    for name, path in sorted(_import_closure(DIGESTED).items()):
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _import_closure(roots: Sequence[str]) -> dict[str, pathlib.Path]:
    """The jaxatari modules `roots` import, at any depth (and themselves),
    with their source files; read from the source, nothing is imported."""
    found: dict[str, pathlib.Path] = {}
    pending = list(roots)
    while pending:
        name = pending.pop()
        path = _source_file(name)
        if name in found or path is None:
            continue
        found[name] = path
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.Import):
                pending += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                pending += [node.module] + [f"{node.module}.{alias.name}"
                                            for alias in node.names]
    return found


def _source_file(name: str) -> pathlib.Path | None:
    """The file of jaxatari module `name` (a package's `__init__.py`), or
    None for other modules and for names that are not modules."""
    parts = name.split(".")
    if parts[0] != "jaxatari":
        return None
    base = pathlib.Path(__file__).parent.joinpath(*parts[1:])
    files = [base / "__init__.py"]
    if len(parts) > 1:
        files.insert(0, base.with_name(f"{base.name}.py"))
    return next((path for path in files if path.is_file()), None)


def versions() -> dict[str, str]:
    """The versions, source digest and instruction cap every key holds.

    The cap (`console.INSTRUCTIONS_PER_UPDATE`) is read at each call: a
    process that changes it (a test cutting frames short) boots to other
    states, and must not hand them to a later process under the same key.
    """
    import jaxatari   # the package, initialised by the time a boot runs
    from jaxatari import console
    return {"format": str(FORMAT), "jaxatari": jaxatari.__version__,
            "jax": jax.__version__, "jaxlib": jaxlib.__version__,
            "source": source_digest(),
            "instruction_cap": str(console.INSTRUCTIONS_PER_UPDATE)}


@dataclasses.dataclass(frozen=True)
class Stored:
    """What an entry holds: states as numpy leaves stacked over the states.

    Attributes:
        leaves: each leaf of the states' pytree, with a leading axis.
        treedef: the pytree structure of one state.
        meta: the integers stored beside the states.
    """
    leaves: list[np.ndarray]
    treedef: Any
    meta: dict[str, int]

    def states(self) -> list[Any]:
        """The states, one pytree each, of JAX arrays."""
        return [self.treedef.unflatten([jnp.asarray(leaf[k])
                                        for leaf in self.leaves])
                for k in range(len(self.leaves[0]))]

    def stacked(self) -> Any:
        """The states as one pytree with a leading axis, of JAX arrays."""
        return self.treedef.unflatten([jnp.asarray(leaf)
                                       for leaf in self.leaves])


@dataclasses.dataclass(frozen=True)
class Entry:
    """One cache file and the key it must hold.

    Attributes:
        path: the `.npz` file.
        key: the key as canonical JSON.
    """
    path: pathlib.Path
    key: str

    def load(self, template: Callable[[Mapping[str, int]], Any]
             ) -> Stored | None:
        """The states stored, or None when there are none usable.

        Args:
            template: from the stored integers (`save`'s `meta`), a pytree
                of the structure, shapes and dtypes of one state (e.g.
                `jax.eval_shape` of a function that makes one).

        Returns:
            The stored states, or None for a missing file and, with a
            warning, for one that is unreadable or does not fit.
        """
        if not self.path.is_file():
            return None
        try:
            with np.load(self.path, allow_pickle=False) as data:
                return _unpack(data, self.key, template)
        except _UNREADABLE as error:
            warnings.warn(f"jaxatari: ignoring the boot cache entry "
                          f"{self.path} ({type(error).__name__}: {error});"
                          " it will be rebuilt", stacklevel=2)
            return None

    def save(self, states: Sequence[Any], meta: Mapping[str, int]) -> None:
        """Writes `states` (pytrees of one structure) and `meta`, atomically.

        A failure to write (a read-only disk, ...) only warns: the cache
        is an optimisation.
        """
        arrays = _pack(states, self.key, meta)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _write_atomically(self.path, arrays)
        except OSError as error:
            warnings.warn(f"jaxatari: could not write the boot cache entry "
                          f"{self.path} ({error})", stacklevel=2)


def entry(label: str, key: Mapping[str, Any]) -> Entry | None:
    """The entry for `key` (plus `versions()`), or None with the cache off.

    Args:
        label: a readable prefix of the file name (e.g. "pong-m0-d0").
        key: the values that decide the stored states: JSON's, or
            numpy or JAX numbers and arrays.
    """
    if not enabled():
        return None
    text = json.dumps({**key, **versions()}, sort_keys=True,
                      default=lambda value: np.asarray(value).tolist())
    name = f"{label}-{hashlib.sha256(text.encode()).hexdigest()[:32]}.npz"
    return Entry(directory() / name, text)


def _pack(states: Sequence[Any], key: str,
          meta: Mapping[str, int]) -> dict[str, np.ndarray]:
    """The arrays of an entry: each leaf stacked over the states."""
    treedef = jax.tree.structure(states[0])
    per_state = [treedef.flatten_up_to(state) for state in states]
    arrays = {f"leaf_{i}": np.stack([np.asarray(leaves[i])
                                     for leaves in per_state])
              for i in range(treedef.num_leaves)}
    arrays["key"] = np.asarray(key)
    arrays["treedef"] = np.asarray(str(treedef))
    arrays.update({f"meta_{name}": np.asarray(value, np.int64)
                   for name, value in meta.items()})
    return arrays


def _unpack(data: Mapping[str, np.ndarray], key: str,
            template: Callable[[Mapping[str, int]], Any]) -> Stored:
    """`_pack`'s arrays back, checked against the key and `template`.

    Raises:
        ValueError: another key, structure, leaf count, shape or dtype.
    """
    if str(data["key"]) != key:
        raise ValueError("the file holds another key")
    meta = {name[len("meta_"):]: int(data[name]) for name in data
            if name.startswith("meta_")}
    shapes, treedef = jax.tree.flatten(template(meta))
    if str(data["treedef"]) != str(treedef):
        raise ValueError("the states' structure has changed")
    if sum(name.startswith("leaf_") for name in data) != len(shapes):
        raise ValueError("the leaf count has changed")
    leaves = [data[f"leaf_{i}"] for i in range(len(shapes))]
    count = len(leaves[0])
    for leaf, shape in zip(leaves, shapes):
        if leaf.shape != (count, *shape.shape) or leaf.dtype != shape.dtype:
            raise ValueError(f"a leaf is {leaf.dtype}{list(leaf.shape)}, "
                             f"not {shape.dtype}{[count, *shape.shape]}")
    return Stored(leaves, treedef, meta)


def _write_atomically(path: pathlib.Path,
                      arrays: Mapping[str, np.ndarray]) -> None:
    """np.savez_compressed into a temporary file beside `path`, then
    `os.replace`: readers see the old entry or the whole new one."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-",
                                         suffix=".npz")
    try:
        with os.fdopen(handle, "wb") as file:
            np.savez_compressed(file, **arrays)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o644)   # mkstemp's is 0o600
        os.replace(temporary, path)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------- the boot


def _boot_key(env: AtariEnv, mode: int, difficulty: int
              ) -> dict[str, Any] | None:
    """What `env.boot(mode, difficulty)` depends on beyond `versions()`,
    or None for rules that are not the registry's."""
    rules = env.rules
    if games.GAMES.get(rules.rom_id) is not rules:
        return None
    return {"game": rules.rom_id, "md5": env.cart.md5, "mode": mode,
            "difficulty": difficulty,
            "num_reset_states": env.num_reset_states,
            "random_seed": env.random_seed,
            "features": list(env.board.features)}


def boot_entry(env: AtariEnv, mode: int, difficulty: int) -> Entry | None:
    """The entry of `env.boot(mode, difficulty)`'s states (keyed by the
    board before the boot), or None: the cache is off, or the env's rules
    are not the registry's."""
    key = _boot_key(env, mode, difficulty)
    label = f"{env.rules.rom_id}-m{mode}-d{difficulty}"
    return entry(label, {"kind": "boot", **key}) if key else None


def cached_boot(env: AtariEnv, mode: int, difficulty: int,
                boot: Callable[[int, int], list[EnvState]]
                ) -> tuple[list[EnvState], console.Board]:
    """`boot(mode, difficulty)`'s states, from the disk when stored there,
    else booted and stored; and the board they were booted on (the boot
    refits `env.board` to the format ALE detects).

    Args:
        env: the env to boot (`env.board` is the board before the boot).
        mode, difficulty: ALE's settings, checked already.
        boot: `env._boot`, which emulates.
    """
    stored = boot_entry(env, mode, difficulty)   # keyed before any refit
    loaded = (stored.load(functools.partial(_state_template, env))
              if stored else None)
    if loaded is not None:
        return loaded.states(), _board_with_rows(env.board,
                                                 loaded.meta["rows"])
    states = lowering.on_host(lambda: boot(mode, difficulty))
    if stored:
        stored.save(states, {"rows": env.board.features.rows})
    return states, env.board


def cached_starts(env: AtariEnv, mode: int, difficulty: int,
                  settings: Mapping[str, Any],
                  play: Callable[[], list[EnvState]]) -> EnvState:
    """The start states `AtariPreprocessing.make_params` plays after the
    booted resets, stacked: from the disk when stored there, else played
    and stored.

    Args:
        env: the env, booted for `mode` and `difficulty` already.
        mode, difficulty: ALE's settings of the resets.
        settings: JSON values that decide the start frames beyond the
            boot (the NOOP draws, FIRE, the episode's frame limit).
        play: plays the start frames, returning their states in order.
    """
    key = _boot_key(env, mode, difficulty)
    label = f"{env.rules.rom_id}-m{mode}-d{difficulty}-starts"
    stored = (entry(label, {"kind": "starts", **key, **settings})
              if key else None)
    loaded = (stored.load(functools.partial(_state_template, env))
              if stored else None)
    if loaded is not None:
        return loaded.stacked()
    states = lowering.on_host(play)
    if stored:
        stored.save(states, {"rows": env.board.features.rows})
    return stack(states)


def cached_scripts(env: AtariEnv, mode: int, difficulty: int,
                   find: Callable[[], Any]) -> Any:
    """The booted resets' `reset_carry.ResetScript`s (stacked), or None
    for a game whose reset does not depend on the console it resets:
    from the disk when stored there, else found and stored.

    Args:
        env: the env, booted for `mode` and `difficulty` already.
        mode, difficulty: ALE's settings of the resets.
        find: `env._reset_scripts` for them, which emulates.
    """
    key = _boot_key(env, mode, difficulty)
    label = f"{env.rules.rom_id}-m{mode}-d{difficulty}-scripts"
    stored = entry(label, {"kind": "scripts", **key}) if key else None
    loaded = stored.load(_script_template) if stored else None
    if loaded is not None:
        return loaded.stacked() if loaded.meta["replayed"] else None
    scripts = lowering.on_host(find)
    if stored:
        if scripts is None:
            stored.save([np.zeros((), np.int8)], {"replayed": 0})
        else:
            count = len(jax.tree.leaves(scripts)[0])
            stored.save([jax.tree.map(lambda x, k=k: x[k], scripts)
                         for k in range(count)],
                        {"replayed": 1, "length": len(scripts.actions[0]),
                         "presses": scripts.presses})
    return scripts


def _script_template(meta: Mapping[str, int]) -> Any:
    """The shapes of one entry of `cached_scripts`."""
    if not meta["replayed"]:
        return jax.ShapeDtypeStruct((), np.int8)
    length = meta["length"]
    return jax.eval_shape(lambda: reset_carry.ResetScript(
        system_rng.reset_inputs(3), *(jnp.zeros(length, dtype) for dtype in
                                      (jnp.int32, jnp.int32, bool, bool)),
        jnp.zeros(length + 1, bool), jnp.int32(0), jnp.int32(0),
        meta["presses"]))


def stack(states: Sequence[EnvState]) -> EnvState:
    """States stacked on a new leading axis, on the host: one copy, no
    program compiled per leaf shape (as `jnp.stack` would)."""
    return jax.tree.map(lambda *leaves: jnp.asarray(np.stack(leaves)),
                        *states)


def _board_with_rows(board: console.Board, rows: int) -> console.Board:
    """`board` with `rows` screen rows (as the boot's PAL refit)."""
    if board.features.rows == rows:
        return board
    return board.replace(features=board.features._replace(rows=rows))


def _state_template(env: AtariEnv, meta: Mapping[str, int]) -> Any:
    """The shapes of a state of `env` on a board of `meta["rows"]` rows."""
    board = _board_with_rows(env.board, meta["rows"])
    return jax.eval_shape(
        lambda: env.initial_state().replace(
            machine=console.power_on(board)))
