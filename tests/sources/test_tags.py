"""Unit tests of snipcheck.sources.tags: reading a snippet's tag block."""

from __future__ import annotations

import pytest
from snipcheck.model import Tags
from snipcheck.sources.tags import KNOWN_KEYS, TagError, parse, render


def error(source: str, language: str = "python") -> TagError:
    with pytest.raises(TagError) as info:
        parse(source, language)
    return info.value


# --- valid blocks -----------------------------------------------------------


def test_block_at_top_is_parsed_and_removed_from_code() -> None:
    source = (
        "# /// snipcheck\n"
        '# expect = "RuntimeError"\n'
        '# requires = ["cuda", "torch>=2.14"]\n'
        "# timeout = 20\n"
        '# refutes = "in-place ops are always safe"\n'
        "# ///\n"
        "\n"
        "import torch\n"
        "print(torch.ones(1))\n"
    )
    block = parse(source)
    assert block.tags == Tags(
        expect="RuntimeError",
        requires=("cuda", "torch>=2.14"),
        timeout=20.0,
        refutes="in-place ops are always safe",
    )
    assert block.code == "import torch\nprint(torch.ones(1))"


def test_block_at_top_numbers_code_from_its_line_in_the_file() -> None:
    # Lines 1-3 are the block, 4 and 5 blank: the code starts on file line 6,
    # the number a traceback would show for it.
    source = '# /// snipcheck\n# expect = "ValueError"\n# ///\n\n\nraise ValueError("x")\n'
    block = parse(source)
    assert block.code == 'raise ValueError("x")'
    assert block.code_lineno == 6
    assert source.splitlines()[block.code_lineno - 1] == block.code


def test_block_at_bottom_is_parsed_and_code_keeps_line_one() -> None:
    source = 'print("a")\nprint("b")\n\n# /// snipcheck\n# requires = ["cuda"]\n# ///\n'
    block = parse(source)
    assert block.tags == Tags(requires=("cuda",))
    assert block.code == 'print("a")\nprint("b")'
    assert block.code_lineno == 1


def test_bottom_block_after_leading_blank_lines_numbers_from_first_code_line() -> None:
    source = '\n\nprint("a")\n# /// snipcheck\n# timeout = 3\n# ///\n'
    block = parse(source)
    assert block.code == 'print("a")'
    assert block.code_lineno == 3


def test_no_block_gives_defaults_and_whole_file() -> None:
    block = parse('\nprint("a")\n\n')
    assert block.tags == Tags()
    assert block.code == 'print("a")'


def test_requires_may_be_a_single_string_and_blank_comment_lines_are_allowed() -> None:
    block = parse('# /// snipcheck\n# requires = "cuda"\n#\n# timeout = 1.5\n# ///\nprint(1)\n')
    assert block.tags == Tags(requires=("cuda",), timeout=1.5)


def test_rust_blocks_use_double_slash() -> None:
    block = parse('// /// snipcheck\n// expect = "panic"\n// ///\nfn main() { panic!("x") }\n', "rust")
    assert block.tags.expect == "panic"
    assert block.code == 'fn main() { panic!("x") }'
    assert block.code_lineno == 4


@pytest.mark.parametrize(
    "expect", ["ok", "RuntimeError", "torch.OutOfMemoryError", "panic", "exit 3", "signal SIGSEGV"]
)
def test_every_documented_form_of_expect_is_accepted(expect: str) -> None:
    assert parse(f'# /// snipcheck\n# expect = "{expect}"\n# ///\nx = 1\n').tags.expect == expect


def test_render_round_trips_through_parse() -> None:
    tags = Tags(expect="RuntimeError", requires=("cuda",), timeout=2.5, refutes='say "no"', output_limit=8192)
    text = render(tags)
    assert parse(text + "\nprint(1)\n").tags == tags
    assert render(Tags()) == ""


# --- malformed blocks: TagError at the right line ---------------------------


def test_unterminated_block_points_at_its_opening_line() -> None:
    err = error('print(1)\n\n# /// snipcheck\n# expect = "ok"\n')
    assert err.line == 3
    assert err.message == "tag block opened here is never closed; end it with a line '# ///'"


def test_block_between_lines_of_code_is_rejected_at_its_opening_line() -> None:
    err = error('print(1)\n# /// snipcheck\n# expect = "ok"\n# ///\nprint(2)\n')
    assert err.line == 2
    assert err.message == (
        "the tag block must be the first or the last lines of the file, not between lines of code"
    )


def test_bad_toml_points_at_the_offending_line() -> None:
    # File line 4 holds the invalid value (an unquoted string).
    source = '# /// snipcheck\n# expect = "ValueError"\n# requires = ["cuda"]\n# timeout = five\n# ///\nx = 1\n'
    err = error(source)
    assert err.message.startswith("tag block is not valid TOML: ")
    assert err.line == 4


def test_bad_toml_on_the_first_line_of_the_block() -> None:
    err = error("# /// snipcheck\n# expect = \n# ///\nx = 1\n")
    assert err.message.startswith("tag block is not valid TOML: ")
    assert err.line == 2


def test_unknown_key_points_at_its_line_and_lists_known_keys() -> None:
    err = error('# /// snipcheck\n# expect = "ok"\n# expected = "ok"\n# ///\nx = 1\n')
    assert err.line == 3
    assert err.message == (
        "unknown tag 'expected'; known tags are: " + ", ".join(sorted(KNOWN_KEYS))
    )


@pytest.mark.parametrize(
    ("line", "key", "shown"),
    [
        ('timeout = "5"', "timeout", "'5'"),
        ("timeout = true", "timeout", "True"),
        ("timeout = -1", "timeout", "-1"),
        ("timeout = 0", "timeout", "0"),
        ("requires = [1]", "requires", "[1]"),
        ('requires = [""]', "requires", "['']"),
        ("requires = {a = 1}", "requires", "{'a': 1}"),
        ("expect = 3", "expect", "3"),
        ('expect = "not a type!"', "expect", "'not a type!'"),
        ('refutes = ""', "refutes", "''"),
        ("refutes = 1", "refutes", "1"),
        ("output-limit = 0", "output-limit", "0"),
        ("output-limit = -5", "output-limit", "-5"),
        ('output-limit = "4 MiB"', "output-limit", "'4 MiB'"),
        ("output-limit = 1.5", "output-limit", "1.5"),
        ("output-limit = true", "output-limit", "True"),
    ],
)
def test_wrong_types_point_at_the_key_and_say_what_is_expected(line: str, key: str, shown: str) -> None:
    # The bad value sits on file line 3, after a valid line.
    first = "# timeout = 5" if key == "expect" else '# expect = "ok"'
    err = error(f"# /// snipcheck\n{first}\n# {line}\n# ///\nx = 1\n")
    assert err.line == 3
    assert err.message == f"bad value for {key!r}: {shown}; {KNOWN_KEYS[key]}"


def test_wrong_type_in_a_multiline_value_points_at_its_key() -> None:
    err = error('# /// snipcheck\n# requires = [\n#   "cuda",\n# ]\n# timeout = 0\n# ///\nx = 1\n')
    assert err.line == 5


def test_line_without_comment_marker_inside_block() -> None:
    err = error('# /// snipcheck\n#expect = "ok"\n# ///\nx = 1\n')
    assert err.line == 2
    assert err.message == "every line inside the tag block must start with '# '"


def test_two_blocks_point_at_the_second() -> None:
    err = error("# /// snipcheck\n# ///\nprint(1)\n# /// snipcheck\n# ///\n")
    assert err.line == 4
    assert err.message == "more than one tag block; merge them into one"


def test_misspelt_opener_is_reported_not_silently_ignored() -> None:
    err = error('print(1)\n# ///snipcheck\n# expect = "ok"\n# ///\n')
    assert err.line == 2
    assert err.message == "found '# ///snipcheck' but a tag block must open with exactly '# /// snipcheck'"
