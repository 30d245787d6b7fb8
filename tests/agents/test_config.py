"""The agents' configs and hyperparameters: range checks that name the
field, and the defaults each module's docstring promises (CleanRL's PPO,
the SB3 zoo's A2C, GA3C's released `Config.py`)."""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari.agents import CONFIGS, a2c, core, ga3c, ppo

ALL = [ppo.PPOConfig, a2c.A2CConfig, ga3c.GA3CConfig]

COMMON_BAD = [  # field, value
    ("num_envs", 0), ("num_steps", 0), ("num_envs", 2.5),
    ("total_steps", 1),  # below one update (num_envs * num_steps)
    ("gamma", 1.5), ("gamma", -0.1), ("gae_lambda", 1.01),
    ("learning_rate", 0.0), ("learning_rate", float("nan")),
    ("ent_coef", -1.0), ("vf_coef", -0.5), ("clip_eps", 0.0),
    ("max_grad_norm", -1.0), ("optimizer", "sgd"), ("network", "resnet"),
    ("loss_reduction", "avg"), ("reward_clip", 0.0), ("adam_eps", 0.0),
    ("rms_eps", -1.0), ("rms_decay", 1.5)]

BAD = ([(cls, field, value) for cls in ALL for field, value in COMMON_BAD]
       + [(ppo.PPOConfig, "num_minibatches", 3),  # 8 * 128 = 1024
          (ppo.PPOConfig, "num_minibatches", 0),
          (ppo.PPOConfig, "update_epochs", 0),
          (ga3c.GA3CConfig, "policy_lag", -1),
          (ga3c.GA3CConfig, "policy_lag", 1.0),
          (ga3c.GA3CConfig, "vtrace_lambda", 0.0),
          (ga3c.GA3CConfig, "clip_rho_threshold", 0.0)])


@pytest.mark.parametrize(
    "cls,field,value", BAD,
    ids=[f"{c.__name__}-{f}={v}" for c, f, v in BAD])
def test_out_of_range_field_raises_naming_it(cls, field, value):
    with pytest.raises(ValueError, match=rf"\b{re.escape(field)}\b"):
        cls(**{field: value})


@pytest.mark.parametrize("cls", ALL)
def test_defaults_are_valid_and_edges_pass(cls):
    cls()
    cls(gamma=1.0, gae_lambda=0.0, ent_coef=0.0, max_grad_norm=0.0,
        reward_clip=None)
    config = cls(num_envs=2, num_steps=4, total_steps=8)
    assert config.num_updates == 1
    assert cls(num_envs=2, num_steps=4, total_steps=23).num_updates == 2
    with pytest.raises(ValueError, match="total_steps"):
        cls(num_envs=2, num_steps=4, total_steps=7)


@pytest.mark.parametrize("cls", ALL)
def test_hparams(cls):
    config = cls(num_envs=2, num_steps=8, total_steps=1000)
    hp = config.hparams()
    assert int(hp.t_max) == 8 and hp.t_max.dtype == jnp.int32
    assert hp.gamma.dtype == jnp.float32
    np.testing.assert_allclose(float(hp.learning_rate), config.learning_rate,
                               rtol=1e-6)
    hp = config.hparams(t_max=3, gamma=0.5)
    assert int(hp.t_max) == 3 and float(hp.gamma) == 0.5
    for t_max in (0, 9, -1):
        with pytest.raises(ValueError, match="t_max"):
            config.hparams(t_max=t_max)
    with pytest.raises(ValueError, match="gamma"):
        config.hparams(gamma=2.0)
    with pytest.raises(ValueError, match="learning_rate"):
        config.hparams(learning_rate=0.0)
    with pytest.raises(ValueError, match="unknown hyperparameters.*lr"):
        config.hparams(lr=1e-3)


def test_check_hparams_on_a_stacked_batch():
    config = a2c.A2CConfig(num_envs=2, num_steps=8, total_steps=1000)
    members = [config.hparams(t_max=t, learning_rate=lr)
               for t, lr in ((8, 1e-3), (2, 1e-4), (5, 3e-4))]
    batch = jax.tree.map(lambda *x: jnp.stack(x), *members)
    assert batch.t_max.shape == (3,)
    core.check_hparams(batch, config)       # all in range: no error
    bad_t = batch.replace(t_max=batch.t_max.at[1].set(9))
    with pytest.raises(ValueError, match="t_max"):
        core.check_hparams(bad_t, config)
    bad_ent = batch.replace(ent_coef=batch.ent_coef.at[2].set(-0.1))
    with pytest.raises(ValueError, match="ent_coef"):
        core.check_hparams(bad_ent, config)
    # under tracing the checks are skipped (no host values)
    jax.jit(lambda h: core.check_hparams(h, config))(bad_t)


def test_ppo_defaults_are_cleanrls():
    """CleanRL's ppo_atari_envpool_xla_jax.py `Args`."""
    c = ppo.PPOConfig()
    assert (c.num_envs, c.num_steps, c.total_steps) == (8, 128, 10_000_000)
    assert (c.optimizer, c.adam_eps, c.learning_rate) == ("adam", 1e-5,
                                                          2.5e-4)
    assert c.anneal_lr is True
    assert (c.gamma, c.gae_lambda) == (0.99, 0.95)
    assert (c.num_minibatches, c.update_epochs) == (4, 4)
    assert c.norm_adv is True and c.clip_vloss is True
    assert (c.clip_eps, c.ent_coef, c.vf_coef, c.max_grad_norm) == (
        0.1, 0.01, 0.5, 0.5)
    assert c.life_loss_terminal is True
    assert c.network == "auto" and c.loss_reduction == "mean"
    assert c.reward_clip is None


def test_a2c_defaults_are_sb3_zoos():
    """rl-baselines3-zoo's a2c.yml Atari entry (16 envs, RMSpropTFLike eps
    1e-5) over SB3's A2C defaults; vf_coef 0.25 on the MSE is 0.5 on half
    the squared error."""
    c = a2c.A2CConfig()
    assert (c.num_envs, c.num_steps) == (16, 5)
    assert (c.optimizer, c.rms_decay, c.rms_eps) == ("rmsprop", 0.99, 1e-5)
    assert c.learning_rate == 7e-4 and c.anneal_lr is False
    assert (c.gamma, c.gae_lambda) == (0.99, 1.0)
    assert (c.ent_coef, c.vf_coef, c.max_grad_norm) == (0.01, 0.5, 0.5)
    assert c.life_loss_terminal is True and c.loss_reduction == "mean"


def test_ga3c_defaults_are_ga3cs():
    """GA3C's Config.py: AGENTS 32, TIME_MAX 5, DISCOUNT 0.99,
    LEARNING_RATE 3e-4, RMSPROP_DECAY 0.99, RMSPROP_EPSILON 0.1, BETA
    0.01, rewards clipped to [-1, 1], no gradient clipping, summed
    losses; the lag 1."""
    c = ga3c.GA3CConfig()
    assert (c.num_envs, c.num_steps) == (32, 5)
    assert (c.optimizer, c.rms_decay, c.rms_eps) == ("rmsprop", 0.99, 0.1)
    assert c.learning_rate == 3e-4 and c.gamma == 0.99
    assert (c.ent_coef, c.vf_coef, c.max_grad_norm) == (0.01, 1.0, 0.0)
    assert c.reward_clip == 1.0 and c.loss_reduction == "sum"
    assert c.policy_lag == 1
    assert (c.vtrace_lambda, c.clip_rho_threshold,
            c.clip_pg_rho_threshold) == (1.0, 1.0, 1.0)


def test_registry():
    assert CONFIGS == {"ppo": ppo.PPOConfig, "a2c": a2c.A2CConfig,
                       "ga3c": ga3c.GA3CConfig}
    d = ga3c.GA3CConfig().to_dict()
    assert d["algo_config"] == "GA3CConfig" and d["policy_lag"] == 1
