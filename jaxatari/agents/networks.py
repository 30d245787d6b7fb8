"""Actor-critic networks (Flax): the Nature CNN for stacked Atari frames
and an MLP for vector observations.

Both map a batch of observations to `(logits, value)`: `logits[..., A]`
for a categorical policy over `A` actions and `value[...]`. Weights are
orthogonal (gain sqrt 2 in the torso, 0.01 on the policy head and 1 on the
value head, as CleanRL and PureJaxRL initialise them), biases zero.

* `NatureCNN` (Mnih et al. 2015): 32 8x8/4, 64 4x4/2, 64 3x3/1, dense 512,
  ReLU, one torso shared by both heads; uint8 frames are scaled by 1/255.
  It takes channels last or, as jaxatari's `FrameStack` gives them,
  channels first (`[stack, 84, 84]`). Its convolutions are `conv.conv2d`,
  whose gradient XLA:CPU runs fast inside the training loops.
* `MLPActorCritic`: separate policy and value towers (64, 64, tanh), as
  PureJaxRL's CartPole agent; observations of any shape are flattened.
"""
from __future__ import annotations

from typing import Callable, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from jaxatari.agents.conv import conv2d

_SQRT2 = float(np.sqrt(2.0))


def orthogonal(gain: float) -> nn.initializers.Initializer:
    """Flax's orthogonal initialiser, run one member at a time under vmap.

    It draws a Gaussian matrix and takes its QR decomposition. Under
    `jax.vmap` (a population's `init`) that becomes a batched LAPACK QR,
    which on jax 0.10.2's CPU backend intermittently never returns (seen
    here at batch 2 with a 4x64 matrix; an unbatched QR never hung).
    `jax.custom_batching.sequential_vmap` makes the batched call a loop
    over members instead, so each member's weights are also exactly the
    unbatched init's.
    """
    base = nn.initializers.orthogonal(gain)

    def init(key: jax.Array, shape: tuple[int, ...],
             dtype: jnp.dtype = jnp.float32) -> jax.Array:
        return jax.custom_batching.sequential_vmap(
            lambda k: base(k, shape, dtype))(key)

    return init


def _dense(features: int, gain: float) -> nn.Dense:
    return nn.Dense(features, kernel_init=orthogonal(gain),
                    bias_init=nn.initializers.zeros)


def _as_float(obs: jax.Array) -> jax.Array:
    """uint8 frames to [0, 1]; anything else (bool, float) to float32."""
    if obs.dtype == jnp.uint8:
        return obs.astype(jnp.float32) / 255.0
    return obs.astype(jnp.float32)


class NatureCNN(nn.Module):
    """The Nature DQN torso with policy and value heads.

    Attributes:
        num_actions: the policy's action count.
        channels_first: observations are `[..., C, H, W]` (jaxatari's
            frame stack) rather than `[..., H, W, C]`.
        conv: the convolution, in `lax.conv_general_dilated`'s signature:
            `conv.conv2d`, or `lax`'s own to compare the two.
    """
    num_actions: int
    channels_first: bool = True
    conv: Callable[..., jax.Array] = conv2d

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        x = _as_float(obs)
        if self.channels_first:
            x = jnp.moveaxis(x, -3, -1)
        for features, size, stride in ((32, 8, 4), (64, 4, 2), (64, 3, 1)):
            x = nn.Conv(features, (size, size), (stride, stride),
                        padding="VALID", conv_general_dilated=self.conv,
                        kernel_init=orthogonal(_SQRT2),
                        bias_init=nn.initializers.zeros)(x)
            x = nn.relu(x)
        x = x.reshape(x.shape[:-3] + (-1,))
        x = nn.relu(_dense(512, _SQRT2)(x))
        logits = _dense(self.num_actions, 0.01)(x)
        value = _dense(1, 1.0)(x)[..., 0]
        return logits, value


class MLPActorCritic(nn.Module):
    """Separate tanh MLP towers for the policy and the value.

    Attributes:
        num_actions: the policy's action count.
        obs_ndim: how many trailing axes one observation has (they are
            flattened).
        hidden: the towers' layer widths.
    """
    num_actions: int
    obs_ndim: int = 1
    hidden: Sequence[int] = (64, 64)

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        x = _as_float(obs)
        batch_shape = x.shape[:x.ndim - self.obs_ndim]
        x = x.reshape(batch_shape + (-1,))
        actor, critic = x, x
        for width in self.hidden:
            actor = nn.tanh(_dense(width, _SQRT2)(actor))
            critic = nn.tanh(_dense(width, _SQRT2)(critic))
        logits = _dense(self.num_actions, 0.01)(actor)
        value = _dense(1, 1.0)(critic)[..., 0]
        return logits, value


NETWORKS = ("auto", "nature_cnn", "mlp")


def make_network(kind: str, obs_shape: tuple[int, ...],
                 num_actions: int) -> nn.Module:
    """The actor-critic for one observation shape.

    Args:
        kind: "nature_cnn", "mlp", or "auto": the Nature CNN for image
            stacks at least 36 pixels on a side (`[C, H, W]` when the first
            axis is the smallest, else `[H, W, C]`), the MLP otherwise
            (vectors, and small grids such as MinAtar's 10x10).
        obs_shape: one observation's shape.
        num_actions: the action count.

    Raises:
        ValueError: an unknown kind, or a CNN for observations that are
            not 3-D images.
    """
    if kind not in NETWORKS:
        raise ValueError(f"network must be one of {NETWORKS}, got {kind!r}")
    image = len(obs_shape) == 3 and sorted(obs_shape)[1] >= 36
    if kind == "auto":
        kind = "nature_cnn" if image else "mlp"
    if kind == "mlp":
        return MLPActorCritic(num_actions, obs_ndim=len(obs_shape))
    if not image:
        raise ValueError(f"the Nature CNN needs [C, H, W] or [H, W, C] "
                         f"images of at least 36x36, got {obs_shape}; use "
                         f"network='mlp'")
    return NatureCNN(num_actions,
                     channels_first=obs_shape[0] < obs_shape[-1])
