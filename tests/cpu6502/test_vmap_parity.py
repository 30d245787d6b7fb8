"""1,024 CPUs stepped together give exactly what each gives alone."""

import jax
import numpy as np

from jaxatari import cpu6502, flatbus
from tests.cpu6502 import helpers

BATCH, STEPS = 1024, 40


def test_batch_equals_each_cpu_alone():
    rng = np.random.default_rng(7)
    memories = rng.integers(0, 256, (BATCH, 0x10000), np.uint8)
    regs = rng.integers(0, 256, (6, BATCH))
    regs[4] = rng.integers(0, 0x10000, BATCH)
    batch_cpus, batch_memory = helpers.batched_run(STEPS)(
        helpers.cpu_states(*regs), memories)
    alone = jax.jit(lambda cpu, memory: cpu6502.run(
        cpu, flatbus.flat_memory(memory), helpers.BUS, STEPS))
    for i in range(0, BATCH, 1):
        cpu = jax.tree.map(lambda leaf: leaf[0],
                           helpers.cpu_states(*regs[:, i:i + 1]))
        cpu, state = alone(cpu, memories[i])
        for name in helpers.REGISTERS:
            assert int(getattr(cpu, name)) == int(
                getattr(batch_cpus, name)[i]), (i, name)
        assert (np.asarray(state.memory) == np.asarray(batch_memory[i])).all()
    # the batch really was diverse: many distinct PCs and some jammed CPUs
    assert len(set(np.asarray(batch_cpus.pc).tolist())) > BATCH // 2
    assert 0 < int(np.asarray(batch_cpus.jammed).sum()) < BATCH
