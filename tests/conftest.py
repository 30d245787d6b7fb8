"""Test-wide setup: JAX's persistent compilation cache and hypothesis."""

import os

import hypothesis

from jaxatari import _config

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
