"""Which build the suite runs against: `make unit` the Python tree, `make unit-compiled` the
mypyc build (JOBGUARD_EXPECT_COMPILED=1). tests/conftest.py refuses a run on the other one, so a
stale extension module (or a missing one) cannot pass for the build under test."""

from __future__ import annotations

import os

EXPECTED_BUILD = "mypyc" if os.environ.get("JOBGUARD_EXPECT_COMPILED") == "1" else "python"
