"""Lint of the chapter sources: every shown piece of code is a checked snippet.

* every code block in ``docs/`` is a snippet directive: no bare
  ```` ```python ````, ```` ```rust ```` or ```` ```pycon ```` fence, no
  ```` ```{code-block} python ````, no indented code block, no
  ``literalinclude`` of a ``.py``/``.rs`` file, at any depth of nesting
  (inside tabs, dropdowns, admonitions);
* each snippet id is placed once across all pages, and no two ids give the
  same HTML anchor;
* every placed id has a file, and every file under ``snippets/`` is placed
  (helper files, whose names start with ``_``, excepted);
* every placed snippet states a non-empty output, except snippets whose
  ``requires`` are unmet where they were written and that were therefore
  never recorded: a ``requires`` tag and an empty body.  Those are listed.

Placements come from the placement index (the pages read by Sphinx as the
build reads them).  Bare code blocks are found with myst-parser's own
tokenizer, so a fence inside a ```` ```text ```` example is an example, not
code.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO
from docutils import nodes
from markdown_it.renderer import RendererHTML
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser
from snipcheck.sources.placement import Placement
from snipcheck.sources.snippets import SnippetError, discover, load

DOCS = REPO / "docs"
SNIPPETS = REPO / "snippets"

#: Fence languages that are code a reader would run: they must be snippets.
CODE_LANGUAGES = frozenset({"python", "python3", "py", "py3", "pycon", "ipython", "ipython3", "rust", "rs"})
#: Directives that show code given in their body or argument.
CODE_DIRECTIVES = frozenset({"code-block", "code", "sourcecode", "code-cell"})
#: Directives whose body is not Markdown: not searched for nested code blocks.
OPAQUE = frozenset(
    {"code-block", "code", "sourcecode", "code-cell", "literalinclude", "raw", "math", "mermaid", "graphviz",
     "csv-table", "eval-rst", "parsed-literal", "highlight", "snipcheck-versions", "snippet", "refuted-claim",
     "toctree", "reading-time", "snipcheck-environment"}
)


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _parser():
    return create_md_parser(MdParserConfig(enable_extensions={"colon_fence", "deflist"}), RendererHTML)


def _directive_body(content: str) -> tuple[str, int]:
    """A directive's Markdown body without its option block, and the lines dropped."""
    lines = content.split("\n")
    skip = 0
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
        skip = end + 1
    else:
        while skip < len(lines) and re.match(r"^:[\w-]+:", lines[skip]):
            skip += 1
    return "\n".join(lines[skip:]), skip


def code_blocks(text: str, path: str, offset: int = 0) -> list[Finding]:
    """Code blocks in MyST ``text`` that are not snippet directives."""
    found: list[Finding] = []
    for token in _parser().parse(text):
        line = offset + (token.map[0] if token.map else 0) + 1
        if token.type == "code_block":
            found.append(Finding(path, line, "indented code block (use a snippet directive)"))
            continue
        if token.type not in ("fence", "colon_fence"):
            continue
        info = token.info.strip()
        if not info.startswith("{"):
            language = info.split()[0].lower() if info else ""
            if token.type == "fence" and language in CODE_LANGUAGES:
                found.append(Finding(path, line, f"```{language} fence (use a snippet directive)"))
            continue
        name, _, argument = info[1:].partition("}")
        words = argument.split()
        language = words[0].lower() if words else ""
        if name in CODE_DIRECTIVES and language in CODE_LANGUAGES:
            found.append(Finding(path, line, f"{{{name}}} {language} (use a snippet directive)"))
        elif name == "literalinclude" and language.endswith((".py", ".rs")):
            found.append(Finding(path, line, f"{{literalinclude}} {words[0]} (use a snippet directive)"))
        elif name not in OPAQUE:
            body, skipped = _directive_body(token.content)
            found.extend(code_blocks(body, path, line + skipped))
    return found


def _relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else str(path)


@pytest.fixture(scope="module")
def placements(chapter_placements: list[Placement]) -> list[Placement]:
    """The placement index: the same set the build, record and verify see."""
    return chapter_placements


def show(request: pytest.FixtureRequest, text: str) -> None:
    """Print past pytest's output capture (a list the lint owes its reader)."""
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(text)


# --- the lint itself, on known text ---------------------------------------------------


def test_the_lint_finds_code_blocks_at_any_depth_and_skips_examples() -> None:
    # Found: lines 3, 7, 15 (two levels down) and 34; not the example inside
    # ````text (line 21), the snippet (27) or the shell commands (30).
    text = """\
# Page

```python
import torch
```

```{code-block} rust
fn main() {}
```

::::{tab-set}
:::{tab-item} PyTorch
:sync: torch

```pycon
>>> 1
```
:::
::::

````text
```python
x = 1
```
````

```{snippet} inplace/storage
```

```bash
nox -s docs
```

    indented = True
"""
    assert [str(f) for f in code_blocks(text, "page.md")] == [
        "page.md:3: ```python fence (use a snippet directive)",
        "page.md:7: {code-block} rust (use a snippet directive)",
        "page.md:15: ```pycon fence (use a snippet directive)",
        "page.md:34: indented code block (use a snippet directive)",
    ]


# --- the chapter ---------------------------------------------------------------------------


def test_every_code_block_in_docs_is_a_snippet() -> None:
    found = []
    for path in sorted(DOCS.rglob("*.md")):
        found += code_blocks(path.read_text(encoding="utf-8"), _relative(path))
    assert not found, "code outside snippet directives:\n" + "\n".join(map(str, found))


def test_each_snippet_is_placed_once_and_anchors_are_unique(placements: list[Placement]) -> None:
    counts = Counter(p.snippet_id for p in placements)
    twice = {
        snippet_id: [f"{_relative(Path(p.source))}:{p.line}" for p in placements if p.snippet_id == snippet_id]
        for snippet_id, n in counts.items()
        if n > 1
    }
    assert not twice, f"snippet ids placed more than once: {twice}"
    anchors = Counter(nodes.make_id(f"snippet-{snippet_id}") for snippet_id in counts)
    assert [a for a, n in anchors.items() if n > 1] == []


def test_every_placed_id_has_a_file_and_every_file_is_placed(placements: list[Placement], chapter_index) -> None:
    placed = {p.snippet_id for p in placements}
    files = set(discover(SNIPPETS))
    in_pages = {c.snippet_id for c in chapter_index.code}  # code written in the page (snippet-code)
    assert in_pages and not in_pages & files, "an id with code both in a page and in a file"
    assert sorted(placed - files - in_pages) == [], "placed, but no file under snippets/ and no code in its page"
    assert sorted(files - placed) == [], "files under snippets/ that no page places (orphans)"


def test_every_snippet_states_its_output(placements: list[Placement], request: pytest.FixtureRequest) -> None:
    empty, never_recorded = [], []
    for placement in placements:
        if placement.stated.strip():
            continue
        where = f"{_relative(Path(placement.source))}:{placement.line}"
        try:
            requires = load(placement.snippet_id, SNIPPETS, REPO).tags.requires
        except SnippetError as exc:
            empty.append(f"{where}: {placement.snippet_id} ({exc.message})")
            continue
        if requires:
            never_recorded.append(f"{where}: {placement.snippet_id} (requires {', '.join(requires)})")
        else:
            empty.append(f"{where}: {placement.snippet_id}")
    assert not empty, "snippets without a stated output (record it: nox -s record -- ID):\n" + "\n".join(
        empty
    )
    if never_recorded:
        show(
            request,
            "\nsnippets never recorded, their requirements unmet where they were written "
            f"({len(never_recorded)}):\n  " + "\n  ".join(never_recorded),
        )
