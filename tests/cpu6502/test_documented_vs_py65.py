"""Every documented opcode against py65 (with ALE's documented deviations).

For random registers, flags (decimal mode included) and memory, one
instruction must leave A, X, Y, SP, PC, P, the cycle count and all 64 KiB of
memory as py65 does. `StellaMPU` is py65 with the cases where ALE's Stella
differs from it written out; test_py65_deviations.py shows those are the
only differences from plain py65.
"""

import pytest
from hypothesis import given, settings

from jaxatari import cpu6502
from tests.cpu6502 import helpers
from tests.cpu6502.strategies import cpu_state


@pytest.mark.parametrize("opcode", cpu6502.DOCUMENTED_OPCODES,
                         ids=helpers.opcode_id)
@settings(max_examples=25)
@given(state=cpu_state)
def test_documented_opcode_matches_py65(opcode, state):
    helpers.assert_matches_oracle(opcode, state)


def test_there_are_151_documented_opcodes():
    assert len(cpu6502.DOCUMENTED_OPCODES) == 151
