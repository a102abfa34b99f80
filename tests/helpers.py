"""Helpers shared by the tests (imported as a plain module: tests/ is on sys.path)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from bs4 import BeautifulSoup
from markdown_it.renderer import RendererHTML
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.directives import parse_directive_text
from myst_parser.parsers.mdit import create_md_parser
from snipcheck.sphinxext.directive import SnippetDirective

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def plain(text: str) -> str:
    """Sphinx console output without its terminal control: colour codes and
    the erase-line code (``ESC[2K``) that Sphinx's ``status_iterator`` puts
    before each progress line once it believes it writes to a colour terminal
    (``FORCE_COLOR``, ``COLORTERM`` or a CI's ``TERM``); a carriage return
    that ends such a line counts as a line end."""
    return _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")


def snipcheck_warnings(text: str) -> list[str]:
    """The snipcheck warnings in a Sphinx warning stream, one string each
    (a warning's message may span several lines; each one ends with its
    ``[snipcheck.<subtype>]`` tag)."""
    return re.findall(r"^.*?WARNING: .*?\[snipcheck\.\w+\]$", plain(text), re.MULTILINE | re.DOTALL)


def directive_line(source: Path, snippet_id: str) -> int:
    """1-based line of the directive that places ``snippet_id`` in ``source``."""
    for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), start=1):
        if re.match(rf"^\s*(`{{3,}}|~{{3,}}){{snippet}}\s+{re.escape(snippet_id)}\s*$", line):
            return number
    raise AssertionError(f"{snippet_id} is not placed in {source}")


def html(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


# --- myst-parser as the oracle for what the Sphinx build reads -----------------

#: Directives whose content MyST parses as Markdown (so snippets may sit inside).
CONTAINERS = frozenset({"tab-set", "tab-item", "note", "dropdown", "admonition", "card"})


class _Container:
    """Option spec of the container directives above, enough to split their content."""

    option_spec = {k: str for k in ("sync", "class", "class-container", "class-label", "class-content", "name", "open", "selected")}
    required_arguments = 0
    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True


def _parser():
    return create_md_parser(MdParserConfig(enable_extensions={"colon_fence"}), RendererHTML)


def myst_snippets(text: str, offset: int = 0) -> list[tuple[int, str, str, dict[str, str]]]:
    """Every snippet directive as myst-parser reads it: ``(line, id, body, options)``.

    The body is what :class:`SnippetDirective` receives as ``self.content``
    (joined with newlines), computed with myst-parser's own functions.
    """
    found = []
    for token in _parser().parse(text):
        if token.type not in ("fence", "colon_fence") or not token.info.startswith("{"):
            continue
        name, _, argument = token.info[1:].partition("}")
        line = offset + token.map[0] + 1
        if name == "snippet":
            parsed = parse_directive_text(SnippetDirective, argument.strip(), token.content)
            found.append((line, parsed.arguments[0], "\n".join(parsed.body), dict(parsed.options)))
        elif name in CONTAINERS:
            parsed = parse_directive_text(_Container, argument.strip(), token.content)
            found.extend(myst_snippets("\n".join(parsed.body), line + parsed.body_offset))
    return found


def myst_outline(text: str) -> list:
    """The block structure MyST sees, snippet bodies left out: fences with
    their info strings (recursing into containers) and the inline text of
    every other block.  A rewrite of snippet bodies must leave it unchanged."""
    outline: list = []
    for token in _parser().parse(text):
        if token.type in ("fence", "colon_fence"):
            outline.append((token.type, token.info.strip()))
            name = token.info[1:].partition("}")[0] if token.info.startswith("{") else ""
            if name in CONTAINERS:
                parsed = parse_directive_text(_Container, token.info.partition("}")[2].strip(), token.content)
                outline.append(myst_outline("\n".join(parsed.body)))
        elif token.type == "inline":
            outline.append(token.content)
    return outline


# --- a fake "torch" release, for tests about version changes --------------------


def fake_python(directory: Path, version: str, module: str) -> Path:
    """An interpreter wrapper whose ``import torch`` imports ``module`` (source
    text) as torch ``version``: a fake release, installed without a download.

    The wrapper puts a directory holding ``torch/__init__.py`` and a
    ``torch-<version>.dist-info`` (so the environment probe reads the version)
    on ``PYTHONPATH`` and runs this interpreter.
    """
    import sys

    site = directory / f"fake-torch-{version}"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(module)
    dist = site / f"torch-{version}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
    wrapper = directory / f"python-torch-{version}"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{site}" exec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def write_project(root: Path, conf: str, files: Mapping[str, str | bytes], snippets: Mapping[str, str] = {}) -> Path:
    """A test project at ``root``: ``conf.py`` holding ``conf``, each of
    ``files`` (a path relative to ``root`` → its text, or bytes written as
    they are) and each of ``snippets`` (a snippet id → its Python code, at
    ``snippets/<id>.py``); folders are made as needed.  Returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "conf.py").write_text(conf)
    for name, text in {**files, **{f"snippets/{i}.py": code for i, code in snippets.items()}}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return root


def snipcheck_cli(project: Path, *args: str, cache: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m snipcheck --root PROJECT ARGS`` in a subprocess.

    :param cache: the result cache (``SNIPCHECK_CACHE_DIR``); ``None`` leaves
        the project's own ``snipcheck_cache_dir`` in force.
    """
    env = {k: v for k, v in os.environ.items() if k != "SNIPCHECK_CACHE_DIR"}
    if cache is not None:
        env["SNIPCHECK_CACHE_DIR"] = str(cache)
    return subprocess.run(
        [sys.executable, "-m", "snipcheck", "--root", str(project), *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


# --- the placement index of a test project -------------------------------------------


def placements_in(page: Path) -> list:
    """The placements whose directive sits in ``page``, from the placement index
    of the project around it (the nearest folder above holding ``conf.py``),
    read as the build reads it, into a throwaway doctree directory."""
    import tempfile

    from snipcheck.app.project import Project
    from snipcheck.app.index_reader import read_index

    root = next(p for p in page.resolve().parents if (p / "conf.py").is_file())
    project, _ = Project.load(root)
    with tempfile.TemporaryDirectory() as tmp:
        found = read_index(project.srcdir, root, Path(tmp)).placements
    return [p for p in found if Path(p.source).resolve() == page.resolve()]


def environment_label() -> str:
    """What a stamp must name, found without snipcheck's own code: torch's
    version as its distribution states it, the interpreter's, the device
    (``torch 2.13.0+cpu · Python 3.11.7 · CPU``).  Tests compare the page
    with this, never with ``Stamp.label()`` (a wrong label would agree with
    itself)."""
    import importlib.metadata
    import platform

    try:
        torch = [f"torch {importlib.metadata.version('torch')}"]
    except importlib.metadata.PackageNotFoundError:
        torch = []
    return " · ".join([*torch, f"Python {platform.python_version()}", "CPU"])


def block_kinds(classes: list[str]) -> list[str]:
    """An output block's ``snipcheck-*`` classes that say its stream and kind
    (``snipcheck-stdout``, ``snipcheck-traceback`` ...), without the layout
    marker ``snipcheck-wraps`` (whether a block may wrap: test_display's
    ``may_wrap`` tests and the browser tests check it)."""
    return [c for c in classes if c.startswith("snipcheck-") and c != "snipcheck-wraps"]
