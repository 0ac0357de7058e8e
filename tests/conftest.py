"""pytest configuration shared by every test file: hypothesis profiles.

- "ci": loaded when the CI environment variable is set. Few examples per test, no deadline
  (the first call of a dtype compiles its kernel module: ~1-4 s on a cold cache), derandomized
  so a CI run is reproducible, and the health checks that small CI machines trip on suppressed.
  Sized so that the property tests stay well within the suite's time budget on two cores.
- "dev": everywhere else; more examples, random seeds, hypothesis' example database.

Pick one explicitly with `pytest --hypothesis-profile=dev` (or HYPOTHESIS_PROFILE=...).

Nothing GPU-related is configured here yet: device-parametrized tests will add a `device`
fixture that runs on "cuda" when a GPU is present and skips with the reason when not.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

# tests/ on sys.path so test files can `from helpers import ...` whatever the import mode.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile("ci", max_examples=20, deadline=None, derandomize=True,
                          suppress_health_check=_SUPPRESS, print_blob=True, database=None)
settings.register_profile("dev", max_examples=100, deadline=None, suppress_health_check=_SUPPRESS)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE")
                      or ("ci" if os.environ.get("CI") else "dev"))
