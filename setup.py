"""The optional compiled build.

`JOBGUARD_COMPILE=1` compiles the rule library and the admission path to C extensions with
mypyc (the same type hints mypy checks, now enforced at run time); without it the package
installs as plain Python, which behaves the same, only slower. The build needs mypy and the
runtime dependencies importable, hence `pip install --no-build-isolation` (see the README).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from setuptools import setup

HERE = Path(__file__).resolve().parent

# model.py holds msgspec Structs, which mypyc cannot compile (it would make them native
# classes); it stays Python and the compiled modules call it as they would any library.
NOT_COMPILED = {"jobguard/validators/model.py"}
COMPILED_APP_MODULES = ["jobguard/app/admission.py", "jobguard/app/webhook.py"]


def compiled_sources() -> list[str]:
    validators = sorted(
        path.relative_to(HERE).as_posix() for path in (HERE / "jobguard/validators").rglob("*.py")
    )
    return [path for path in validators if path not in NOT_COMPILED] + COMPILED_APP_MODULES


def extension_modules() -> list[Any]:
    if os.environ.get("JOBGUARD_COMPILE") != "1":
        return []
    from mypyc.build import mypycify

    # mypycify resolves paths against the working directory: pip builds from the source tree.
    os.chdir(HERE)
    return list(mypycify(compiled_sources(), opt_level="3", group_name="jobguard_compiled"))


setup(ext_modules=extension_modules())
