"""`jaxatari.agents.networks`: which network `make_network` picks, output
shapes, the Nature CNN's size against the paper's layer shapes, the
channel layouts, uint8 scaling and the orthogonal initialisation."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxatari.agents import networks

A = 6  # Pong's minimal action set


@pytest.fixture(scope="module")
def cnn():
    """The channels-first Nature CNN with its params, and a uint8 batch."""
    net = networks.make_network("auto", (4, 84, 84), A)
    obs = jax.random.randint(jax.random.key(1), (3, 4, 84, 84), 0, 256,
                             jnp.int32).astype(jnp.uint8)
    params = jax.jit(net.init)(jax.random.key(0), obs)
    return net, params, obs


@pytest.mark.parametrize("shape,kind,channels_first", [
    ((4, 84, 84), networks.NatureCNN, True),   # jaxatari's FrameStack
    ((84, 84, 4), networks.NatureCNN, False),  # EnvPool/gymnasium layout
    ((4,), networks.MLPActorCritic, None),     # CartPole
    ((10, 10, 4), networks.MLPActorCritic, None),  # MinAtar
])
def test_auto_picks(shape, kind, channels_first):
    net = networks.make_network("auto", shape, 3)
    assert type(net) is kind
    if channels_first is not None:
        assert net.channels_first is channels_first
    assert type(networks.make_network("mlp", shape, 3)) is \
        networks.MLPActorCritic


@pytest.mark.parametrize("shape,batch", [
    ((4,), (7,)), ((10, 10, 4), (2, 3)), ((4,), ())])
def test_mlp_shapes(shape, batch):
    net = networks.make_network("auto", shape, 5)
    obs = jnp.ones(batch + shape, jnp.float32)
    params = jax.jit(net.init)(jax.random.key(0), obs)
    logits, value = jax.jit(net.apply)(params, obs)
    assert logits.shape == batch + (5,) and value.shape == batch
    assert logits.dtype == value.dtype == jnp.float32


def test_cnn_shapes(cnn):
    net, params, obs = cnn
    logits, value = jax.jit(net.apply)(params, obs)
    assert logits.shape == (3, A) and value.shape == (3,)
    # extra leading axes ([T, N, ...] as the learner's forward pass)
    logits, value = jax.jit(net.apply)(params, obs.reshape((3, 1, 4, 84, 84)))
    assert logits.shape == (3, 1, A) and value.shape == (3, 1)


def test_cnn_parameter_count(cnn):
    """Mnih et al. 2015: 32 8x8 stride 4, 64 4x4 stride 2, 64 3x3 stride
    1, 512 dense, on 84x84x4; plus a policy and a value head."""
    _, params, _ = cnn
    side = 84
    for size, stride in ((8, 4), (4, 2), (3, 1)):
        side = (side - size) // stride + 1
    assert side == 7
    flat = side * side * 64
    assert flat == 3136
    expected = ((8 * 8 * 4 * 32 + 32) + (4 * 4 * 32 * 64 + 64)
                + (3 * 3 * 64 * 64 + 64) + (flat * 512 + 512)
                + (512 * A + A) + (512 * 1 + 1))
    count = sum(int(np.prod(x.shape)) for x in jax.tree.leaves(params))
    assert count == expected == 1_684_641 + 512 * A + A


def test_channels_first_equals_channels_last(cnn):
    net, params, obs = cnn
    assert net.channels_first
    last = networks.make_network("auto", (84, 84, 4), A)
    assert not last.channels_first
    first_out = jax.jit(net.apply)(params, obs)
    last_out = jax.jit(last.apply)(params, jnp.moveaxis(obs, 1, -1))
    for a, b in zip(first_out, last_out):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b),
                                   rtol=1e-5, atol=1e-6)


def test_uint8_is_scaled(cnn):
    net, params, obs = cnn
    apply = jax.jit(net.apply)
    scaled = apply(params, obs.astype(jnp.float32) / 255.0)
    for a, b in zip(apply(params, obs), scaled):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b),
                                   rtol=1e-5, atol=1e-6)
    unscaled = apply(params, obs.astype(jnp.float32))
    assert not np.allclose(np.asarray(unscaled[1]), np.asarray(scaled[1]),
                           rtol=1e-3, atol=1e-4)


def _orthonormal_columns(kernel, gain):
    """kernel [fan_in, fan_out] with fan_in >= fan_out: K^T K = gain^2 I."""
    k = np.asarray(kernel, np.float64).reshape(-1, kernel.shape[-1])
    assert k.shape[0] >= k.shape[1]
    np.testing.assert_allclose(k.T @ k, gain ** 2 * np.eye(k.shape[1]),
                               atol=1e-5 * max(gain ** 2, 1e-2))


def _dense_layers(params):
    """The Dense kernels in creation order (flax names Dense_0, ...)."""
    tree = params["params"]
    names = sorted((n for n in tree if n.startswith("Dense_")),
                   key=lambda n: int(n.split("_")[1]))
    return [tree[n] for n in names]


def test_cnn_orthogonal_init(cnn):
    _, params, _ = cnn
    torso, policy, value = _dense_layers(params)
    assert policy["kernel"].shape == (512, A)
    assert value["kernel"].shape == (512, 1)
    _orthonormal_columns(policy["kernel"], 0.01)
    _orthonormal_columns(value["kernel"], 1.0)
    _orthonormal_columns(torso["kernel"], np.sqrt(2.0))
    # conv kernels, flattened to [h * w * in, out]
    _orthonormal_columns(params["params"]["Conv_0"]["kernel"], np.sqrt(2.0))
    for leaf_path, leaf in jax.tree_util.tree_leaves_with_path(params):
        if "bias" in jax.tree_util.keystr(leaf_path):
            assert np.all(np.asarray(leaf) == 0.0)


def test_mlp_orthogonal_init():
    net = networks.make_network("auto", (4,), 2)
    params = jax.jit(net.init)(jax.random.key(3), jnp.zeros((1, 4)))
    layers = _dense_layers(params)
    heads = [layer for layer in layers if layer["kernel"].shape[0] == 64
             and layer["kernel"].shape[1] in (1, 2)]
    policy = [h for h in heads if h["kernel"].shape[1] == 2]
    value = [h for h in heads if h["kernel"].shape[1] == 1]
    assert len(policy) == len(value) == 1
    _orthonormal_columns(policy[0]["kernel"], 0.01)
    _orthonormal_columns(value[0]["kernel"], 1.0)
    # the first layers are 4 -> 64: orthonormal rows, times sqrt 2
    first = np.asarray(layers[0]["kernel"], np.float64)
    np.testing.assert_allclose(first @ first.T, 2.0 * np.eye(4), atol=1e-5)


@pytest.mark.parametrize("shape", [(4,), (10, 10, 4)])
def test_vmapped_init_is_each_members_init(shape):
    """A population's init (vmapped over keys) gives each member exactly
    the weights of an unbatched init with its key (and returns: a batched
    LAPACK QR hung on jax 0.10.2's CPU, see `networks.orthogonal`)."""
    net = networks.make_network("auto", shape, 3)
    obs = jnp.zeros((2,) + shape, jnp.float32)
    keys = jax.random.split(jax.random.key(11), 3)
    batched = jax.jit(jax.vmap(lambda k: net.init(k, obs)))(keys)
    single = jax.jit(lambda k: net.init(k, obs))
    for i in range(len(keys)):
        for x, y in zip(jax.tree.leaves(batched),
                        jax.tree.leaves(single(keys[i])), strict=True):
            np.testing.assert_array_equal(np.asarray(x[i]), np.asarray(y))


@pytest.mark.parametrize("kind,shape", [
    ("resnet", (4, 84, 84)), ("nature_cnn", (4,)),
    ("nature_cnn", (10, 10, 4)), ("nature_cnn", (84, 84))])
def test_bad_network_raises(kind, shape):
    with pytest.raises(ValueError):
        networks.make_network(kind, shape, 3)
