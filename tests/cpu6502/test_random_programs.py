"""Long random programs: a vmapped batch against py65 running each alone.

Each CPU runs random bytes (every opcode but the JAMs, which would stop it
in a few dozen instructions; their own test is in test_undocumented.py) from
random registers, decimal mode, stack and self-modifying writes included.
After every instruction its registers, flags and cycle count must equal
py65's (with ALE's deviations, `StellaMPU`); at the end, all of memory.
"""

import numpy as np

from tests.cpu6502 import helpers

BATCH, STEPS = 32, 3000


def test_random_programs_match_py65_step_by_step():
    rng = np.random.default_rng(2026)
    memories = np.stack([helpers.random_memory(seed, avoid_jams=True)
                         for seed in range(BATCH)])
    regs = rng.integers(0, 256, (6, BATCH))
    regs[4] = rng.integers(0x0000, 0xFF00, BATCH)  # pc
    traces, final = helpers.batched_trace(STEPS)(
        helpers.cpu_states(*regs), memories)
    traces, final = np.asarray(traces), np.asarray(final)
    for i in range(BATCH):
        mpu = helpers.make_mpu(memories[i], *regs[:, i])
        for t in range(STEPS):
            if mpu.pc > 0xFFFD:  # py65 cannot fetch past $FFFF; stop here
                break
            mpu.step()
            expected = list(helpers.py65_registers(mpu).values())
            assert list(traces[i, t]) == expected, (
                f"CPU {i} diverges at instruction {t}")
        else:
            assert (final[i] == np.asarray(mpu.memory, np.uint8)).all()
