"""The modules beside a tutorial script that its code imports.

sphinx-gallery puts an example's folder on ``sys.path``, as ``python
script.py`` does, so an example imports the modules beside it
(``from local_module import N``).  A script's cell does too (its run has the
script's folder first on ``sys.path``, see
:attr:`snipcheck.model.Tags.script_cell`), and the modules it imports from
there go with its run: copied into its run directory and part of its cache
key, so that an edit of such a module runs the cell again.  Nothing has to be
declared: the cell's imports are read from its code (``import m``, ``from m
import n``, ``from pkg.sub import n``, anywhere in it), and so are the
imports of each module found, recursively.  A module file ``m.py`` or a
package folder ``m/`` (all of its ``.py`` files) beside the script counts; an
import of anything else is left to the run.  What code imports only through
``importlib`` by a computed name is not seen: declare such files with
``depends``.

Pure core: standard library only.
"""

from __future__ import annotations

import ast
from pathlib import Path

__all__ = ["local_modules"]

#: At most this many files go with one cell (a folder of thousands is a mistake to report, not to copy).
LIMIT = 200


def local_modules(code: str, folder: Path, script: Path) -> list[Path]:
    """The files beside ``script`` (in ``folder``) that ``code`` imports, directly or through them.

    :return: absolute paths, sorted; the script itself never.
    """
    found: dict[Path, None] = {}
    todo = [code]
    seen: set[str] = set()
    while todo and len(found) < LIMIT:
        for name in _imported(todo.pop()):
            if name in seen:
                continue
            seen.add(name)
            for path in _files_of(name, folder):
                if path != script and path not in found:
                    found[path] = None
                    try:
                        todo.append(path.read_text(encoding="utf-8"))
                    except (OSError, UnicodeDecodeError):
                        continue  # unreadable: its import fails in the run, visibly
    return sorted(found)


def _imported(code: str) -> list[str]:
    """Top-level names of the absolute imports in ``code`` (none if it does not parse)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name.partition(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.partition(".")[0])
    return names


def _files_of(name: str, folder: Path) -> list[Path]:
    module = folder / f"{name}.py"
    if module.is_file():
        return [module.resolve()]
    package = folder / name
    if (package / "__init__.py").is_file():
        return sorted(p.resolve() for p in package.rglob("*.py") if p.is_file())
    return []
