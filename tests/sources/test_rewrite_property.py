"""Property tests of the rewrite: generated pages, every fence and line end, read by the real parsers.

Hypothesis writes MyST and reStructuredText pages (backtick, tilde and colon
fences, options blocks, directives nested in tab sets and dropdowns, CJK
prose, ``\\n``/``\\r\\n``/``\\r`` line ends mixed, a BOM or not) and new
stated outputs (blank lines, lines that look like fences, options or
headings).  For each, the rewrite must either

* give a page that Sphinx reads back with exactly the new stated outputs,
  every other stated output unchanged, and not one byte changed outside the
  directives it edited; or
* refuse, for the one reason the markup really has: a fence-like line that
  would close a directive around it.

An output the plain form cannot hold (:func:`snipcheck.sources.rewrite.holdable`:
a tab, trailing spaces, blank lines at its ends, a line break the parser
sees) is written in the escaped form, and must read back identical too.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from snipcheck.sources.placement import OUTPUT_SEPARATOR
from snipcheck.sources.rewrite import Edit, apply, holdable
from snipcheck.sources.sourcetext import SourceText
from snipcheck.app.index_reader import Reader

CONF = """\
extensions = ["myst_parser", "sphinx_design", "snipcheck"]
myst_enable_extensions = ["colon_fence"]
exclude_patterns = ["_build"]
"""

PROSE = st.text(alphabet="abcxyz 就地操作版本计数器，。", min_size=0, max_size=12)
BODY_LINE = st.one_of(
    st.text(alphabet="abz 09版本`~:-#>*_\\\t&", min_size=0, max_size=14),
    st.sampled_from(["", "   ", "```", "````", "~~~", ":::", "::::", "---", ":stated-env: x", "# heading", "- item",
                     "x  ", "\ttab", "a\fb", "u\u2028v", OUTPUT_SEPARATOR, ".. snippet:: x", "\\&", ":escapes:"]),
)
BODY = st.lists(BODY_LINE, min_size=0, max_size=4).map("\n".join)
ENDS = st.sampled_from(["\n", "\r\n", "\r"])
#: A cell's code: lines, and blocks whose string or docstring holds a separator line (issue 33 §3).
CODE = st.lists(
    st.one_of(
        st.sampled_from(["x = 1", "print(x)", "    y = ':a:'", "# ---", "s = '```'"]).map(lambda line: [line]),
        st.sampled_from([
            ['s = """', OUTPUT_SEPARATOR, '"""'],
            ["t = '''", "  " + OUTPUT_SEPARATOR, "x = 1", "'''"],
            ['"""Doc:', OUTPUT_SEPARATOR, '"""'],
            ["u = f'''{1}", OUTPUT_SEPARATOR, "'''"],
        ]),
    ),
    min_size=1, max_size=3,
).map(lambda blocks: [line for block in blocks for line in block])  # fmt: skip


@st.composite
def myst_page(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Lines of a MyST page (without line ends) and its snippet ids in order."""
    lines: list[str] = ["# Page"]
    ids: list[str] = []
    for n in range(draw(st.integers(1, 4))):
        lines += ["", "p" + draw(PROSE)]
        sid = f"g/s{n}"
        ids.append(sid)
        fence = draw(st.sampled_from(["```", "````", "~~~", ":::"]))
        cell = draw(st.booleans())  # a snippet-code cell: code, the separator, then the output
        head = [f"{fence}{{{'snippet-code' if cell else 'snippet'}}} {sid}"]
        head += draw(st.sampled_from([[], [":stated-env: torch 9 · CPU"], ["---", "stated-env: y", "---"]]))
        body = [line for line in draw(BODY).split("\n") if not re.match(r"^ {0,3}(`{3,}|~{3,}|:{3,})", line)]
        if cell:
            body = [*draw(CODE), OUTPUT_SEPARATOR, *body]
        if head[1:] and body and not body[0].strip():
            body = body[1:]
        if not head[1:] and body and (body[0].startswith((":", "---")) or not body[0].strip()):
            body = ["x", *body]
        block = [*head, *(([""] if head[1:] and body else []) + body), fence]
        nest = draw(st.sampled_from(["none", "tabs", "dropdown"]))
        if nest == "tabs":
            block = ["::::{tab-set}", ":::{tab-item} One", *block, ":::", "::::"] if fence != ":::" else block
        elif nest == "dropdown" and fence in ("```", "~~~"):
            block = ["`````{dropdown} Open", *block, "`````"]
        lines += ["", *block]
    lines += ["", "end"]
    return lines, ids


@st.composite
def rst_page(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    lines = ["Page", "====", ""]
    ids = []
    for n in range(draw(st.integers(1, 3))):
        sid = f"g/r{n}"
        ids.append(sid)
        indent = draw(st.sampled_from(["", "nested"]))
        cell = draw(st.booleans())
        block = [f".. {'snippet-code' if cell else 'snippet'}:: {sid}"]
        if draw(st.booleans()):
            block.append("   :stated-env: torch 9 · CPU")
        body = [line.rstrip() for line in draw(BODY).split("\n")]
        while body and not body[0] and not cell:
            body.pop(0)
        while body and not body[-1]:
            body.pop()
        body = [line for line in body if "\t" not in line]
        if cell:
            body = [*draw(CODE), OUTPUT_SEPARATOR, *body]
        if body:
            block += ["", *["   " + line if line else "" for line in body]]
        if indent == "nested":
            block = [".. tab-set::", "", "   .. tab-item:: One", "", *["      " + x if x else "" for x in block]]
        lines += ["p" + draw(PROSE).strip() or "p", "", *block, ""]
    lines += ["end"]
    return lines, ids


def joined(lines: list[str], ends: list[str], bom: bool) -> bytes:
    text = "".join(line + ends[i % len(ends)] for i, line in enumerate(lines))
    return ("\ufeff" if bom else "").encode() + text.encode("utf-8")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Reader]:
    root = tmp_path_factory.mktemp("property")
    (root / "conf.py").write_text(CONF)
    (root / "index.md").write_text("# Index\n")
    (root / "page.md").write_text("# Page\n")
    (root / "other.rst").write_text("Other\n=====\n")
    reader = Reader(root, root)
    yield root, reader
    reader.__exit__()


def regions(placements: list, text: SourceText) -> list[range]:
    """Line ranges a rewrite of a directive may touch: the directive from its
    opening line to its closing fence (MyST) or to the next text after its
    body (reStructuredText, blank lines around the body included)."""
    out = []
    for p in placements:
        start = p.line - 1
        if p.markup == "rst":
            end = max(p.body_end, p.head_end)
            while end < len(text) and not text.line(end).strip():
                end += 1
            start_ = start
            out.append(range(start_, end))
        else:
            out.append(range(start, p.body_end + (1 if p.closed else 0)))
    return out


def outside(text: SourceText, spans: list[range]) -> list[str]:
    inside = {i for span in spans for i in span}
    return [line for i, line in enumerate(text.lines) if i not in inside]


def check(project: tuple[Path, Reader], docname: str, suffix: str, raw: bytes, markup: str, data: st.DataObject) -> None:
    root, reader = project
    path = root / f"{docname}{suffix}"
    path.write_bytes(raw)
    old = reader.read([docname])[docname]
    assume(old and all(p.writable == "" for p in old))
    chosen = data.draw(st.lists(st.sampled_from(range(len(old))), unique=True, min_size=1))
    edits = []
    for i in chosen:
        options = data.draw(st.sampled_from([{}, {"stated-env": "torch 10 · CPU"}]))
        edits.append(Edit(old[i], data.draw(BODY), options))
    text = SourceText.read(path, markup)
    apply(text, edits)
    new_raw = text.to_bytes()
    assert new_raw.startswith(b"\xef\xbb\xbf") == raw.startswith(b"\xef\xbb\xbf")
    path.write_bytes(new_raw)
    new = reader.read([docname])[docname]
    wanted = {e.placement.line: e.body for e in edits}
    fence_like = any(re.search(r"^ {0,3}(`{3,}|~{3,}|:{3,})", e.body, re.MULTILINE) for e in edits)
    ok = [p.snippet_id for p in new] == [p.snippet_id for p in old] and all(
        n.stated in (wanted.get(o.line, o.stated), wanted.get(o.line, o.stated) + "\n") for o, n in zip(old, new, strict=True)
    )
    if not ok:
        # the one reason the markup really has: a fence-like line closing a directive around it
        assert fence_like, (raw, new_raw, [(o.stated, n.stated) for o, n in zip(old, new, strict=False)])
        return
    for o, n in zip(old, new, strict=True):
        for name, value in dict(next((e.options for e in edits if e.placement.line == o.line), {})).items():
            assert n.option(name) == value
    before = SourceText.from_bytes(path, raw, markup)
    after = SourceText.from_bytes(path, new_raw, markup)
    assert outside(before, regions(old, before)) == outside(after, regions(new, after))
    for o, n in zip(old, new, strict=True):  # a cell's code and separator: never touched
        assert n.code_lines == o.code_lines
        code = [before.line(i) for i in range(o.options_end, o.head_end)]
        assert [after.line(i) for i in range(n.options_end, n.head_end)] == code
        if o.code_lines:  # the whole code, up to the separator that is not inside one of its strings
            assert code[-1].strip() == OUTPUT_SEPARATOR
            try:
                compile(textwrap.dedent("\n".join(code[:-1])), "<cell>", "exec")
            except IndentationError:
                pass  # the indented line drawn first: not a string cut short


# Derandomized: the same 300 pages on every run, so the suite is never red by
# chance (a flaky red is a bug too).  To explore further, raise max_examples
# and drop derandomize locally; what that finds becomes a plain test below.
SETTINGS = settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@SETTINGS
@given(page=myst_page(), ends=st.lists(ENDS, min_size=1, max_size=3), bom=st.booleans(), data=st.data())
def test_myst_rewrite_changes_exactly_the_bodies_it_should(project, page, ends, bom, data) -> None:
    lines, _ = page
    check(project, "page", ".md", joined(lines, ends, bom), "myst", data)


@SETTINGS
@given(page=rst_page(), ends=st.lists(ENDS, min_size=1, max_size=3), bom=st.booleans(), data=st.data())
def test_rst_rewrite_changes_exactly_the_bodies_it_should(project, page, ends, bom, data) -> None:
    lines, _ = page
    check(project, "other", ".rst", joined(lines, ends, bom), "rst", data)


# Examples hypothesis found, kept as plain tests (each failed before its fix).


def _rewrite(project: tuple[Path, Reader], raw: bytes, body: str) -> tuple[bytes, str]:
    root, reader = project
    path = root / "page.md"
    path.write_bytes(raw)
    placement = reader.read(["page"])["page"][-1]
    text = SourceText.read(path, "myst")
    apply(text, [Edit(placement, body)])
    path.write_bytes(text.to_bytes())
    return text.to_bytes(), reader.read(["page"])["page"][-1].stated


@pytest.mark.parametrize("body", [" ", ":stated-env: x", "", "x"])
def test_a_body_after_an_option_block_without_a_blank_line_reads_back(project, body) -> None:
    # myst-parser takes the first blank line after options for the separator,
    # and a first line starting with ':' for one more option
    raw = b"# Page\n\n```{snippet} g/s1\n:stated-env: torch 9\n```\n"
    _, stated = _rewrite(project, raw, body)
    assert stated == body


def test_a_new_blank_line_after_a_lone_carriage_return_stays_a_line_of_its_own(project) -> None:
    raw = b"# Page\n\n```{snippet} g/s0\n---\rstated-env: y\n---\n\r0\n```\n\rend\n"
    new, stated = _rewrite(project, raw, "\n0")
    assert stated == "\n0"
    assert new.endswith(b"```\n\rend\n") and b"# Page\n\n```{snippet} g/s0\n---\rstated-env: y\n---\n" in new


def test_an_output_of_empty_lines_only_is_refused_in_myst_and_rst() -> None:
    assert "empty lines" in (holdable("\n", "myst") or "")
    assert holdable("\n", "rst")
    assert holdable(" ", "myst") is None
