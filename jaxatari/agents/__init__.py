"""Actor-critic agents on the gymnax env interface: PPO, A2C and GA3C.

Each algorithm module has `make(config, env, env_params) -> Agent` (a pair
of pure functions, `init(key, hparams)` and `update(state)`) and
`make_train(config, env, env_params) -> train(key, hparams=None)`, the
whole run as one jittable function. They run on jaxatari's Atari envs
(`jaxatari.make_atari`) and on any gymnax env; the emulator never imports
them.
"""
from jaxatari.agents import a2c, core, ga3c, networks, ppo, returns
from jaxatari.agents.core import Agent, AgentState, HParams

ALGORITHMS = {"ppo": ppo, "a2c": a2c, "ga3c": ga3c}
"""The algorithm modules by name."""

CONFIGS = {"ppo": ppo.PPOConfig, "a2c": a2c.A2CConfig,
           "ga3c": ga3c.GA3CConfig}
"""Each algorithm's config class."""

__all__ = ["ALGORITHMS", "CONFIGS", "Agent", "AgentState", "HParams", "a2c",
           "core", "ga3c", "networks", "ppo", "returns"]
