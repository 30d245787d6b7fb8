"""`jaxatari.agents.returns` against rlax and against plain-numpy loops.

Every estimator is checked on random float32 trajectories `[T, N]` with
episode ends inside them: GAE against `rlax.truncated_generalized_
advantage_estimation`, V-trace against `rlax.vtrace_td_error_and_
advantage` (random log-rhos, so a policy lag, and clipping), and both
against float64 numpy written from the papers' formulas (forward sums,
not the backward recursions the module uses). The `mask` argument
(steps `t >= t_max` masked) is checked against the unmasked function on
the trajectory cut at `t_max`.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import rlax

from jaxatari.agents import returns

T, N = 16, 5
RTOL = ATOL = 1e-5
SEEDS = [0, 1, 2, 3]
GAMMA_LAMBDA = [(0.99, 0.95), (0.9, 0.5), (0.97, 1.0), (0.5, 0.0)]

gae = jax.jit(returns.gae)
n_step_returns = jax.jit(returns.n_step_returns)
vtrace = jax.jit(returns.vtrace)


def trajectory(seed, length=T, done_prob=0.15):
    """Random float32 rewards, values, dones, bootstrap values and
    log-rhos; every seed has at least one episode end."""
    rng = np.random.default_rng(seed)
    rewards = rng.normal(size=(length, N)).astype(np.float32)
    values = rng.normal(size=(length, N)).astype(np.float32)
    dones = rng.random((length, N)) < done_prob
    dones[rng.integers(length), rng.integers(N)] = True
    bootstrap = rng.normal(size=(N,)).astype(np.float32)
    log_rhos = rng.normal(scale=0.7, size=(length, N)).astype(np.float32)
    return rewards, values, dones, bootstrap, log_rhos


def discounts(dones, gamma):
    return (gamma * (1.0 - dones)).astype(np.float32)


# Plain-numpy oracles (float64, forward sums from the papers' formulas).

def numpy_gae(rewards, values, dones, bootstrap, gamma, lambda_):
    """A_t = sum_k (gamma lambda)^(k-t) delta_k, the sum stopping after an
    episode's last step (Schulman et al. 2016, eq. 16, truncated)."""
    rewards, values = rewards.astype(np.float64), values.astype(np.float64)
    next_values = np.concatenate([values[1:], bootstrap[None]])
    disc = gamma * (1.0 - dones)
    deltas = rewards + disc * next_values - values
    advantages = np.zeros_like(deltas)
    for n in range(rewards.shape[1]):
        for t in range(len(rewards)):
            total, weight = 0.0, 1.0
            for k in range(t, len(rewards)):
                total += weight * deltas[k, n]
                weight *= disc[k, n] * lambda_
            advantages[t, n] = total
    return advantages


def numpy_n_step(rewards, dones, bootstrap, gamma):
    """R_t = r_t + gamma r_{t+1} + ... + gamma^(T-t) V(x_T), stopping at
    the episode's end (no bootstrap then)."""
    out = np.zeros(rewards.shape, np.float64)
    for n in range(rewards.shape[1]):
        for t in range(len(rewards)):
            total, weight = 0.0, 1.0
            for k in range(t, len(rewards)):
                total += weight * float(rewards[k, n])
                if dones[k, n]:
                    weight = 0.0
                    break
                weight *= gamma
            out[t, n] = total + weight * float(bootstrap[n])
    return out


def numpy_vtrace(rewards, values, dones, bootstrap, log_rhos, gamma,
                 lambda_, rho_bar, pg_rho_bar):
    """IMPALA eq. 1: v_s = V(x_s) + sum_{t>=s} gamma^(t-s) (prod_{i<t}
    c_i) rho_t (r_t + gamma V(x_{t+1}) - V(x_t)), and the policy
    gradient's advantage rho_s^pg (r_s + gamma v_{s+1} - V(x_s))."""
    rewards, values = rewards.astype(np.float64), values.astype(np.float64)
    bootstrap = bootstrap.astype(np.float64)
    rhos = np.exp(log_rhos.astype(np.float64))
    clipped, cs = np.minimum(rho_bar, rhos), lambda_ * np.minimum(1.0, rhos)
    next_values = np.concatenate([values[1:], bootstrap[None]])
    disc = gamma * (1.0 - dones)
    vs = np.zeros_like(values)
    for n in range(rewards.shape[1]):
        for s in range(len(rewards)):
            total, weight = values[s, n], 1.0
            for t in range(s, len(rewards)):
                total += weight * clipped[t, n] * (
                    rewards[t, n] + disc[t, n] * next_values[t, n]
                    - values[t, n])
                weight *= disc[t, n] * cs[t, n]
            vs[s, n] = total
    next_vs = np.concatenate([vs[1:], bootstrap[None]])
    pg = np.minimum(pg_rho_bar, rhos) * (rewards + disc * next_vs - values)
    return vs, pg


# rlax oracles, vmapped over the env axis (rlax takes one sequence).

def rlax_gae(rewards, values, dones, bootstrap, gamma, lambda_):
    values_tp1 = jnp.concatenate([values, bootstrap[None]])
    return jax.vmap(rlax.truncated_generalized_advantage_estimation,
                    in_axes=(1, 1, None, 1), out_axes=1)(
        jnp.asarray(rewards), jnp.asarray(discounts(dones, gamma)),
        jnp.float32(lambda_), values_tp1)


def rlax_vtrace(rewards, values, dones, bootstrap, log_rhos, gamma,
                lambda_, rho_bar, pg_rho_bar):
    """(vs, pg_advantage): rlax's `errors` are vs - V(x_s)."""
    v_t = jnp.concatenate([values[1:], bootstrap[None]])

    def one(v_tm1, v_t, r_t, discount_t, rho_tm1):
        return rlax.vtrace_td_error_and_advantage(
            v_tm1, v_t, r_t, discount_t, rho_tm1, jnp.float32(lambda_),
            rho_bar, pg_rho_bar)

    out = jax.vmap(one, in_axes=1, out_axes=1)(
        jnp.asarray(values), v_t, jnp.asarray(rewards),
        jnp.asarray(discounts(dones, gamma)),
        jnp.exp(jnp.asarray(log_rhos)))
    return out.errors + values, out.pg_advantage


def close(actual, desired):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(desired),
                               rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("gamma,lambda_", GAMMA_LAMBDA)
@pytest.mark.parametrize("seed", SEEDS)
def test_gae_matches_rlax_and_numpy(seed, gamma, lambda_):
    rewards, values, dones, bootstrap, _ = trajectory(seed)
    advantages, targets = gae(rewards, values, dones, bootstrap,
                              jnp.float32(gamma), jnp.float32(lambda_))
    assert advantages.dtype == jnp.float32 and advantages.shape == (T, N)
    close(advantages, rlax_gae(rewards, values, dones, bootstrap, gamma,
                               lambda_))
    close(advantages, numpy_gae(rewards, values, dones, bootstrap, gamma,
                                lambda_))
    close(targets, np.asarray(advantages) + values)


@pytest.mark.parametrize("gamma", [0.99, 0.8])
@pytest.mark.parametrize("seed", SEEDS)
def test_n_step_returns(seed, gamma):
    rewards, values, dones, bootstrap, _ = trajectory(seed)
    out = n_step_returns(rewards, values, dones, bootstrap,
                         jnp.float32(gamma))
    close(out, numpy_n_step(rewards, dones, bootstrap, gamma))
    close(out, gae(rewards, values, dones, bootstrap, jnp.float32(gamma),
                   jnp.float32(1.0))[1])
    close(out, rlax_gae(rewards, values, dones, bootstrap, gamma, 1.0)
          + values)


VTRACE_CASES = [  # gamma, lambda, rho_bar, pg_rho_bar
    (0.99, 1.0, 1.0, 1.0), (0.9, 1.0, 2.0, 1.5), (0.97, 0.8, 1.0, 1.0),
    (0.95, 0.5, 1.5, 0.8)]


@pytest.mark.parametrize("case", VTRACE_CASES)
@pytest.mark.parametrize("seed", SEEDS)
def test_vtrace_matches_rlax_and_numpy(seed, case):
    gamma, lambda_, rho_bar, pg_rho_bar = case
    rewards, values, dones, bootstrap, log_rhos = trajectory(seed)
    rhos = np.exp(log_rhos)
    assert (rhos > max(rho_bar, pg_rho_bar)).any() and (rhos < 1).any()
    out = vtrace(rewards, values, dones, bootstrap, log_rhos,
                 jnp.float32(gamma), jnp.float32(lambda_), rho_bar,
                 pg_rho_bar)
    vs, pg = numpy_vtrace(rewards, values, dones, bootstrap, log_rhos,
                          gamma, lambda_, rho_bar, pg_rho_bar)
    close(out.vs, vs)
    close(out.pg_advantages, pg)
    rlax_vs, rlax_pg = rlax_vtrace(rewards, values, dones, bootstrap,
                                   log_rhos, gamma, lambda_, rho_bar,
                                   pg_rho_bar)
    close(out.vs, rlax_vs)
    if lambda_ == 1.0:
        # rlax's policy-gradient target bootstraps from lambda v_{s+1} +
        # (1 - lambda) V(x_{s+1}); IMPALA's paper and its reference code
        # (scalable_agent's vtrace.py) from v_{s+1}, as `returns.vtrace`
        # does. They agree at lambda 1 only (the numpy oracle above
        # covers lambda < 1).
        close(out.pg_advantages, rlax_pg)


@pytest.mark.parametrize("seed", SEEDS)
def test_vtrace_on_policy_is_n_step(seed):
    """log rho = 0, lambda 1: v_s is the n-step return and the advantage
    R - V (on-policy V-trace is A3C's target)."""
    rewards, values, dones, bootstrap, log_rhos = trajectory(seed)
    out = vtrace(rewards, values, dones, bootstrap, np.zeros_like(log_rhos),
                 jnp.float32(0.99), jnp.float32(1.0), 1.0, 1.0)
    expected = numpy_n_step(rewards, dones, bootstrap, 0.99)
    close(out.vs, expected)
    close(out.pg_advantages, expected - values)
    close(out.vs, n_step_returns(rewards, values, dones, bootstrap,
                                 jnp.float32(0.99)))


# The mask: steps t >= t_max are not taken. Per-member masks are [T];
# per-env ones [T, N].

def masks(seed):
    rng = np.random.default_rng(seed + 100)
    t_max = int(rng.integers(1, T))          # 1 .. T-1: some steps masked
    per_env = rng.integers(1, T + 1, size=N)  # T included: none masked
    per_env[0] = 1
    return t_max, per_env


@pytest.mark.parametrize("seed", SEEDS)
def test_gae_mask_is_truncation(seed):
    rewards, values, dones, bootstrap, _ = trajectory(seed)
    gamma, lambda_ = jnp.float32(0.97), jnp.float32(0.9)
    t_max, per_env = masks(seed)
    mask = np.arange(T) < t_max
    adv, ret = gae(rewards, values, dones, bootstrap, gamma, lambda_, mask)
    cut_adv, cut_ret = gae(rewards[:t_max], values[:t_max], dones[:t_max],
                           bootstrap, gamma, lambda_)
    close(adv[:t_max], cut_adv)
    close(ret[:t_max], cut_ret)
    close(adv[:t_max], numpy_gae(rewards[:t_max], values[:t_max],
                                 dones[:t_max], bootstrap, 0.97, 0.9))
    assert np.all(np.asarray(adv[t_max:]) == 0.0)
    np.testing.assert_array_equal(np.asarray(ret[t_max:]), values[t_max:])

    mask2 = np.arange(T)[:, None] < per_env[None]
    adv2, _ = gae(rewards, values, dones, bootstrap, gamma, lambda_, mask2)
    for n, k in enumerate(per_env):
        close(adv2[:k, n], numpy_gae(rewards[:k, n:n + 1],
                                     values[:k, n:n + 1],
                                     dones[:k, n:n + 1],
                                     bootstrap[n:n + 1], 0.97, 0.9)[:, 0])
        assert np.all(np.asarray(adv2[k:, n]) == 0.0)


@pytest.mark.parametrize("seed", SEEDS)
def test_n_step_mask_is_truncation(seed):
    rewards, values, dones, bootstrap, _ = trajectory(seed)
    t_max, _ = masks(seed)
    mask = np.arange(T) < t_max
    out = n_step_returns(rewards, values, dones, bootstrap,
                         jnp.float32(0.99), mask)
    close(out[:t_max], numpy_n_step(rewards[:t_max], dones[:t_max],
                                    bootstrap, 0.99))
    np.testing.assert_array_equal(np.asarray(out[t_max:]), values[t_max:])


@pytest.mark.parametrize("seed", SEEDS)
def test_vtrace_mask_is_truncation(seed):
    rewards, values, dones, bootstrap, log_rhos = trajectory(seed)
    args = (jnp.float32(0.95), jnp.float32(0.9), 1.5, 1.2)
    oracle_args = (0.95, 0.9, 1.5, 1.2)
    t_max, per_env = masks(seed)
    mask = np.arange(T) < t_max
    out = vtrace(rewards, values, dones, bootstrap, log_rhos, *args,
                 mask=mask)
    cut = vtrace(rewards[:t_max], values[:t_max], dones[:t_max], bootstrap,
                 log_rhos[:t_max], *args)
    close(out.vs[:t_max], cut.vs)
    close(out.pg_advantages[:t_max], cut.pg_advantages)
    vs, pg = numpy_vtrace(rewards[:t_max], values[:t_max], dones[:t_max],
                          bootstrap, log_rhos[:t_max], *oracle_args)
    close(out.vs[:t_max], vs)
    close(out.pg_advantages[:t_max], pg)
    assert np.all(np.asarray(out.pg_advantages[t_max:]) == 0.0)
    np.testing.assert_array_equal(np.asarray(out.vs[t_max:]),
                                  values[t_max:])

    mask2 = np.arange(T)[:, None] < per_env[None]
    out2 = vtrace(rewards, values, dones, bootstrap, log_rhos, *args,
                  mask=mask2)
    for n, k in enumerate(per_env):
        s = slice(n, n + 1)
        vs, pg = numpy_vtrace(rewards[:k, s], values[:k, s], dones[:k, s],
                              bootstrap[s], log_rhos[:k, s], *oracle_args)
        close(out2.vs[:k, n], vs[:, 0])
        close(out2.pg_advantages[:k, n], pg[:, 0])
        assert np.all(np.asarray(out2.pg_advantages[k:, n]) == 0.0)
