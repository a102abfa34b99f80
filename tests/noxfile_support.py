"""noxfile.py's sessions run against a recording stand-in for ``nox.Session``:
nothing is installed, but every command, with the environment it runs in, is
recorded.  Shared by the tests of the nox sessions (``site/test_noxfile.py``,
``site/test_guide.py``).

Not a test module: test modules import it, never each other; a test module
imports the fixture ``noxfile`` by name (it uses conftest's session-wide
``loaded_noxfile``).  Imports the standard library and pytest only.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


class Recorder:
    """Stands in for ``nox.Session``: records ``run`` calls; ``-m venv`` makes the interpreter file."""

    def __init__(self, posargs: list[str] | None = None) -> None:
        self.posargs = posargs or []
        self.calls: list[tuple[list[str], dict[str, Any]]] = []

    def run(self, *args: str, **kwargs: Any) -> None:
        self.calls.append((list(args), kwargs))
        if list(args[1:3]) == ["-m", "venv"]:
            python = Path(args[3]) / "bin" / "python"
            python.parent.mkdir(parents=True)
            python.touch()

    def log(self, *_: object) -> None:
        pass

    def error(self, message: str) -> None:
        raise AssertionError(message)

    def installs(self) -> list[list[str]]:
        """The arguments of every ``pip install``."""
        return [args[args.index("install") + 1 :] for args, _ in self.calls if "pip" in args and "install" in args]

    def last_env(self) -> str:
        """The environment (``VIRTUAL_ENV``) the session's own command ran in."""
        return self.calls[-1][1]["env"]["VIRTUAL_ENV"]


@pytest.fixture
def noxfile(loaded_noxfile: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """noxfile.py with its environments under this test's temporary directory."""
    monkeypatch.setattr(loaded_noxfile, "ENVS", tmp_path / ".nox")
    return loaded_noxfile


def session(noxfile: ModuleType, name: str, *posargs: str) -> Recorder:
    recorder = Recorder(list(posargs))
    func = next(f for f in vars(noxfile).values() if getattr(f, "__name__", None) == name.replace("-", "_"))
    func(recorder)
    return recorder
