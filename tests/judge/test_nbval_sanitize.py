"""nbval's sanitizer files read as compare-only normalizers (snipcheck.judge.nbval_sanitize)."""

from __future__ import annotations

from pathlib import Path

from snipcheck.judge.nbval_sanitize import load, read
from snipcheck.judge.normalize import for_compare, for_display, mask_runs

# nbval's own example layout: sections, pairs, a replacement naming groups
FILE = """\
[Dates and times]
regex: \\d\\d\\d\\d-\\d\\d-\\d\\d
replace: DATESTAMP

regex: \\d\\d:\\d\\d:\\d\\d
replace: TIMESTAMP

[Memory addresses]
regex: (<[a-zA-Z_][0-9a-zA-Z_.]* at )(0x[0-9a-fA-F]+)(>)
replace: \\1MEMORY_ADDRESS\\3
"""


def test_each_section_is_a_compare_only_normalizer_applied_in_file_order() -> None:
    found = read(FILE, "sanitize.cfg")
    assert found.problems == ()
    assert [n.name for n in found.normalizers] == [
        "sanitize.cfg [Dates and times]",
        "sanitize.cfg [Memory addresses]",
    ]
    assert not any(n.display for n in found.normalizers)
    text = "at 2026-12-06 08:26:06: <Foo at 0x7f3a2c1b>"
    assert for_compare(text, found.normalizers) == "at DATESTAMP TIMESTAMP: <Foo at MEMORY_ADDRESS>"
    assert for_display(text, found.normalizers) == text  # never what the page shows
    assert mask_runs(text, found.normalizers) == "at DATESTAMP TIMESTAMP: <Foo at MEMORY_ADDRESS>"


def test_what_cannot_be_read_is_named_with_file_line_and_section_and_the_rest_is_kept() -> None:
    text = FILE + "\n[Bad]\nregex: (x\nreplace: y\nregex: a\n\nreplace: b\nregex: (a)\nreplace: \\2\n"
    found = read(text, "s.cfg")
    assert len(found.normalizers) == 2  # the good sections
    wheres = [p.split(":")[0] for p in found.problems]
    assert wheres == [f"nbval sanitizer file s.cfg, line {n}, section [Bad]" for n in (13, 15, 17, 18)]
    assert "bad regex '(x'" in found.problems[0]
    assert "'regex:' without a 'replace:' line right after it" in found.problems[1]
    assert "is not read" in found.problems[2] and "invalid group reference 2" in found.problems[3]


def test_a_missing_file_is_named_and_the_other_files_apply(tmp_path: Path) -> None:
    (tmp_path / "a.cfg").write_text(FILE)
    found = load(["nope.cfg", "a.cfg"], tmp_path)
    said = "nbval sanitizer file nope.cfg: cannot be read (no such file); give its path relative to conf.py "
    assert found.problems == (said + "in snipcheck_nbval_sanitize",)
    assert len(found.normalizers) == 2
