"""The test suite bounds itself (case 18 of ``shared/cases/runner.md``).

Was: no per-test timeout; when the snippet timeout stopped being enforced, the
suite hung for ~1000 s instead of failing.  Now pytest-timeout (the ``test``
extra) gives every test the ``timeout`` of ``[tool.pytest.ini_options]``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_case_18_every_test_has_a_time_limit(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.pluginmanager.hasplugin("timeout"), "pytest-timeout is part of the test extra"
    limit = float(pytestconfig.getini("timeout"))
    assert 0 < limit <= 600


def test_case_18_a_hanging_test_fails_at_the_limit(tmp_path: Path) -> None:
    # The project's own configuration, with the limit lowered so that this test is quick.
    (tmp_path / "test_hangs.py").write_text("import time\n\ndef test_hangs():\n    time.sleep(120)\n")
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-c", str(REPO / "pyproject.toml"),
         "--rootdir", str(tmp_path), "-o", "timeout=3", str(tmp_path / "test_hangs.py")],
        capture_output=True, text=True, timeout=100, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    assert "Timeout" in done.stdout
    assert time.monotonic() - start < 60


def test_the_default_run_includes_the_slow_tests(pytestconfig: pytest.Config) -> None:
    # CI runs `nox -s tests`, a plain `pytest`: a slow test left out by default would never run.
    assert "slow" in "".join(pytestconfig.getini("markers"))
    assert "not slow" not in " ".join(pytestconfig.getini("addopts"))
