"""The test suite's own shape: no module of the suite imports a test module.

What test modules share (fixtures, helpers, constants, sample projects) lives
in a support module beside ``conftest.py`` (helpers, load, faults_support,
shard_support, chain_support, runner_support, ...), which every test module
imports by name.  A test module imported by another is no longer only a test
module: renaming, moving or splitting it breaks a module elsewhere, and its
tests' names and fixtures leak into the importer.  The imports are read with
:mod:`ast` (those inside functions too), never run.

Imports only the standard library, pytest and ``conftest``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from conftest import TESTS

#: How a module is imported by a string: ``importlib.import_module("x")``, ``__import__("x")``.
IMPORT_CALLS = frozenset({"import_module", "__import__"})


def suite_modules(tests: Path) -> list[Path]:
    """The suite's Python modules: those beside ``conftest.py`` and those of
    each test folder (a folder holding a ``test_*.py``, which conftest puts on
    ``sys.path``); the projects under ``roots/`` and ``corpus/`` are not the suite's."""
    folders = [tests, *(f for f in sorted(tests.iterdir()) if f.is_dir() and any(f.glob("test_*.py")))]
    return [path for folder in folders for path in sorted(folder.glob("*.py"))]


def imported_names(tree: ast.AST) -> Iterator[tuple[int, int, list[str]]]:
    """The modules each import of ``tree`` may load: ``(line, relative level, dotted names)``.

    ``from a.b import c`` may load ``a.b`` and ``a.b.c`` (``c`` may be a module)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, 0, [alias.name]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names = [f"{base}.{a.name}" if base else a.name for a in node.names if a.name != "*"]
            yield node.lineno, node.level, [base, *names] if base else names
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if called in IMPORT_CALLS and isinstance(node.args[0].value, str):
                yield node.lineno, 0, [node.args[0].value]


def imports_of_test_modules(tests: Path) -> list[str]:
    """Every import of a test module by a module of the suite under ``tests``,
    as ``path:line imports name``: a plain ``test_x`` (the test folders are on
    ``sys.path``), ``tests.<folder>.test_x``, or relative (``from . import test_x``)."""
    modules = suite_modules(tests)
    test_names = {path.stem for path in modules if path.name.startswith("test_")}
    found = set()
    for path in modules:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, level, names in imported_names(tree):
            for name in names:
                parts = name.split(".")
                if parts[0] in test_names or ((level > 0 or parts[0] == "tests") and test_names & set(parts)):
                    found.add((path.relative_to(tests).as_posix(), line, name))
                    break
    return [f"{path}:{line} imports {name}" for path, line, name in sorted(found)]


def test_no_module_of_the_suite_imports_a_test_module() -> None:
    assert imports_of_test_modules(TESTS) == [], (
        "move what they share into a support module beside conftest.py"
    )


def test_every_way_of_importing_a_test_module_is_found(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    (tests / "run").mkdir(parents=True)
    (tests / "roots" / "test-x").mkdir(parents=True)
    (tests / "conftest.py").write_text("import helpers\n")
    (tests / "helpers.py").write_text("from test_runner import write\n")
    (tests / "run" / "test_runner.py").write_text(
        "from conftest import TESTS\nfrom helpers import plain\nimport pytest\n"
    )
    (tests / "run" / "test_cases.py").write_text(
        "import test_runner as runner\n"
        "from test_runner import *\n"
        "from tests.run.test_runner import project\n"
        "from tests.run import test_runner\n"
        "from . import test_runner\n"
        "from .test_runner import write\n"
        "def later():\n"
        "    from test_runner import stream\n"
        "    return importlib.import_module('test_runner'), __import__('test_runner')\n"
        "from runner_support import test_runner_kinds\n"  # a name, not a test module: not an import of one
        "import test_missing\n"  # no such test module
    )
    # a project's snippet under roots/ is not the suite's
    (tests / "roots" / "test-x" / "test_snippet.py").write_text("import test_runner\n")
    assert imports_of_test_modules(tests) == [
        "helpers.py:1 imports test_runner",
        "run/test_cases.py:1 imports test_runner",
        "run/test_cases.py:2 imports test_runner",
        "run/test_cases.py:3 imports tests.run.test_runner",
        "run/test_cases.py:4 imports tests.run.test_runner",
        "run/test_cases.py:5 imports test_runner",
        "run/test_cases.py:6 imports test_runner",
        "run/test_cases.py:8 imports test_runner",
        "run/test_cases.py:9 imports test_runner",
    ]
