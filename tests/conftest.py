"""Test-wide setup: JAX's persistent compilation cache and hypothesis."""

import os

import hypothesis

from jaxatari import _config

_config.enable_compilation_cache()

hypothesis.settings.register_profile(
    "jaxatari", deadline=None, print_blob=True,
    suppress_health_check=[hypothesis.HealthCheck.too_slow])
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE",
                                                "jaxatari"))
