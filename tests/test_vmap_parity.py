"""vmap parity: a batch of consoles gives exactly what each gives alone.

1,024 Seaquest environments start from reset states picked by key and take
different random actions (with sticky actions on). Every output of the
batched `step` (observation, the whole state, reward, done, info) must equal,
for a sample of consoles, what an unbatched `step` gives for that console
alone. The batched step runs `console.frame`'s own vmap rule (one loop
over the batch with masks), the unbatched one its plain loop, so this also
checks the rule against the loop it replaces.
"""

import jax
import numpy as np
import pytest

import jaxatari
from jaxatari import parity

BATCH = 1024
STEPS = 2
ALONE = (0, 1, 2, 511, 1022, 1023)


@pytest.fixture(scope="module")
def seaquest():
    env, params = jaxatari.make("seaquest", num_reset_states=2)
    return env, params.replace(frameskip=2)


def _batched_rollout(env, params, keys, actions):
    step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
    _, state = jax.vmap(env.reset, in_axes=(0, None))(keys[0], params)
    outputs = []
    for t in range(STEPS):
        out = step(keys[t + 1], state, actions[t], params)
        state = out[1]
        outputs.append(out)
    return outputs


def _alone_rollout(env, params, keys, actions, i):
    _, state = env.reset(keys[0, i], params)
    outputs = []
    for t in range(STEPS):
        out = env.step(keys[t + 1, i], state, actions[t, i], params)
        state = out[1]
        outputs.append(out)
    return outputs


def test_batch_equals_each_console_alone(seaquest):
    env, params = seaquest
    keys = jax.random.split(jax.random.key(7), (STEPS + 1) * BATCH)
    keys = keys.reshape(STEPS + 1, BATCH)
    actions = jax.random.randint(jax.random.key(8), (STEPS, BATCH), 0,
                                 len(env.action_set))
    batched = _batched_rollout(env, params, keys, actions)
    final_ram = np.asarray(jax.vmap(env.ram)(batched[-1][1]))
    assert len({bytes(r) for r in final_ram}) > 1, "the batch never diverged"
    for i in ALONE:
        alone = _alone_rollout(env, params, keys, actions, i)
        for t in range(STEPS):
            ours = jax.tree.leaves(jax.tree.map(lambda x: x[i], batched[t]))
            for a, b in zip(ours, jax.tree.leaves(alone[t])):
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_reset_state_is_ales(seaquest):
    """The first cached reset state is ALE's after loadROM + reset_game."""
    env, params = seaquest
    ale = parity.make_ale("seaquest", 0)
    state = jax.tree.map(lambda x: x[0], params.reset_states)
    np.testing.assert_array_equal(np.asarray(env.ram(state)), ale.getRAM())
    np.testing.assert_array_equal(np.asarray(env.screen(state)),
                                  ale.getScreen())
