"""The test data under tests/data: the vendored real-world manifests, the replayable cases and
the Kueue configuration.

Nothing here reads outside the repository; a missing or empty corpus is an error, never a skip.
"""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).parent / "data"
REALWORLD = DATA / "realworld"
KUEUE_SETUP = DATA / "config" / "kueue.yaml"
"""The Kueue set-up of README.md ("Suspend policies"), the configuration most tests judge under."""


def realworld_files() -> list[Path]:
    """The vendored public manifests (tests/data/realworld/*.yaml), sorted by name."""
    files = sorted(REALWORLD.glob("*.yaml"))
    if not files:
        raise AssertionError(f"{REALWORLD} holds no manifests: the vendored corpus is missing")
    return files
