"""A cached result is served only under the limits it ran under (found by an attacker's try).

Was: ``snipcheck_memory_limit`` in ``conf.py`` was not part of a result's key,
so after it changed, ``verify`` and the build served the result of a run under
the old limit (a snippet that no longer fits stayed green); and a result was
served under a ``snipcheck_timeout`` shorter than the run it holds took.
"""

from __future__ import annotations

from pathlib import Path

from helpers import snipcheck_cli

CONF = 'project = "x"\nextensions = ["snipcheck"]\nexclude_patterns = ["_build"]\nsnipcheck_runner = "subprocess"\n'
PAGE = "X\n=\n\n.. snippet:: lim\n"


def _project(root: Path, code: str) -> Path:
    (root / "snippets").mkdir(parents=True)
    (root / "conf.py").write_text(CONF)
    (root / "index.rst").write_text(PAGE)
    (root / "snippets" / "lim.py").write_text(code)
    return root


def test_a_result_is_not_served_under_another_project_memory_limit(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "import resource\nprint(resource.getrlimit(resource.RLIMIT_DATA)[0] >> 20, 'MiB')\n")
    cache = tmp_path / "cache"
    recorded = snipcheck_cli(root, "record", cache=cache)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert "4096 MiB" in (root / "index.rst").read_text()
    assert snipcheck_cli(root, "verify", cache=cache).returncode == 0
    (root / "conf.py").write_text(CONF + 'snipcheck_memory_limit = "1 GiB"\n')
    verified = snipcheck_cli(root, "verify", cache=cache)
    assert verified.returncode == 1 and "+1024 MiB" in verified.stdout, verified.stdout + verified.stderr
    (root / "conf.py").write_text(CONF + 'snipcheck_memory_limit = "4 GiB"\n')  # the default again
    assert snipcheck_cli(root, "verify", cache=cache).returncode == 0


def test_a_result_is_not_served_under_a_timeout_shorter_than_its_run(tmp_path: Path) -> None:
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.0:\n    pass\nprint('done')\n"
    root = _project(tmp_path / "p", busy)
    cache = tmp_path / "cache"
    assert snipcheck_cli(root, "record", cache=cache).returncode == 0
    (root / "conf.py").write_text(CONF + "snipcheck_timeout = 0.4\n")
    verified = snipcheck_cli(root, "verify", cache=cache)
    assert verified.returncode == 1 and "timed out" in verified.stdout, verified.stdout + verified.stderr
    (root / "conf.py").write_text(CONF + "snipcheck_timeout = 30\n")
    assert snipcheck_cli(root, "verify", cache=cache).returncode == 0  # a longer one: the stored result holds
