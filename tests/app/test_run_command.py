"""``python -m snipcheck run ID`` says how the run ended and exits as a shell would (case 10, item 4)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from run_command_support import cli_env, cli_project

REPO = Path(__file__).resolve().parents[2]


def run_cli(root: Path, env: dict[str, str], *ids: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "snipcheck", "--root", str(root), "--no-cache", "run", *ids],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip


ENDINGS = {
    "ok": ("print('fine')\n", "exit status 0", 0),
    "status": ("import sys\nprint('three')\nsys.exit(3)\n", "exit status 3", 3),
    "segfault": ("import ctypes\nprint('about to crash', flush=True)\nctypes.string_at(0)\n", "killed by SIGSEGV (status 139)", 139),
    "interrupt": ("raise KeyboardInterrupt\n", "killed by SIGINT (status 130)", 130),
    "abort": ("import os\nos.abort()\n", "killed by SIGABRT (status 134)", 134),
    "slow": ("# /// snipcheck\n# timeout = 1\n# ///\nimport time\ntime.sleep(30)\n", "timed out after", 124),
}  # fmt: skip


@pytest.mark.parametrize("runner", ["fork", "subprocess"])
@pytest.mark.parametrize("name", sorted(ENDINGS))
def test_case_10_run_says_how_the_run_ended_and_exits_with_its_status(tmp_path: Path, runner: str, name: str) -> None:
    # Was: a segfault printed its output and the usual footer, no signal, exit status 0.
    source, said, status = ENDINGS[name]
    root = cli_project(tmp_path / "p", runner, {f"end/{name}": source})
    done = run_cli(root, cli_env(tmp_path), f"end/{name}")
    assert done.returncode == status, done.stdout + done.stderr
    footer = done.stdout.rstrip("\n").splitlines()[-1]
    assert footer.startswith(f"── {said}"), done.stdout
    if name == "segfault":
        assert "about to crash" in done.stdout


def test_run_with_several_ids_exits_with_the_first_status_that_is_not_zero(tmp_path: Path) -> None:
    root = cli_project(tmp_path / "p", "subprocess", {"a": ENDINGS["ok"][0], "b": ENDINGS["status"][0], "c": ENDINGS["abort"][0]})
    done = run_cli(root, cli_env(tmp_path), "a", "b", "c")
    assert done.returncode == 3
    footers = [line.split(" · ")[0] for line in done.stdout.splitlines() if line.startswith("── ") and " · " in line]
    assert footers == ["── exit status 0", "── exit status 3", "── killed by SIGABRT (status 134)"]
