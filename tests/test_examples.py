"""The README's configurations and commands, run as written: each configuration it shows is a
file under examples/config/, goes through the fixed scenarios of examples/reviews/ with exactly
the outcomes its table states, and every `jobguard ...  # exit N` line it shows exits so."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from jobguard.app.admission.review import parse_review
from jobguard.app.cli.main import main
from jobguard.app.config import digest, load_config, parse_config
from jobguard.validators import BOTH_STAGES, Enforcement, Settings, admit
from tests.test_chart import render

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
README = (ROOT / "README.md").read_text(encoding="utf-8")
SCENARIOS = sorted(path.name for path in (EXAMPLES / "reviews").glob("*.json"))
FIXED = {
    "user-creates-job.json",  # a user's plain create
    "cronjob-controller-creates-job.json",
    "job-controller-updates-status.json",
    "kueue-admits.json",  # a queue controller admitting ...
    "kueue-evicts.json",  # ... and evicting
}


def config_blocks() -> dict[str, str]:
    """`<!-- config: PATH -->` markers and the yaml block after each."""
    found = re.findall(r"<!-- config: (\S+) -->\n.*?```yaml\n(.*?)```", README, re.S)
    return dict(found)


def scenario_tables() -> dict[str, dict[str, str]]:
    """`<!-- scenarios: PATH|defaults -->` markers: review file -> stated outcome."""
    tables: dict[str, dict[str, str]] = {}
    for config, table in re.findall(r"<!-- scenarios: (\S+) -->\n((?:\|.*\n)+)", README):
        rows = re.findall(r"^\| [^|]+ \| `([^`]+\.json)` \| ([^|]+) \|$", table, re.M)
        tables[config] = {review: outcome.strip() for review, outcome in rows}
    return tables


def outcome(settings: Settings, review: Path) -> str:
    """What the API server does with the review given jobguard's mutating and validating
    answers, in the README's words."""
    admission = admit(parse_review(review.read_bytes()).request, settings, BOTH_STAGES)
    verdict = admission.verdict
    assert verdict is not None
    if not verdict.allowed:
        return f"denied ({', '.join(dict.fromkeys(v.error.rule for v in verdict.denials))})"
    text = "allowed"
    if admission.mutation.policy is not None:
        text += ", suspended by /mutate"
    warned = [v.error.rule for v in verdict.unique(Enforcement.WARN)]
    return text + (f", warns {', '.join(warned)}" if warned else "")


def test_every_readme_configuration_is_an_example_file() -> None:
    blocks = config_blocks()
    assert set(blocks) == {"examples/config/reference.yaml", "examples/config/kueue.yaml"}
    for path, block in blocks.items():
        assert (ROOT / path).read_text(encoding="utf-8") == block, path
    assert set(blocks) | {"defaults"} == set(scenario_tables())


def test_the_scenarios_are_the_fixed_set() -> None:
    assert set(SCENARIOS) >= FIXED
    for config, table in scenario_tables().items():
        assert sorted(table) == SCENARIOS, config


@pytest.mark.parametrize("config", sorted(scenario_tables()))
def test_scenarios_have_the_outcomes_the_readme_states(config: str) -> None:
    settings = load_config(None if config == "defaults" else str(ROOT / config)).to_settings()
    stated = scenario_tables()[config]
    found = {name: outcome(settings, EXAMPLES / "reviews" / name) for name in SCENARIOS}
    assert found == stated


def test_no_configuration_refuses_the_built_in_controllers_or_a_plain_create() -> None:
    for config, table in scenario_tables().items():
        for name in FIXED - {"kueue-admits.json", "kueue-evicts.json"}:
            assert table[name].startswith("allowed"), (config, name)


def readme_commands() -> list[tuple[list[str], int, str | None]]:
    """Every `jobguard ... examples/...  # exit N[: RULE]` line of the README."""
    found = re.findall(r"^jobguard (.*examples/.*?)\s+# exit (\d)(?:: (\S+))?$", README, re.M)
    return [(shlex.split(args), int(code), rule or None) for args, code, rule in found]


def test_the_readme_shows_example_commands() -> None:
    commands = {args[0] for args, _, _ in readme_commands()}
    assert commands == {"review", "check", "config", "test"}


@pytest.mark.parametrize(
    ("args", "exit_code", "rule"),
    readme_commands(),
    ids=lambda v: " ".join(v) if isinstance(v, list) else str(v),
)
def test_readme_example_command(
    args: list[str],
    exit_code: int,
    rule: str | None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("JOBGUARD_CONFIG", raising=False)
    capsys.readouterr()
    assert main(args) == exit_code
    out, err = capsys.readouterr()
    if rule is not None:
        assert rule in out + err


def test_kueue_chart_values_hold_the_kueue_configuration() -> None:
    values = yaml.safe_load((EXAMPLES / "values" / "kueue.yaml").read_text())
    assert values["config"] == yaml.safe_load((EXAMPLES / "config" / "kueue.yaml").read_text())
    assert "helm install jobguard charts/jobguard" in README
    assert "-f examples/values/kueue.yaml" in README
    objects = render(values)
    stored = parse_config(objects["ConfigMap/jobguard"]["data"]["config.yaml"]).to_settings()
    assert digest(stored) == digest(parse_config(yaml.safe_dump(values["config"])).to_settings())


def test_example_files_are_valid() -> None:
    paths = sorted((EXAMPLES / "config").glob("*.yaml"))
    # At least the README's two: an empty glob would pass over every file unchecked.
    assert {path.name for path in paths} >= {"kueue.yaml", "reference.yaml"}
    for path in paths:
        load_config(str(path))
