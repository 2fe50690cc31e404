"""The distribution claims only the `jobguard` import name, so it installs beside PyPI's popular
`validators` package and both work (jobguard's rule library is `jobguard.validators`)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

import jobguard
from jobguard.validators import SUPPORTED_VERSIONS

pytestmark = (
    pytest.mark.slow
)  # builds and installs wheels into new venvs: `make unit` leaves them to `make test`

ROOT = Path(__file__).resolve().parents[1]
WHEELS = Path(sys.prefix) / "wheels"  # filled by `make venv` (pip download validators)
# The wheel is built, installed and probed on its own: not beside the tree PYTHONPATH may point
# at.
CLEAN_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}


def build_wheel(out: Path, env: dict[str, str]) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(out),
            str(ROOT),
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("jobguard-*.whl")
    return built


def install_into_clean_venv(env_dir: Path, *wheels: Path) -> Path:
    """A venv holding only `wheels`, installed in that order, and jobguard's dependencies from
    the dev venv (after its own packages). Returns its site-packages."""
    venv.create(env_dir, with_pip=False)
    for target in wheels:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                str(env_dir / "bin" / "python"),
                "install",
                "-q",
                "--no-deps",
                "--no-index",
                str(target),
            ],
            env=CLEAN_ENV,
            check=True,
            capture_output=True,
        )
    # Added only now, so that pip above saw nothing installed.
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    dev_site = next(Path(sys.prefix, "lib").glob("python3*/site-packages"))
    (site / "dev-dependencies.pth").write_text(f"{dev_site}\n")
    return site


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # One build at a time across xdist's workers: setuptools writes build/ and the egg-info in
    # the source tree, and two builds at once break each other.
    lock = tmp_path_factory.getbasetemp().parent / "wheel-build.lock"
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        return build_wheel(tmp_path_factory.mktemp("dist"), CLEAN_ENV)


def test_pypi_validators_and_jobguard_import_side_by_side() -> None:
    import validators  # PyPI's, installed by the dev extra

    from jobguard.validators import evaluate

    assert Path(validators.__file__).parent.parent.name == "site-packages"
    assert validators.email("ops@example.com") is True
    assert callable(evaluate)


def test_wheel_holds_only_the_jobguard_package(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        top_level = {name.split("/")[0] for name in archive.namelist()}
        entry_points = archive.read(f"jobguard-{jobguard.__version__}.dist-info/entry_points.txt")
    assert top_level == {"jobguard", f"jobguard-{jobguard.__version__}.dist-info"}
    assert b"jobguard = jobguard.app.cli.main:main" in entry_points


def test_wheel_ships_the_openapi_schemas(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    expected = {f"jobguard/validators/schemas/k8s-{v}.json" for v in SUPPORTED_VERSIONS}
    assert expected <= names


def test_version_is_defined_once() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "jobguard.__version__"}
    chart = (ROOT / "charts/jobguard/Chart.yaml").read_text()
    assert f'appVersion: "{jobguard.__version__}"' in chart


@pytest.mark.parametrize(
    "validators_first", [True, False], ids=["validators-first", "jobguard-first"]
)
def test_wheel_installs_into_a_clean_venv_beside_pypi_validators(
    wheel: Path, tmp_path: Path, validators_first: bool
) -> None:
    (theirs,) = WHEELS.glob("validators-*.whl")  # missing: run `make venv` again
    env_dir = tmp_path / "venv"
    python = env_dir / "bin" / "python"
    site = install_into_clean_venv(
        env_dir, *([theirs, wheel] if validators_first else [wheel, theirs])
    )
    probe = (
        "import validators, jobguard.validators as jv, jobguard;"
        "from pathlib import Path;"
        f"assert Path(validators.__file__).is_relative_to({str(site)!r}), validators.__file__;"
        f"assert Path(jobguard.__file__).is_relative_to({str(site)!r}), jobguard.__file__;"
        "assert validators.email('ops@example.com') is True;"
        "assert validators.url('https://example.com/') is True;"
        "from jobguard.validators.rules.schema import compiled;"
        "assert 'Job' in compiled('1.35').validators;"
        "print(len(jv.RULES))"
    )
    ran = subprocess.run(
        [str(python), "-c", probe],
        cwd=tmp_path,
        env=CLEAN_ENV,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert int(ran.stdout) == len(jobguard.validators.RULES)
    version = subprocess.run(
        [str(env_dir / "bin" / "jobguard"), "--version"],
        env=CLEAN_ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    assert version.stdout.strip() == f"jobguard {jobguard.__version__}"
    module = subprocess.run(
        [str(python), "-m", "jobguard", "--version"],
        cwd=tmp_path,
        env=CLEAN_ENV,
        capture_output=True,
        text=True,
    )
    assert module.stdout.strip() == f"jobguard {jobguard.__version__}"
