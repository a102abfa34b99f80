"""Unit tests of snipcheck.docsource: finding snippet directives and rewriting their bodies.

The oracle for "what the Sphinx build reads" is myst-parser itself
(:func:`helpers.myst_snippets`); a real Sphinx build over rewritten bodies is
in test_build_roundtrip.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from helpers import myst_outline, myst_snippets
from snipcheck.docsource import UnwritableBody, rewrite, rewrite_text, scan, scan_text, scan_tree

MD = Path("chapter.md")

CHAPTER = """\
# 就地操作

Prose before, with trailing spaces   
and a tab\there.

```{snippet} inplace/storage
add_ keeps the storage: True
```

```python
# an ordinary code block is not a snippet
```{snippet} not/this-one
```

````{tab-set}
```{tab-item} PyTorch
:sync: torch

~~~{snippet} inplace/in-backticks
in backticks
~~~
```
````

::::{tab-set}
:::{tab-item} burn
```{snippet} inplace/in-colons
:stated-env: torch 2.15.0+cu128 · Python 3.12.3 · CUDA (NVIDIA H200)

in colons
```
:::
::::

```{snippet} inplace/yaml-options
---
stated-env: torch 2.13.0+cpu
---
yaml
```

- a list item

  ```{snippet} inplace/in-list

  first line
    indented line
  ```

```{snippet} inplace/empty
```
"""


def summary(text: str) -> list[tuple[int, str, str, dict[str, str]]]:
    return [(p.line, p.snippet_id, p.body, dict(p.options)) for p in scan_text(text, MD)]


def test_scan_finds_every_directive_with_its_line_id_options_and_body() -> None:
    assert summary(CHAPTER) == [
        (6, "inplace/storage", "add_ keeps the storage: True", {}),
        (19, "inplace/in-backticks", "in backticks", {}),
        (27, "inplace/in-colons", "in colons", {"stated-env": "torch 2.15.0+cu128 · Python 3.12.3 · CUDA (NVIDIA H200)"}),
        (35, "inplace/yaml-options", "yaml", {"stated-env": "torch 2.13.0+cpu"}),
        (44, "inplace/in-list", "first line\n  indented line", {}),
        (50, "inplace/empty", "", {}),
    ]


def test_scan_agrees_with_myst_parser_on_the_chapter() -> None:
    assert summary(CHAPTER) == myst_snippets(CHAPTER)


def test_scan_ignores_a_snippet_shown_as_an_example_in_a_code_block() -> None:
    # A page documenting the syntax shows a snippet directive inside a
    # code-block; MyST renders it as code, so it places nothing (and record
    # must never rewrite it).
    text = "````{code-block} markdown\n```{snippet} inplace/storage\nexample output\n```\n````\n"
    assert myst_snippets(text) == []
    assert summary(text) == []


def test_scan_does_not_end_a_body_at_a_line_indented_four_spaces() -> None:
    # CommonMark: a closing fence is indented by at most three spaces; an
    # output line "    ```" is part of the body.
    text = "```{snippet} md/printer\n    ```\nafter the indented fence\n```\n\nProse.\n"
    assert myst_snippets(text) == [(1, "md/printer", "    ```\nafter the indented fence", {})]
    assert summary(text) == myst_snippets(text)


def test_scan_tree_orders_by_file_and_skips_underscore_directories(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("```{snippet} b/one\n```\n", encoding="utf-8")
    (tmp_path / "a.md").write_text("x\n\n```{snippet} a/one\n```\n```{snippet} a/two\n```\n", encoding="utf-8")
    (tmp_path / "_build").mkdir()
    (tmp_path / "_build" / "c.md").write_text("```{snippet} c/one\n```\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("```{snippet} t/one\n```\n", encoding="utf-8")
    assert [(p.path.name, p.line, p.snippet_id) for p in scan_tree(tmp_path)] == [
        ("a.md", 3, "a/one"),
        ("a.md", 5, "a/two"),
        ("b.md", 1, "b/one"),
    ]


# --- rewrite ------------------------------------------------------------------


def test_rewrite_changes_only_the_body_and_keeps_every_other_byte() -> None:
    placements = {p.snippet_id: p for p in scan_text(CHAPTER, MD)}
    target = placements["inplace/in-colons"]
    new = rewrite_text(CHAPTER, {target.line: ("new line 1\nnew line 2", {})}, MD)
    old_lines, new_lines = CHAPTER.split("\n"), new.split("\n")
    assert new_lines[: target.body_start] == old_lines[: target.body_start]
    assert new_lines[target.body_start : target.body_start + 2] == ["new line 1", "new line 2"]
    assert new_lines[target.body_start + 2 :] == old_lines[target.body_end :]
    # The body grew by one line: directives below it move down by one.
    assert summary(new) == [
        (
            line + (line > target.line),
            sid,
            "new line 1\nnew line 2" if sid == "inplace/in-colons" else body,
            opts,
        )
        for line, sid, body, opts in summary(CHAPTER)
    ]


def test_rewrite_of_several_bodies_applies_each_once() -> None:
    placements = scan_text(CHAPTER, MD)
    edits = {p.line: (f"{p.snippet_id} output\nsecond", {}) for p in placements}
    new = rewrite_text(CHAPTER, edits, MD)
    assert [(p.snippet_id, p.body) for p in scan_text(new, MD)] == [
        (p.snippet_id, f"{p.snippet_id} output\nsecond") for p in placements
    ]
    again = {p.line: (p.body, {}) for p in scan_text(new, MD)}
    assert rewrite_text(new, again, MD) == new


def test_rewrite_sets_an_option_and_keeps_the_others() -> None:
    line = next(p.line for p in scan_text(CHAPTER, MD) if p.snippet_id == "inplace/storage")
    new = rewrite_text(CHAPTER, {line: ("x", {"stated-env": "torch 2.13.0+cpu · Python 3.11.7 · CPU"})}, MD)
    placed = next(p for p in scan_text(new, MD) if p.snippet_id == "inplace/storage")
    assert dict(placed.options) == {"stated-env": "torch 2.13.0+cpu · Python 3.11.7 · CPU"}
    assert placed.body == "x"
    assert next(s for s in myst_snippets(new) if s[1] == "inplace/storage")[2:] == (
        "x",
        {"stated-env": "torch 2.13.0+cpu · Python 3.11.7 · CPU"},
    )


def test_rewrite_of_a_line_without_directive_is_refused() -> None:
    with pytest.raises(KeyError) as info:
        rewrite_text(CHAPTER, {3: ("x", {})}, MD)
    assert info.value.args[0] == "chapter.md:3: no snippet directive opens on this line"


def test_rewrite_file_writes_only_when_something_changed(tmp_path: Path) -> None:
    path = tmp_path / "chapter.md"
    path.write_text(CHAPTER, encoding="utf-8")
    line = scan(path)[0].line
    stat = path.stat()
    assert rewrite(path, {line: ("add_ keeps the storage: True", {})}) is False
    assert path.stat().st_mtime_ns == stat.st_mtime_ns
    assert rewrite(path, {line: ("add_ keeps the storage: False", {})}) is True
    assert scan(path)[0].body == "add_ keeps the storage: False"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chapter.md"]


def test_rewrite_file_keeps_its_permissions(tmp_path: Path) -> None:
    path = tmp_path / "chapter.md"
    path.write_text(CHAPTER, encoding="utf-8")
    path.chmod(0o644)
    assert rewrite(path, {scan(path)[0].line: ("changed", {})}) is True
    assert path.stat().st_mode & 0o777 == 0o644


# --- round trips: rewrite then read back, by snipcheck and by myst-parser ----

BODIES = [
    "",
    "hello",
    "a\n\nb",
    ":colon first",
    "  :indented colon",
    ":a: b\n\nc",
    "---",
    "--- dashes",
    "---\nx\n---\ny",
    "\nblank first",
    "\n\ntwo blanks first",
    "```",
    "````\n```",
    "text\n```python\ncode\n```",
    "~~~",
    "trailing spaces  ",
    "\ttab",
    "    indented",
]

STARTS = {
    "plain": "```{snippet} a/b\nold\n```",
    "empty": "```{snippet} a/b\n```",
    "colon-options": "```{snippet} a/b\n:stated-env: torch 2.13\n\nold\n```",
    "yaml-options": "```{snippet} a/b\n---\nstated-env: torch 2.13\n---\nold\n```",
    "blank-first": "```{snippet} a/b\n\nold\n```",
    "tilde": "~~~{snippet} a/b\nold\n~~~",
    "colon-tab-set": "::::{tab-set}\n:::{tab-item} A\n```{snippet} a/b\nold\n```\n:::\n::::",
    "backtick-tab-set": "`````{tab-set}\n````{tab-item} A\n```{snippet} a/b\nold\n```\n````\n`````",
    "list-item": "- item\n\n  ```{snippet} a/b\n  old\n  ```",
}


def unwritable(body: str, placement) -> bool:  # type: ignore[no-untyped-def]
    """A body with a line that would close an enclosing fence: Markdown cannot hold it there."""
    return any(
        re.search(rf"^ {{0,3}}{re.escape(f[0])}{{{len(f)},}}[ \t]*$", body, re.M) for f in placement.enclosing
    )


def document(start: str) -> str:
    return f"# T\n\nbefore\n\n{STARTS[start]}\n\nafter\n"


@pytest.mark.parametrize("start", STARTS)
def test_rewrite_then_scan_returns_the_same_body(start: str) -> None:
    text = document(start)
    (placement,) = scan_text(text, MD)
    wrong = []
    for body in BODIES:
        for options in ({}, {"stated-env": "E"}):
            if unwritable(body, placement):
                with pytest.raises(UnwritableBody, match="would close the enclosing"):
                    rewrite_text(text, {placement.line: (body, options)}, MD)
                continue
            new = rewrite_text(text, {placement.line: (body, options)}, MD)
            found = scan_text(new, MD)
            if [(p.body, dict(p.options)) for p in found] != [(body, dict(placement.options) | options)]:
                wrong.append((body, options, [p.body for p in found]))
    assert wrong == []


@pytest.mark.parametrize("start", STARTS)
def test_rewrite_is_read_back_identically_by_myst_parser(start: str) -> None:
    # What the Sphinx build sees after a record must be exactly what was
    # recorded, and the page around the directive must keep its structure.
    text = document(start)
    (placement,) = scan_text(text, MD)
    outline = myst_outline(text)
    wrong = []
    for body in BODIES:
        for options in ({}, {"stated-env": "E"}):
            if unwritable(body, placement):
                continue  # refused with a clear error, see the test above
            new = rewrite_text(text, {placement.line: (body, options)}, MD)
            seen = [(b, o) for _, _, b, o in myst_snippets(new)]
            if seen != [(body, dict(placement.options) | options)] or myst_outline(new) != outline:
                wrong.append((body, options, seen))
    assert wrong == []


def test_scan_agrees_with_myst_parser_on_rewritten_documents() -> None:
    wrong = []
    for start in STARTS:
        text = document(start)
        (placement,) = scan_text(text, MD)
        for body in BODIES:
            if unwritable(body, placement):
                continue
            new = rewrite_text(text, {placement.line: (body, {})}, MD)
            if summary(new) != myst_snippets(new):
                wrong.append((start, body))
    assert wrong == []


@pytest.mark.parametrize("start", ["plain", "colon-options", "yaml-options"])
def test_body_ending_in_blank_lines_is_read_back_by_myst_parser(start: str) -> None:
    # Output ending with blank lines (print(x); print(); print()) gives a
    # stated output that ends in "\n"s (one final newline is dropped by the
    # comparison, the others are significant).  Recorded with a stated-env
    # option, as record does for snippets with requirements, Sphinx must
    # read back the same text or the snippet drifts forever.
    text = document(start)
    (placement,) = scan_text(text, MD)
    body = "last line then two blank lines\n\n"
    new = rewrite_text(text, {placement.line: (body, {"stated-env": "E"})}, MD)
    assert [p.body for p in scan_text(new, MD)] == [body]
    assert [b for _, _, b, _ in myst_snippets(new)] == [body]
