"""The distribution claims only the `jobguard` import name, so it installs beside PyPI's popular
`validators` package and both work (jobguard's rule library is `jobguard.validators`)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

import jobguard
from jobguard.validators import SUPPORTED_VERSIONS

ROOT = Path(__file__).resolve().parents[1]
WHEELS = Path(sys.prefix) / "wheels"  # filled by `make venv` (pip download validators)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
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
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("jobguard-*.whl")
    return built


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
    assert b"jobguard = jobguard.app.cli:main" in entry_points


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
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    for target in [theirs, wheel] if validators_first else [wheel, theirs]:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                str(python),
                "install",
                "-q",
                "--no-deps",
                "--no-index",
                str(target),
            ],
            check=True,
            capture_output=True,
        )
    # jobguard's own dependencies come from the dev venv, after the clean venv's packages (added
    # only now, so that pip above saw nothing installed).
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    dev_site = next(Path(sys.prefix, "lib").glob("python3*/site-packages"))
    (site / "dev-dependencies.pth").write_text(f"{dev_site}\n")
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
        [str(python), "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert int(ran.stdout) == len(jobguard.validators.RULES)
    version = subprocess.run(
        [str(env_dir / "bin" / "jobguard"), "--version"], capture_output=True, text=True, check=True
    )
    assert version.stdout.strip() == f"jobguard {jobguard.__version__}"
    module = subprocess.run(
        [str(python), "-m", "jobguard", "--version"], cwd=tmp_path, capture_output=True, text=True
    )
    assert module.stdout.strip() == f"jobguard {jobguard.__version__}"
