"""Shared nox environments (issue 12 §11, adoption.md #13): one environment per
torch release, shared by docs, tests, record, docs-live and bench; `new` and
`merge` need no torch; a session installs only what its environment lacks.

The sessions of noxfile.py run against a recording stand-in for
``nox.Session`` (noxfile_support.py): nothing is installed, but every
command, with the environment it runs in, is recorded.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import REPO
from noxfile_support import noxfile, session  # noqa: F401 - a fixture


def test_docs_tests_record_live_and_bench_share_one_environment(noxfile: ModuleType, tmp_path: Path) -> None:
    reference = noxfile.reference_torch()
    env = str(tmp_path / ".nox" / f"torch-{reference}")
    docs = session(noxfile, "docs")
    assert docs.last_env() == env
    assert docs.installs() == [["--quiet", "--disable-pip-version-check", f"torch=={reference}", "numpy", "-e", ".[chapter]"]]
    # tests adds only its extra, in the same environment
    tests = session(noxfile, "tests")
    assert tests.last_env() == env
    assert [args[-1] for args in tests.installs()] == [".[chapter,test]"]
    assert not any("venv" in args for args, _ in tests.calls)
    # record and bench need nothing more; docs-live adds its extra
    for name in ("record", "bench", "docs", "tests"):
        again = session(noxfile, name)
        assert again.last_env() == env
        assert again.installs() == [], name
    live = session(noxfile, "docs_live")
    assert live.last_env() == env
    assert [args[-1] for args in live.installs()] == [".[chapter,live,test]"]
    assert sorted(p.name for p in (tmp_path / ".nox").iterdir() if p.is_dir()) == [f"torch-{reference}"]


def test_verify_of_the_reference_release_reuses_its_environment(noxfile: ModuleType, tmp_path: Path) -> None:
    reference = noxfile.reference_torch()
    session(noxfile, "docs")
    verify = session(noxfile, "verify", reference, "--shard", "2/4")
    assert verify.installs() == []
    assert verify.last_env() == str(tmp_path / ".nox" / f"torch-{reference}")
    command = verify.calls[-1][0]
    assert command[command.index("--json") + 1] == f"_build/verify/torch-{reference}-shard2of4.json"


def test_another_torch_gets_its_own_environment_shared_by_verify_and_accept(noxfile: ModuleType, tmp_path: Path) -> None:
    verify = session(noxfile, "verify", "9.9.9")
    assert verify.last_env() == str(tmp_path / ".nox" / "torch-9.9.9")
    assert verify.installs()[0][2:4] == ["torch==9.9.9", "numpy"]
    accept = session(noxfile, "accept", "9.9.9", "--dry-run")
    assert accept.last_env() == verify.last_env()
    assert accept.installs() == []


def test_new_and_merge_need_no_torch(noxfile: ModuleType, tmp_path: Path) -> None:
    new = session(noxfile, "new", "demo/hello")
    assert new.last_env() == str(tmp_path / ".nox" / "tool")
    assert new.installs() == [["--quiet", "--disable-pip-version-check", "-e", "."]]
    merge = session(noxfile, "merge", "a.json")
    assert merge.last_env() == new.last_env()
    assert merge.installs() == []
    assert not [arg for args in new.installs() + merge.installs() for arg in args if "torch" in arg]


def test_pip_output_is_kept_out_of_the_session_output(noxfile: ModuleType) -> None:
    """pip runs quietly and silently (nox shows its output only if it fails)."""
    docs = session(noxfile, "docs")
    pip_calls = [(args, kwargs) for args, kwargs in docs.calls if "pip" in args]
    assert pip_calls
    assert all(kwargs.get("silent") is True and "--quiet" in args for args, kwargs in pip_calls)


def test_a_changed_pyproject_reinstalls_into_the_same_environment(noxfile: ModuleType, tmp_path: Path) -> None:
    session(noxfile, "tests")
    marker = next((tmp_path / ".nox").glob("torch-*/.snipcheck-installed.json"))
    marker.write_text(marker.read_text().replace('"pyproject": "', '"pyproject": "old'))
    docs = session(noxfile, "docs")
    # the extras already there are kept: the next `nox -s tests` installs nothing
    assert [args[-1] for args in docs.installs()] == [".[chapter,test]"]
    assert session(noxfile, "tests").installs() == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("bogus.whl", "no such wheel:"),
        ("notawheel", "'notawheel' is neither a torch version (e.g. 2.14.1) nor a path to a torch wheel (.whl)"),
        ("notawheel.txt", "'notawheel.txt' is neither a torch version"),
    ],
)
def test_13_a_bad_torch_argument_is_a_clear_error_and_makes_no_environment(
    noxfile: ModuleType, tmp_path: Path, spec: str, message: str
) -> None:
    # sources.md #13: bogus.whl gave an IndexError in noxfile.py; notawheel.txt made a venv at .nox/_torch-/…
    with pytest.raises(AssertionError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        session(noxfile, "verify", spec)
    assert not (tmp_path / ".nox").exists()


def test_13_a_wheel_of_another_package_is_refused(noxfile: ModuleType, tmp_path: Path) -> None:
    wheel = tmp_path / "numpy-2.0.0-cp311-cp311-manylinux_2_17_x86_64.whl"
    wheel.write_bytes(b"")
    with pytest.raises(AssertionError, match="is a wheel of numpy, not of torch"):
        session(noxfile, "verify", str(wheel))
    bad = tmp_path / "torch.whl"
    bad.write_bytes(b"")
    with pytest.raises(AssertionError, match="is not a wheel's file name"):
        session(noxfile, "verify", str(bad))


def test_a_session_says_nothing_about_uv_which_no_session_uses(tmp_path: Path) -> None:
    # nox looks for uv before it reads the backend ("none" here) and logged
    # "nox > uv binary not found." on every session (issue 34)
    import subprocess

    out = subprocess.run(
        [sys.executable, "-m", "nox", "-f", str(REPO / "noxfile.py"), "--envdir", str(tmp_path / ".nox"), "-s", "new"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    said = out.stdout + out.stderr
    assert "Session new aborted: give the new snippet's id" in said, said  # the session ran, and stopped at once
    assert "uv" not in said, said


def test_two_test_modules_share_one_load_of_the_noxfile() -> None:
    # Each load registers the sessions again in nox's one registry: the test run
    # printed "FutureWarning: The session 'docs' has already been registered" 13 times
    # when test_guide loaded it a second time (issue 34).
    import subprocess

    out = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-W", "error::FutureWarning",
            "tests/site/test_noxfile.py::test_new_and_merge_need_no_torch",
            "tests/site/test_guide.py::test_nox_session_guide_builds_it_into_build_guide_in_the_reference_environment",
        ],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout and "warning" not in out.stdout, out.stdout
