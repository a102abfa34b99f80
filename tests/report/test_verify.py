"""The maintainer flow without any download: verify → accept → verify on a fake "new torch".

Two tiny fake torch packages stand in for two releases.  Each is a directory
holding ``torch/__init__.py`` and a ``torch-X.dist-info`` (so the environment
probe reads its version), put on the path by a wrapper script that acts as the
snippet interpreter.  Release 2 changes one message and prints a new warning
at ``import torch``: the drift and the environment-wide difference to detect.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import placements_in, snipcheck_cli
from snipcheck.app import accept
from snipcheck.app.project import Project
from snipcheck.files import write_all
from snipcheck.model import Stamp
from snipcheck.report.verify import Report, SnippetReport, finish, merge, parse_shard, select_shard
from snipcheck.sources.placement import Placement

FAKE_TORCH = {
    "1.0.0": '''
__version__ = "1.0.0"
def leaf_error():
    return "a leaf Variable that requires grad is being used in an in-place operation."
def saved_error():
    return "one of the variables needed for gradient computation has been modified"
''',
    "2.0.0": '''
import warnings
warnings.warn("torch 2.0.0: TF32 is now on by default")
__version__ = "2.0.0"
def leaf_error():
    return "a leaf Variable that requires grad is being used in an in-place operation."
def saved_error():
    return "a tensor saved for backward was modified in place (version 1, expected 0)"
''',
}

SNIPPETS = {
    "leaf": 'import torch\nprint("leaf:", torch.leaf_error())\n',
    "saved": 'import torch\nprint("saved:", torch.saved_error())\n',
    "version": 'import torch\nprint("torch major:", torch.__version__.split(".")[0] in "12")\n',
    "plain": 'print("no torch here:", 6 * 7)\n',
}

PAGE = """# Chapter

Some prose that accept must never touch.

```{snippet} demo/leaf
```

More prose, with trailing spaces here:   
and a fenced block that is not a snippet:

```text
```{snippet} demo/not-a-directive
```

```{snippet} demo/saved
```

```{snippet} demo/version
```

```{snippet} demo/plain
```
"""


def _fake_python(tmp: Path, version: str) -> Path:
    site = tmp / f"fake-{version}"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(textwrap.dedent(FAKE_TORCH[version]))
    dist = site / f"torch-{version}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
    wrapper = tmp / f"python-{version}"
    wrapper.write_text(
        f'#!/bin/sh\nPYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{site}" exec {sys.executable} "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def _git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def _cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return snipcheck_cli(project, *args, cache=project / ".cache")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A git project whose stated outputs were recorded on fake torch 1.0.0."""
    tmp = tmp_path_factory.mktemp("verify")
    root = tmp / "project"
    (root / "docs").mkdir(parents=True)
    (root / "snippets" / "demo").mkdir(parents=True)
    for name, code in SNIPPETS.items():
        (root / "snippets" / "demo" / f"{name}.py").write_text(code)
    (root / "docs" / "index.md").write_text(PAGE)
    (root / "conf.py").write_text('extensions = ["myst_parser", "snipcheck"]\nsnipcheck_runner = "subprocess"\n')
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.snipcheck]\nreference-torch = "1.0.0"\n')
    (root / ".gitignore").write_text(".cache/\n")
    py1 = _fake_python(tmp, "1.0.0")
    py2 = _fake_python(tmp, "2.0.0")
    (root / "conf.py").write_text(
        'extensions = ["myst_parser", "snipcheck"]\nsnipcheck_source_dir = "docs"\n'
        f'snipcheck_runner = "subprocess"\nsnipcheck_python = "{py1}"\n'
    )
    out = _cli(root, "record")
    assert out.returncode == 0, out.stderr
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "recorded on 1.0.0")
    return {"root": root, "py1": py1, "py2": py2}


def test_reference_release_holds(project: dict[str, Path]) -> None:
    out = _cli(project["root"], "verify", "--python", str(project["py1"]), "--json", "r1.json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads((project["root"] / "r1.json").read_text())
    assert report["holds"] is True
    assert report["counts"]["unchanged"] == 4
    assert report["stamp"]["torch"] == "1.0.0"


def test_new_release_drifts_with_report_and_exit_status(project: dict[str, Path]) -> None:
    root = project["root"]
    out = _cli(root, "verify", "--python", str(project["py2"]), "--json", "r2.json", "--html", "r2.html")
    assert out.returncode == 1, out.stdout + out.stderr
    report = json.loads((root / "r2.json").read_text())
    by_id = {s["id"]: s for s in report["snippets"]}
    # the changed message is real drift, with a diff naming the stated line
    assert by_id["demo/saved"]["status"] == "drifted"
    assert not by_id["demo/saved"]["env_wide_only"]
    assert "-saved: one of the variables needed" in by_id["demo/saved"]["diff"]
    assert "+saved: a tensor saved for backward was modified" in by_id["demo/saved"]["diff"]
    assert "stated (docs/index.md:" in by_id["demo/saved"]["diff"]
    # the import-time warning hits every torch snippet: summarised once
    wide = report["environment_wide"]
    assert any("TF32 is now on by default" in c["text"] and c["sign"] == "+" for c in wide)
    assert sorted(next(c for c in wide if "TF32" in c["text"])["snippets"]) == ["demo/leaf", "demo/saved", "demo/version"]
    assert by_id["demo/leaf"]["env_wide_only"] is True
    assert by_id["demo/plain"]["status"] == "unchanged"
    assert report["counts"]["drifted"] == 1  # saved; leaf and version only differ by the shared warning
    assert report["counts"]["env-wide-only"] == 2
    # terminal: the shared line once, the per-snippet diff for the real drift
    assert out.stdout.count("TF32 is now on by default") == 2  # warning + source line, once, in the summary
    assert "(and 2 environment-wide line(s), listed once below)" in out.stdout
    assert "environment-wide differences" in out.stdout
    assert "1 unchanged, 1 drifted, 0 failing, 0 not run, 0 error; 2 differ only by the environment-wide change" in out.stdout
    html = (root / "r2.html").read_text()
    assert "Drift: the project does not hold" in html
    assert "demo/saved" in html


def test_shards_are_deterministic_and_merge_to_the_full_report(project: dict[str, Path]) -> None:
    root = project["root"]
    py2 = str(project["py2"])
    for k in (1, 2):
        out = _cli(root, "verify", "--python", py2, "--shard", f"{k}/2", "--json", f"s{k}.json")
        assert out.returncode in (0, 1), out.stderr
    s1 = json.loads((root / "s1.json").read_text())
    s2 = json.loads((root / "s2.json").read_text())
    ids1 = {s["id"] for s in s1["snippets"]}
    ids2 = {s["id"] for s in s2["snippets"]}
    assert ids1 and ids2 and not ids1 & ids2
    assert ids1 | ids2 == set(f"demo/{n}" for n in SNIPPETS)
    out = _cli(root, "merge", "s2.json", "s1.json", "--json", "merged.json")
    assert out.returncode == 1
    merged = json.loads((root / "merged.json").read_text())
    full = json.loads((root / "r2.json").read_text()) if (root / "r2.json").exists() else None
    assert merged["counts"]["drifted"] == 1
    assert [s["id"] for s in merged["snippets"]] == sorted(
        (s["id"] for s in merged["snippets"]), key=lambda i: [p["line"] for p in merged["snippets"] if p["id"] == i][0]
    )
    assert any("TF32" in c["text"] for c in merged["environment_wide"])
    if full is not None:
        assert {s["id"]: s["status"] for s in merged["snippets"]} == {s["id"]: s["status"] for s in full["snippets"]}
    # a missing shard is refused
    out = _cli(root, "merge", "s1.json")
    assert out.returncode == 2
    assert out.stderr.strip() == "error: cannot merge: shard 2/2 missing; give each of the 2 shards exactly once"


@pytest.mark.parametrize("edit", ["snippet source", "stated output", "stated output in place"])
def test_merge_refuses_shards_made_from_two_revisions_of_the_chapter(project: dict[str, Path], edit: str) -> None:
    # false-green.md case 2, end to end: the fingerprint each shard carries is
    # the chapter's own, so an edit between two shards is caught by merge
    root = project["root"]
    py2 = str(project["py2"])
    path = root / "snippets" / "demo" / "plain.py" if edit == "snippet source" else root / "docs" / "index.md"
    original = path.read_text()
    out = _cli(root, "verify", "--python", py2, "--shard", "1/2", "--json", "a1.json")
    assert out.returncode in (0, 1), out.stderr
    try:
        if edit == "snippet source":
            path.write_text(original.replace("6 * 7", "7 * 6"))
        elif edit == "stated output in place":
            # false-green.md, "a test the suite lacks": one existing stated
            # output edited, same id, same page, same line
            assert original.count("no torch here: 42\n") == 1
            path.write_text(original.replace("no torch here: 42\n", "no torch here: 41\n"))
        else:
            # a new placement with its stated output (of a new snippet: one placed twice fails verify itself)
            (root / "snippets" / "demo" / "extra.py").write_text('print("extra")\n')
            path.write_text(original.replace("Some prose", "Some prose\n\n```{snippet} demo/extra\nextra\n```\n", 1))
        out = _cli(root, "verify", "--python", py2, "--shard", "2/2", "--json", "b2.json")
        assert out.returncode in (0, 1), out.stderr
    finally:
        path.write_text(original)
        (root / "snippets" / "demo" / "extra.py").unlink(missing_ok=True)
    first, second = (json.loads((root / name).read_text())["fingerprint"] for name in ("a1.json", "b2.json"))
    assert first != second
    out = _cli(root, "merge", "a1.json", "b2.json")
    assert out.returncode == 2
    assert out.stderr.strip() == (
        f"error: cannot merge: shards of different revisions of the pages: shard 1/2 has fingerprint {first}, "
        f"shard 2/2 has {second}; verify every shard from the same revision"
    )


def test_accept_refuses_uncommitted_changes_then_dry_run_then_accepts(project: dict[str, Path]) -> None:
    root = project["root"]
    py2 = str(project["py2"])
    page = root / "docs" / "index.md"
    original = page.read_text()
    page.write_text(original + "\nan uncommitted edit\n")
    out = _cli(root, "accept", "--python", py2)
    assert out.returncode == 1 and "uncommitted changes in docs/index.md" in out.stderr
    page.write_text(original)

    out = _cli(root, "accept", "--python", py2, "--dry-run")
    assert out.returncode == 0, out.stderr
    assert "+saved: a tensor saved for backward was modified" in out.stdout
    # the diff names the page as every other line does: relative to the project root
    assert "\n--- docs/index.md\n+++ docs/index.md\n@@ " in out.stdout, out.stdout
    assert str(root) not in out.stdout
    assert page.read_text() == original  # a dry run writes nothing

    old_p = {p.snippet_id: p for p in placements_in(page)}
    out = _cli(root, "accept", "--python", py2)
    assert out.returncode == 0, out.stdout + out.stderr
    new = page.read_text()
    assert 'reference-torch = "2.0.0"' in (root / "pyproject.toml").read_text()
    # every byte outside the accepted directive bodies is unchanged
    new_p = {p.snippet_id: p for p in placements_in(page)}
    assert _outside_bodies(original, old_p.values()) == _outside_bodies(new, new_p.values())
    assert new_p["demo/plain"].stated == old_p["demo/plain"].stated
    assert "a tensor saved for backward" in new_p["demo/saved"].stated
    # verify again: the chapter now holds on the new release
    out = _cli(root, "verify", "--python", py2)
    assert out.returncode == 0, out.stdout
    assert "the project holds" in out.stdout


def _outside_bodies(text: str, placements) -> list[str]:  # type: ignore[no-untyped-def]
    lines = text.split("\n")
    keep = []
    skip = set()
    for p in placements:
        skip.update(range(p.head_end, p.body_end))
    for i, line in enumerate(lines):
        if i not in skip:
            keep.append(line)
    return keep


# --- unit tests of the report logic --------------------------------------------------------------

STAMP = Stamp("3.11.7", "2.0.0", "CPU", "Linux x86_64")


def _snip(i: str, status: str, diff: str = "", line: int = 1) -> SnippetReport:
    return SnippetReport(i, "docs/a.md", line, status, diff=diff)


def test_env_wide_needs_a_share_of_snippets() -> None:
    shared = "--- s\n+++ a\n@@ -1 +1,2 @@\n x\n+WARNING at import\n"
    own = "--- s\n+++ a\n@@ -1 +1 @@\n-old\n+new\n"
    report = Report(STAMP, "", (1, 1), (_snip("a", "drifted", shared), _snip("b", "drifted", shared + "-old\n+new\n"), _snip("c", "unchanged"), _snip("d", "unchanged")))
    done = finish(report)
    assert [c.text for c in done.environment_wide] == ["WARNING at import"]
    assert done.snippets[0].env_wide_only and not done.snippets[1].env_wide_only
    # a line in one snippet only is never environment-wide
    lone = finish(Report(STAMP, "", (1, 1), (_snip("a", "drifted", own), _snip("b", "unchanged"), _snip("c", "unchanged"))))
    assert lone.environment_wide == ()


def test_parse_and_select_shard() -> None:
    assert parse_shard("2/8") == (2, 8)
    for bad in ("0/2", "3/2", "a/b", "2"):
        with pytest.raises(ValueError, match="write k/n"):
            parse_shard(bad)
    placements = [_placement(i, line) for line, i in enumerate(("demo/leaf", "demo/saved", "demo/version", "demo/plain"))]
    slices = [select_shard(placements, (k, 3)) for k in (1, 2, 3)]
    assert sorted(p.snippet_id for s in slices for p in s) == sorted(p.snippet_id for p in placements)
    assert select_shard(list(reversed(placements)), (1, 3)) == slices[0]


def _shard(k: int, n: int, ids: tuple[str, ...], *, fingerprint: str = "f1", reference: str = "torch 1.0.0",
           stamp: Stamp = STAMP, total: int = 5) -> Report:
    snippets = tuple(_snip(i, "unchanged", line=int(i[-1])) for i in ids)
    return Report(stamp, reference, (k, n), snippets, total=total, fingerprint=fingerprint)


def test_merge_refuses_mixed_environments() -> None:
    a = _shard(1, 2, ("f/s0", "f/s2", "f/s4"))
    b = _shard(2, 2, ("f/s1", "f/s3"), stamp=Stamp("3.11.7", "9.9.9", "CPU", "Linux x86_64"))
    with pytest.raises(ValueError, match="different environments"):
        merge([a, b])


def test_merge_of_every_shard_of_one_chapter_holds_all_placements() -> None:
    merged = merge([_shard(2, 2, ("f/s1", "f/s3")), _shard(1, 2, ("f/s0", "f/s2", "f/s4"))])
    assert [s.id for s in merged.snippets] == ["f/s0", "f/s1", "f/s2", "f/s3", "f/s4"]
    assert merged.total == 5 and merged.holds


def test_merge_refuses_shards_of_two_revisions_of_the_chapter() -> None:
    # false-green.md #2: shards from two revisions merged into "holds: 4 unchanged", ids
    # [f/s1, f/s1, f/s3, f/s3], while f/s0, f/s2 and f/s4 never ran
    old = _shard(1, 2, ("f/s1", "f/s3"), fingerprint="aaaa")
    new = _shard(2, 2, ("f/s1", "f/s3"), fingerprint="bbbb")
    with pytest.raises(ValueError, match="shards of different revisions of the pages: shard 1/2 has fingerprint aaaa, shard 2/2 has bbbb"):
        merge([old, new])


def test_merge_refuses_shards_against_different_references() -> None:
    with pytest.raises(ValueError, match="different references: 'torch 1.0.0' and 'torch 2.0.0'"):
        merge([_shard(1, 2, ("f/s0",)), _shard(2, 2, ("f/s1",), reference="torch 2.0.0")])


def test_merge_refuses_a_shard_given_twice_and_names_the_missing_one() -> None:
    one = _shard(1, 3, ("f/s0", "f/s3"))
    with pytest.raises(ValueError, match=r"^shard 1/3 given more than once; shard 2/3, 3/3 missing"):
        merge([one, one])


def test_merge_refuses_shards_that_do_not_cover_the_chapter() -> None:
    # same fingerprint, yet the slices do not add up to the chapter's placements
    with pytest.raises(ValueError, match="report 4 placements but the pages have 5"):
        merge([_shard(1, 2, ("f/s0", "f/s2")), _shard(2, 2, ("f/s1", "f/s3"))])
    with pytest.raises(ValueError, match=r"placements reported by more than one shard: f/s1 \(docs/a.md:1\)"):
        merge([_shard(1, 2, ("f/s0", "f/s1", "f/s2")), _shard(2, 2, ("f/s1", "f/s3"))])


def test_merge_refuses_reports_without_a_fingerprint() -> None:
    with pytest.raises(ValueError, match="no fingerprint of the pages"):
        merge([_shard(1, 1, ("f/s0",), fingerprint="")])


def test_report_json_round_trip() -> None:
    report = finish(Report(STAMP, "torch 1.0.0", (1, 1), (_snip("a", "drifted", "--- s\n+++ a\n-x\n+y\n"),)))
    again = Report.from_json(json.loads(json.dumps(report.to_json())))
    assert again == report


def test_move_pin_keeps_other_bytes() -> None:
    text = '[project]\nname = "x"\n\n[tool.snipcheck]\nreference-torch = "2.13.0"  # the pin\n'
    assert accept.move_pin(text, "2.15.0") == text.replace("2.13.0", "2.15.0")
    with pytest.raises(ValueError, match="reference-torch"):
        accept.move_pin("[project]\n", "1")


def _placement(snippet_id: str, line: int, stated: str = "", source: str = "p.md") -> Placement:
    return Placement(
        snippet_id, "snippet", "p", source, line, "myst", "backtick", "```", line, line, True, "", (), stated
    )


def test_accept_plan_skips_snippets_edited_since_the_report(tmp_path: Path) -> None:
    page = tmp_path / "docs" / "index.md"
    page.parent.mkdir()
    (tmp_path / "conf.py").write_text('extensions = ["myst_parser", "snipcheck"]\nsnipcheck_source_dir = "docs"\n')
    page.write_text("```{snippet} demo/x\nold\n```\n")
    project, _ = Project.load(tmp_path)
    stale = SnippetReport("demo/x", "docs/index.md", 1, "drifted", diff="-x\n+y", stated="something else", actual="new")
    plan = accept.plan(Report(STAMP, "", (1, 1), (stale,)), project.placements(), tmp_path)
    assert plan.accepted == [] and "edited since the report" in plan.skipped[0][1]
    fresh = SnippetReport("demo/x", "docs/index.md", 1, "drifted", diff="-x\n+y", stated="old", actual="new")
    plan = accept.plan(Report(STAMP, "", (1, 1), (fresh,)), project.placements(), tmp_path)
    write_all({path: new for path, (_, new) in accept.new_files(plan, project).items()})
    assert page.read_text() == "```{snippet} demo/x\nnew\n```\n"


def test_the_html_report_shows_every_control_character_as_an_escape() -> None:
    # Issue 23 item 6: Jinja2 escapes markup, not control characters; the
    # report held raw ESC, NUL and form feeds from the outputs it quotes.
    from snipcheck.report.show import html

    diff = "--- s\n+++ a\n@@ -1 +1 @@\n-nul\x00\n+\x1b[31mred\x1b[0m form\x0cfeed \x85 \u2028\n"
    snippet = SnippetReport("a/b", "docs/a.md", 3, "drifted", ("raised ValueError: bad\x1b[2K\x07",), diff=diff)
    page = html(Report(STAMP, "", (1, 1), (snippet,)))
    assert re.findall("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]", page) == []
    assert '<span class="add">+\\x1b[31mred\\x1b[0m form\\x0cfeed \\x85 \\u2028</span>' in page  # one line, not three
    assert '<span class="del">-nul\\x00</span>' in page
    assert "raised ValueError: bad\\x1b[2K\\x07" in page
