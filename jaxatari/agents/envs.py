"""Env ids for the agents: a jaxatari game, or `gymnax:<id>`.

`make_env("pong", num_envs)` is jaxatari's `make_atari` preset (ale-py's
`AtariVectorEnv` defaults: frameskip 4, 84x84 gray, a stack of 4, FIRE and
NOOP starts, clipped rewards with `info["unclipped_reward"]`, and
`info["life_lost"]`). `make_env("gymnax:CartPole-v1")` is
`gymnax.make("CartPole-v1")`; gymnax is a dependency of the agents, not of
the emulator. Unknown ids raise a `ValueError` that lists the choices,
before anything is booted or compiled.
"""
from __future__ import annotations

import difflib
from typing import Any

GYMNAX_PREFIX = "gymnax:"


def gymnax_ids() -> list[str]:
    """The gymnax envs with a discrete action space that the agents can
    train on (gymnax's registry, less the continuous-control ones)."""
    import gymnax
    continuous = {"Pendulum-v1", "MountainCarContinuous-v0", "Reacher-misc",
                  "Swimmer-misc", "PointRobot-misc"}
    return [name for name in gymnax.registered_envs
            if name not in continuous]


def env_ids() -> list[str]:
    """Every id `make_env` takes: jaxatari's games and `gymnax:<id>`."""
    from jaxatari import games
    return games.list_games() + [GYMNAX_PREFIX + n for n in gymnax_ids()]


def make_env(env_id: str, num_envs: int = 1, **atari_kwargs: Any
             ) -> tuple[Any, Any]:
    """The env and its params for an id.

    Args:
        env_id: a jaxatari game id ("pong", "ALE/Pong-v5", ...) or
            "gymnax:<id>" ("gymnax:Breakout-MinAtar").
        num_envs: the batch for the Atari preset (the agents batch any env
            themselves, so this only sizes `make_atari`'s `VecEnv`).
        **atari_kwargs: `jaxatari.make_atari` arguments (Atari only).

    Raises:
        ValueError: an unknown id (the message lists the choices and the
            nearest ids).
    """
    if env_id.startswith(GYMNAX_PREFIX):
        name = env_id[len(GYMNAX_PREFIX):]
        known = gymnax_ids()
        if name not in known:
            raise ValueError(_unknown(env_id, known, GYMNAX_PREFIX))
        if atari_kwargs:
            raise ValueError(f"{sorted(atari_kwargs)} are Atari settings; "
                             f"{env_id} takes none")
        import gymnax
        return gymnax.make(name)
    import jaxatari
    from jaxatari import games
    try:
        games.lookup(env_id)
    except ValueError as error:
        raise ValueError(f"{error} For a gymnax env, write gymnax:<id>, "
                         f"one of: {', '.join(gymnax_ids())}.") from None
    return jaxatari.make_atari(env_id, num_envs, **atari_kwargs)


def unbatched(env: Any) -> Any:
    """The single env inside a jaxatari `VecEnv` (the agents batch envs
    themselves, to their config's `num_envs`); any other env as it is."""
    if hasattr(env, "num_envs") and hasattr(env, "env"):
        return env.env
    return env


def atari_base(env: Any) -> Any | None:
    """The jaxatari `AtariEnv` under an env's wrappers, or None for an env
    that is not jaxatari's (a gymnax env)."""
    from jaxatari import environment
    while not isinstance(env, environment.AtariEnv):
        if "env" not in getattr(env, "__dict__", {}):
            return None
        env = env.env
    return env


def _unknown(env_id: str, known: list[str], prefix: str) -> str:
    close = difflib.get_close_matches(env_id[len(prefix):], known, n=3)
    hint = (f" Did you mean {' or '.join(prefix + c for c in close)}?"
            if close else "")
    return (f"unknown env {env_id!r}.{hint} Choose a jaxatari game "
            f"(jaxatari list) or one of: "
            f"{', '.join(prefix + k for k in known)}.")
