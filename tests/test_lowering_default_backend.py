"""`lowering.default_backend_only`: `jaxatari train` and `jaxatari sweep`
trace the frame loop for the default backend alone."""
import contextlib

import jax
import jax.numpy as jnp
import pytest

from jaxatari import _config, lowering


def _traced() -> list[str]:
    """The variants `per_backend` traces in one function's trace."""
    seen = []

    def branch(variant):
        def fn():
            seen.append(variant)
            return jnp.int32(0)
        return fn
    jax.make_jaxpr(lambda: lowering.per_backend(
        cpu=branch(lowering.CPU),
        accelerator=branch(lowering.ACCELERATOR)))()
    return seen


def test_only_the_default_backends_variant_is_traced_within():
    # the suite forces the CPU's (conftest); `every_backend`: both traced
    # on this CPU, as on an accelerator's default backend
    with lowering.forced(None), lowering.every_backend():
        assert sorted(_traced()) == sorted(lowering.VARIANTS)
        with _config.default_backend_lowering() as variant:
            assert variant == lowering.CPU   # this suite runs on the CPU
            assert _traced() == [lowering.CPU]
        assert sorted(_traced()) == sorted(lowering.VARIANTS)


def test_a_forced_variant_wins():
    with lowering.forced(lowering.ACCELERATOR):
        with lowering.default_backend_only() as variant:
            assert variant == lowering.ACCELERATOR
            assert _traced() == [lowering.ACCELERATOR]


@pytest.mark.parametrize("entry", ["train", "sweep"])
def test_train_and_sweep_run_within_it(entry, tmp_path, monkeypatch):
    """Both commands enter the context before their run is built (an
    unknown env stops them inside it, before any trace)."""
    from jaxatari.agents import run
    from jaxatari.population import sweep
    entered = []

    @contextlib.contextmanager
    def recording():
        entered.append(True)
        yield lowering.CPU
    monkeypatch.setattr(_config, "default_backend_lowering", recording)
    main, extra = {"train": (run.main, []),
                   "sweep": (sweep.main, ["--method", "random",
                                          "--members", "4"])}[entry]
    with pytest.raises(SystemExit, match="no-such-env"):
        main(["gymnax:no-such-env", "--frames", "100", "--out",
              str(tmp_path / "out"), *extra])
    assert entered == [True]
