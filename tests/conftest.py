"""Test-wide setup: one XLA host device per core, JAX's persistent
compilation cache, and hypothesis."""

import os

# Before JAX starts: lock-step batches split over the cores (the user's
# XLA_FLAGS win).
if "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = (
        f"--xla_force_host_platform_device_count={os.cpu_count() or 1}")

# One lowering of the frame loop, the CPU's, traced instead of both
# (`jaxatari.lowering`; subprocesses inherit it). tests/test_lowering.py
# lowers both, and the per-backend choice, explicitly.
os.environ.setdefault("JAXATARI_LOWERING", "cpu")

import hypothesis  # noqa: E402

from jaxatari import _config  # noqa: E402

_config.enable_compilation_cache()

hypothesis.settings.register_profile(
    "jaxatari", deadline=None, print_blob=True,
    suppress_health_check=[hypothesis.HealthCheck.too_slow])
# CI replays the same examples every run (.ci/run selects it): a red CI is
# then reproducible; local runs keep exploring new examples.
hypothesis.settings.register_profile(
    "ci", parent=hypothesis.settings.get_profile("jaxatari"),
    derandomize=True)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE",
                                                "jaxatari"))
