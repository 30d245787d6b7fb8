"""Hypothesis strategies for CPU states."""

from hypothesis import strategies as st

byte = st.integers(0, 255)

#: Registers, flags, the instruction's operand bytes and a memory seed. The
#: PC stays below $FFFD: py65 cannot fetch past $FFFF (jaxatari wraps; see
#: test_cpu6502_api.py for that case).
cpu_state = st.fixed_dictionaries(dict(
    a=byte, x=byte, y=byte, sp=byte, p=byte, b1=byte, b2=byte,
    pc=st.integers(0, 0xFFFC), seed=st.integers(0, 2**32 - 1)))
