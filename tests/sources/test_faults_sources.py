"""Fault tolerance of the Sphinx build (issue 6): bad sources and configuration.

One page (tests/roots/test-fault-sources) holds every kind of bad placement,
each followed by a paragraph ``after <case>``; a second page places a snippet
the first page places too.  The exact messages for a missing file and an
unknown tag are asserted in test_build.py
(``test_missing_file_and_bad_tag_block_warn_with_file_and_line``); here they
are part of the page whose rest must still build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import directive_line, html, plain, snipcheck_warnings
from snipcheck.settings import VALUES
from faults_support import Build, cached_ids, copy_root, sphinx_build

OUTSIDE = 'print("outside the snippets directory")  # OUTSIDE-MARKER\n'


@dataclass
class Sources:
    build: Build
    outside: Path

    @property
    def index(self) -> Path:
        return self.build.srcdir / "index.md"

    def at(self, snippet_id: str, page: str = "index.md") -> str:
        source = self.build.srcdir / page
        return f"{source}:{directive_line(source, snippet_id)}"

    def box(self, anchor: str) -> str:
        """Text of the error box rendered in place of a snippet."""
        div = html(self.build.outdir / "index.html").find(id=anchor)
        assert div is not None, anchor
        return div.find(class_="error").find_all("p")[-1].get_text()


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory, probe_cache: Path) -> Sources:
    from conftest import fresh_cache

    tmp = tmp_path_factory.mktemp("fault-sources")
    src = copy_root("fault-sources", tmp / "src")
    outside = tmp / "outside.py"
    outside.write_text(OUTSIDE)
    (src / "snippets" / "fault" / "link.py").symlink_to(outside)
    return Sources(sphinx_build(src, tmp, fresh_cache(tmp / "cache", probe_cache)), outside)


def test_every_other_snippet_and_page_still_builds(sources: Sources) -> None:
    page = sources.build.outdir / "index.html"
    paragraphs = {p.get_text() for p in html(page).find_all("p")}
    cases = re.findall(r"^after (\S+)$", sources.index.read_text(encoding="utf-8"), re.MULTILINE)
    assert len(cases) == 8
    assert {f"after {case}" for case in cases} <= paragraphs
    for snippet_id, page_name, text in (
        ("fault/control", "index", "control ran\n"),
        ("fault/dup", "index", "placed twice\n"),
        ("fault/dup", "second", "placed twice\n"),
        ("fault/second", "second", "second page\n"),
    ):
        div = html(sources.build.outdir / f"{page_name}.html").find(id="snippet-" + snippet_id.replace("/", "-"))
        assert div.find(class_="snipcheck-output").find("pre").get_text() == text


def test_nothing_under_the_sources_changes_and_the_cache_is_consistent(sources: Sources) -> None:
    assert sources.build.after == sources.build.before
    assert sources.outside.read_text() == OUTSIDE
    assert cached_ids(sources.build.cache_dir) == {
        "fault/options", "fault/malformed", "fault/dup", "fault/control", "fault/second",
    }  # fmt: skip


def test_missing_file_and_unknown_tag_warn_and_the_page_goes_on(sources: Sources) -> None:
    # Exact texts: test_build.py::test_missing_file_and_bad_tag_block_warn_with_file_and_line
    warnings = sources.build.warnings
    assert any(w.startswith(f"{sources.at('fault/nowhere')}: WARNING: snippet 'fault/nowhere' not found:") for w in warnings)
    assert any(w.startswith(f"{sources.at('fault/bad-tags')}: WARNING: snippet 'fault/bad-tags': unknown tag 'colour';") for w in warnings)


def test_the_same_id_placed_twice_warns_at_the_second_placement(sources: Sources) -> None:
    (warning,) = [w for w in sources.build.warnings if "placed more than once" in w]
    assert warning == (
        f"{sources.at('fault/dup', 'second.md')}: WARNING: snippet 'fault/dup' is placed more than once "
        f"(first at {sources.at('fault/dup')}); place each snippet once, so that its stated output lives "
        "in one place [snipcheck.missing]"
    )


def test_unknown_directive_option_warns_and_the_snippet_is_still_checked(sources: Sources) -> None:
    # MyST reports it (it parses the options before the directive runs), at
    # the option's line, and drops the option; the snippet runs as usual.
    line = directive_line(sources.index, "fault/options") + 1
    assert (
        f"{sources.index}:{line}: WARNING: 'snippet': Unknown option key: 'colour' (allowed: ['chain', 'escapes', 'stated-env']) "
        "[myst.directive_option]"
    ) in sources.build.other_warnings
    assert [w for w in sources.build.warnings if "fault/options" in w] == []
    div = html(sources.build.outdir / "index.html").find(id="snippet-fault-options")
    assert div.find(class_="snipcheck-output").find("pre").get_text() == "options\n"


def test_malformed_option_block_warns_and_the_snippet_is_still_checked(sources: Sources) -> None:
    line = directive_line(sources.index, "fault/malformed") + 1
    assert (
        f"{sources.index}:{line}: WARNING: 'snippet': Invalid options format: expected ':' after key "
        "[myst.directive_option]"
    ) in sources.build.other_warnings
    assert [w for w in sources.build.warnings if "fault/malformed" in w] == []
    div = html(sources.build.outdir / "index.html").find(id="snippet-fault-malformed")
    assert div.find(class_="snipcheck-output").find("pre").get_text() == "malformed\n"


@pytest.mark.parametrize("snippet_id", ["../../etc/passwd", "/etc/passwd"])
def test_an_id_that_escapes_snippets_is_rejected_before_any_file_is_read(sources: Sources, snippet_id: str) -> None:
    message = (
        f"invalid snippet id {snippet_id!r}: an id is a path under the snippets directory without suffix, "
        "made of letters, digits, '-', '_' and '/', e.g. 'inplace/leaf-add'"
    )
    assert f"{sources.at(snippet_id)}: WARNING: {message} [snipcheck.missing]" in sources.build.warnings
    assert "root:" not in (sources.build.outdir / "index.html").read_text(encoding="utf-8")


def test_a_symbolic_link_out_of_snippets_is_rejected_unread(sources: Sources) -> None:
    message = (
        f"snippet 'fault/link' resolves to {sources.outside}, outside {sources.build.srcdir / 'snippets'}; "
        "snippets must live under the snippets directory"
    )
    assert f"{sources.at('fault/link')}: WARNING: {message} [snipcheck.missing]" in sources.build.warnings
    assert "OUTSIDE-MARKER" not in (sources.build.outdir / "index.html").read_text(encoding="utf-8")
    assert message.replace("'", "‘", 1).replace("'", "’", 1) in sources.box("snippet-fault-link")


def test_an_id_with_its_suffix_says_what_to_write(sources: Sources) -> None:
    assert (
        f"{sources.at('fault/control.py')}: WARNING: invalid snippet id 'fault/control.py': leave out the suffix "
        "(write 'fault/control') [snipcheck.missing]"
    ) in sources.build.warnings


def test_only_these_warnings(sources: Sources) -> None:
    assert len(sources.build.warnings) == 7
    assert len(sources.build.other_warnings) == 2  # the two MyST option warnings above


# --- configuration ----------------------------------------------------------------------------
# snipcheck_timeout = -1: test_build.py::test_invalid_config_value_warns_and_the_default_is_used


@pytest.mark.sphinx("html", testroot="basic")
@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("snipcheck_runner", "threads", "expected one of fork, subprocess"),
        ("snipcheck_jobs", -2, "must be 0 (one per core) or more"),
        ("snipcheck_output_limit", 0, "must be positive"),
        ("snipcheck_normalizers", ["no-such-normalizer"], None),
        ("snipcheck_python", "/no/such/python3", "no such interpreter (give an absolute path or a command on PATH)"),
        ("snipcheck_provides", ["cuda", 3], "expected a list of strings"),
        ("snipcheck_requirements", {"burn": 3}, "expected a list of names, or a dict of names to sentences (strings)"),
    ],
)
def test_invalid_config_value_names_the_value_and_the_default_and_the_build_goes_on(
    make_app, app_params, name: str, value: object, why: str | None
) -> None:
    args, kwargs = app_params
    app = make_app(*args, **{**kwargs, "confoverrides": {**kwargs["confoverrides"], name: value}})
    app.build()
    default = VALUES[name].default
    shown = "(the interpreter running snipcheck)" if name == "snipcheck_python" else repr(default)
    conf_py = Path(app.confdir) / "conf.py"
    (warning,) = snipcheck_warnings(app.warning.getvalue())
    assert warning.startswith(f"WARNING: {conf_py}: invalid {name} = {value!r}: ")
    assert warning.endswith(f"; using the default {shown} [snipcheck.config]")
    if why is not None:
        assert warning == (
            f"WARNING: {conf_py}: invalid {name} = {value!r}: {why}; using the default {shown} [snipcheck.config]"
        )
    else:
        assert "no-such-normalizer" in warning
    assert getattr(app.config, name) == default
    page = html(Path(app.outdir) / "index.html")
    assert page.find(id="snippet-basic-hello").find(class_="snipcheck-output").find("pre").get_text() == "hello\n"
    assert "[snipcheck." not in plain(app.warning.getvalue()).replace(warning, "")

