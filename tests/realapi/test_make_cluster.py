"""`make cluster` as the README shows it: the same control plane with jobguard registered for the
Kueue set-up, left running, and the README's kubectl commands with the outcomes it states; then
`make cluster-down`. (A second control plane beside the suite's, in its own directory.)"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

from tests.test_examples import README, ROOT


def cluster_commands() -> list[tuple[str, int, str]]:
    """The kubectl lines of the README's `<!-- cluster: commands -->` block, each with its
    `# exit N: expected text`."""
    block = re.search(r"<!-- cluster: commands -->\n```sh\n(.*?)```", README, re.S)
    assert block is not None
    lines = re.findall(r"^(kubectl .*?)\s+# exit (\d): (.*)$", block.group(1), re.M)
    return [(command, int(code), text.strip()) for command, code, text in lines]


def test_the_readme_shows_the_cluster_commands() -> None:
    block = re.search(r"<!-- cluster: commands -->\n```sh\n(.*?)```", README, re.S)
    assert block is not None
    assert block.group(1).startswith("make cluster")
    assert "make cluster-down" in block.group(1)
    assert len(cluster_commands()) >= 3


def make(target: str, directory: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "-s", target, f"CLUSTER_DIR={directory}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_make_cluster_and_the_readme_commands(tmp_path: Path) -> None:
    directory = tmp_path / "cluster"
    up = make("cluster", directory)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        assert f"kubeconfig: {directory / 'kubeconfig'}" in up.stdout
        assert "contexts: admin, alice, bob, kueue" in up.stdout
        env = {
            **os.environ,
            "KUBECONFIG": str(directory / "kubeconfig"),
            "PATH": f"{directory / 'bin'}:{os.environ['PATH']}",
        }
        for command, code, expected in cluster_commands():
            done = subprocess.run(
                shlex.split(command),
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            output = done.stdout + done.stderr
            assert (done.returncode == 0) == (code == 0), (command, output)
            assert expected in output, (command, output)
    finally:
        down = make("cluster-down", directory)
    assert down.returncode == 0, down.stdout + down.stderr
    assert not directory.exists()


def test_a_second_make_cluster_refuses_while_one_runs(tmp_path: Path) -> None:
    directory = tmp_path / "cluster"
    directory.mkdir()
    (directory / "state.json").write_text('{"pids": [], "url": ""}')
    again = make("cluster", directory)
    assert again.returncode != 0
    assert "already up" in again.stderr
