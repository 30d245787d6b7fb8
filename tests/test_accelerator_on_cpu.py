"""`tests/accelerator_on_cpu.py`: the accelerator's programs in the suite
get its compile options, the CPU's none, and XLA reads them (that
they give the same bits is what the checks that use them check)."""
import jax.numpy as jnp
import pytest

from jaxatari import lowering
from tests import accelerator_on_cpu


def test_the_options_reach_xla_for_the_accelerators_lowering_alone(
        monkeypatch):
    monkeypatch.setattr(accelerator_on_cpu, "CHECK_ONLY_OPTIONS",
                        {"xla_no_such_option": 1})
    x = jnp.arange(3)
    with pytest.raises(Exception, match="xla_no_such_option"):
        accelerator_on_cpu.jit(lambda v: v + 1)(x)
    cpu = accelerator_on_cpu.jit(lambda v: v + 2, lowering.CPU)
    assert cpu(x).tolist() == [2, 3, 4]
