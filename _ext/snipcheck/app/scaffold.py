"""``snipcheck new ID``: create a snippet file and print its directive
(``--cell``: print a cell holding the code, to paste into a page).

The new file holds a small starting point that needs nothing beyond the
standard library and, when the snippet needs tags, a tag block at its end (so
the page's line numbers match the file's).  Nothing is ever overwritten: an
existing file is reported and left alone.  The directive printed is written
in the markup of the project's pages (:func:`page_markup`), and the next step
names the project's own record command (``snipcheck_record_command``).

Pure core: standard library and snipcheck's core modules.
"""

from __future__ import annotations

import os
from pathlib import Path

from snipcheck.files import signals_held
from snipcheck.model import Tags
from snipcheck.run.requirements import RequirementError, check
from snipcheck.settings import Settings
from snipcheck.sources import tags as tags_mod
from snipcheck.sources.placement import OUTPUT_SEPARATOR
from snipcheck.sources.snippets import SUFFIXES, SnippetError, check_id

PYTHON = """numbers = [1.5, 2.5, 4.0]
print("numbers:", numbers)
print("sum:", sum(numbers))
"""

RUST = """fn main() {
    let v = vec![1.0f32, 2.0];
    println!("v = {:?}", v);
}
"""


class ScaffoldError(ValueError):
    """What ``new`` was asked cannot be made: an invalid id, tag or
    requirement, or a snippet file that exists (bad input: nothing is written)."""


#: Suffixes of the pages of each markup.
_MARKUP_SUFFIXES = {"rst": (".rst",), "myst": (".md",)}


def page_markup(srcdir: Path) -> str:
    """The markup the project's pages are written in: ``"rst"`` or ``"myst"``.

    The root document decides (``index.rst`` or ``index.md``); without one,
    the more common suffix among the pages (folders whose name starts with
    ``_`` or ``.``, such as ``_build`` and ``_static``, are not pages);
    reStructuredText, Sphinx's own default, when nothing tells.

    :param srcdir: the pages' folder (``snipcheck_source_dir``).
    """
    for markup, suffixes in _MARKUP_SUFFIXES.items():
        if any((srcdir / f"index{suffix}").is_file() for suffix in suffixes):
            return markup
    counts = dict.fromkeys(_MARKUP_SUFFIXES, 0)
    for folder, dirs, files in os.walk(srcdir):
        dirs[:] = [d for d in dirs if not d.startswith(("_", "."))]
        for name in files:
            for markup, suffixes in _MARKUP_SUFFIXES.items():
                counts[markup] += name.endswith(suffixes)
    return "myst" if counts["myst"] > counts["rst"] else "rst"


def directive(snippet_id: str, markup: str) -> str:
    """The ``snippet`` directive placing ``snippet_id`` with an empty body, in ``markup``."""
    if markup == "myst":
        return f"```{{snippet}} {snippet_id}\n```"
    return f".. snippet:: {snippet_id}"


def cell(snippet_id: str, markup: str, code: str, language: str = "python") -> str:
    """A cell placing ``snippet_id``: a ``snippet-code`` directive holding
    ``code``, then the output separator and no output yet, in ``markup``."""
    lines = [*code.rstrip("\n").split("\n"), OUTPUT_SEPARATOR]
    option = [] if language == "python" else [f":language: {language}"]
    if markup == "myst":
        return "\n".join([f"```{{snippet-code}} {snippet_id}", *option, *lines, "```"])
    head = [f".. snippet-code:: {snippet_id}", *("   " + o for o in option), ""]
    return "\n".join([*head, *("   " + line if line else "" for line in lines)])


def new(
    settings: Settings,
    snippet_id: str,
    *,
    rust: bool,
    expect: str,
    requires: list[str],
    srcdir: Path | None = None,
    written: list[Path] | None = None,
    in_page: bool = False,
) -> int:
    """Create ``<snippets dir>/<id>.py`` (or ``.rs``) and print the directive to paste.

    :param settings: the project's settings (snippets folder, provides, record command).
    :param snippet_id: the new snippet's id, e.g. ``tutorial/first-step``.
    :param rust: a Rust snippet (``.rs``) instead of Python.
    :param expect: how the snippet must end, as its ``expect`` tag (``"ok"``: no tag).
    :param requires: requirements for its ``requires`` tag, e.g. ``["cuda"]``.
    :param srcdir: the pages' folder (default: ``settings.source_dir``, else
        the project root); its markup decides the directive's syntax.
    :param written: the new file is appended to it once written (for the
        command line's message after a Ctrl-C).
    :param in_page: write no file: print a cell (:func:`cell`) holding the
        code, to paste into a page.
    :return: exit status 0 (created, or the cell printed).
    :raises ScaffoldError: when the file exists or the id, tags or
        requirements are invalid (its message says which; nothing is
        written then).
    """
    try:
        check_id(snippet_id)
        for req in requires:
            check(req, settings.provides, settings.requirements)
    except (SnippetError, RequirementError) as exc:
        raise ScaffoldError(str(exc)) from None
    language = "rust" if rust else "python"
    suffix = next(s for s, lang in SUFFIXES.items() if lang == language)
    path = settings.snippets_dir / f"{snippet_id}{suffix}"
    others = [settings.snippets_dir / f"{snippet_id}{s}" for s in SUFFIXES]
    existing = [p for p in others if p.exists()]
    if existing:
        raise ScaffoldError(f"{existing[0]} already exists; choose another id (nothing was written)")
    block = tags_mod.render(Tags(expect=expect, requires=tuple(requires)), language)
    try:
        tags_mod.parse(block or "", language)
    except tags_mod.TagError as exc:
        raise ScaffoldError(exc.message) from None
    text = (RUST if rust else PYTHON) + (f"\n{block}\n" if block else "")
    pages = (srcdir or settings.source_dir or settings.root).resolve()
    if in_page:
        print("paste this cell into a page where the code belongs (its code and output live in the page):\n")
        print(cell(snippet_id, page_markup(pages), text, language) + "\n")
        print(f"then fill in its output from a real run: {settings.record_command.format(id=snippet_id)}")
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with signals_held():  # a Ctrl-C between creating and filling it would leave an empty file
        with open(path, "x", encoding="utf-8") as f:  # "x": never overwrite
            f.write(text)
        if written is not None:
            written.append(path)
    root = settings.root.resolve()
    print(f"created {_shown(path, root)}")
    where = "a page" if pages == root else f"a page under {_shown(pages, root)}/"
    print(f"paste this into {where} where the code belongs:\n")
    print(directive(snippet_id, page_markup(pages)) + "\n")
    print(f"then fill in its output from a real run: {settings.record_command.format(id=snippet_id)}")
    return 0


def _shown(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` when inside it, else as given."""
    resolved = path.resolve()
    return resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else str(path)
