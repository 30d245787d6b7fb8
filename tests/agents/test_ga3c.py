"""GA3C's policy lag: with `policy_lag=0` its update is A2C's n-step
update on the same batch; with `policy_lag=k` the actors act with the
parameters of k updates ago. (That a lagged run still learns is
`test_learning.py`'s GA3C run, with the default lag of 1.)"""
import gymnax
import jax
import numpy as np
import pytest

from jaxatari.agents import a2c, ga3c

# GA3C's defaults (RMSProp eps 0.1, summed losses, reward clip 1, vf_coef
# 1, no gradient clipping) spelled out for A2C, plus a larger rate so one
# update moves the params well past the tolerance.
SHARED = dict(num_envs=8, num_steps=5, total_steps=10_000, optimizer="rmsprop",
              rms_decay=0.99, rms_eps=0.1, reward_clip=1.0,
              loss_reduction="sum", learning_rate=3e-3, gamma=0.99,
              ent_coef=0.01, vf_coef=1.0, max_grad_norm=0.0,
              life_loss_terminal=True)


@pytest.fixture(scope="module")
def cartpole():
    return gymnax.make("CartPole-v1")


def leaves(tree):
    return [np.asarray(x) for x in jax.tree.leaves(tree)]


def test_lag_zero_is_a2c(cartpole):
    env, env_params = cartpole
    g = ga3c.make(ga3c.GA3CConfig(policy_lag=0, **SHARED), env, env_params)
    a = a2c.make(a2c.A2CConfig(**SHARED), env, env_params)
    key = jax.random.key(7)
    g_state = jax.jit(g.init)(key, g.config.hparams())
    a_state = jax.jit(a.init)(key, a.config.hparams())
    assert g_state.extra is None
    for x, y in zip(leaves(g_state.params), leaves(a_state.params)):
        np.testing.assert_array_equal(x, y)

    g_update, a_update = jax.jit(g.update), jax.jit(a.update)
    for _ in range(2):
        before = leaves(a_state.params)
        g_state, g_metrics = g_update(g_state)
        a_state, a_metrics = a_update(a_state)
        moved = max(np.max(np.abs(x - y))
                    for x, y in zip(leaves(a_state.params), before))
        assert moved > 1e-4      # the update is not a no-op
        # Not bit-exact: the behaviour log-probs come from the rollout's
        # batch-N forward pass and the learner's from one batch-(T+1)N
        # pass, whose matmuls XLA may tile differently, so rho = exp(logp
        # - behaviour_logp) can differ from 1 by an ulp or so.
        for x, y in zip(leaves(g_state.params), leaves(a_state.params)):
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(float(g_metrics["loss"]),
                                   float(a_metrics["loss"]), rtol=1e-5)
        # the same envs: the rollouts took the same actions
        np.testing.assert_array_equal(np.asarray(g_state.obs),
                                      np.asarray(a_state.obs))
        assert int(g_state.env_steps) == int(a_state.env_steps)


@pytest.fixture(scope="module")
def lag2(cartpole):
    """A lag-2 agent, its jitted update, and the states and params of
    three updates run one at a time."""
    env, env_params = cartpole
    config = ga3c.GA3CConfig(policy_lag=2, num_envs=8, num_steps=5,
                             total_steps=10_000, learning_rate=3e-3)
    agent = ga3c.make(config, env, env_params)
    update = jax.jit(agent.update)
    states = [jax.jit(agent.init)(jax.random.key(3), config.hparams())]
    for _ in range(3):
        states.append(update(states[-1])[0])
    return agent, update, states


def test_lag_fifo_holds_the_inputs_of_recent_updates(lag2):
    _, _, states = lag2
    params = [leaves(s.params) for s in states]   # p0 (init) .. p3
    for k in range(4):
        assert [x.shape[0] for x in leaves(states[k].extra)] == \
            [2] * len(params[0])
    # the updates moved the params, so the FIFO slots are distinguishable
    for a, b in zip(params, params[1:]):
        assert max(np.max(np.abs(x - y)) for x, y in zip(a, b)) > 1e-5
    expected = {0: (0, 0), 1: (0, 0), 2: (0, 1), 3: (1, 2)}
    for k, (oldest, newest) in expected.items():
        fifo = leaves(states[k].extra)
        for slot, index in ((0, oldest), (1, newest)):
            for x, y in zip(fifo, params[index]):
                np.testing.assert_array_equal(x[slot], y)


def test_lag_acts_with_the_oldest_params(lag2):
    """The 4th update acts with FIFO slot 0 (p1, two updates old): a
    different slot 0 changes the rollout and so the update; a different
    slot 1 changes nothing but the FIFO it shifts into slot 0."""
    agent, update, states = lag2
    state = states[3]
    base, _ = update(state)

    def perturbed(slot):
        def change(p):
            noise = 0.5 * jax.random.normal(jax.random.key(1), p.shape[1:])
            return p.at[slot].add(noise)
        return state.replace(extra=jax.tree.map(change, state.extra))

    new0, _ = update(perturbed(0))
    differs = max(np.max(np.abs(x - y)) for x, y in
                  zip(leaves(new0.params), leaves(base.params)))
    assert differs > 1e-6
    assert not np.array_equal(np.asarray(new0.obs), np.asarray(base.obs))

    new1, _ = update(perturbed(1))
    for x, y in zip(leaves(new1.params), leaves(base.params)):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(np.asarray(new1.obs), np.asarray(base.obs))
    for x, y in zip(leaves(new1.extra), leaves(perturbed(1).extra)):
        np.testing.assert_array_equal(x[0], y[1])

    # and the acting params are the FIFO's slot 0, not the learner's:
    # replacing the learner's params by slot 0 leaves the rollout alone
    same_acting = state.replace(
        params=jax.tree.map(lambda p: p[0], state.extra))
    new_l, _ = update(same_acting)
    np.testing.assert_array_equal(np.asarray(new_l.obs),
                                  np.asarray(base.obs))
