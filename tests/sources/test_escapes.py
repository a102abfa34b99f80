"""The escaped form of a stated output (issue 36 §5): any text, in any markup.

The form itself, over generated text; that a page holds it and reads it back
through its own parser is :mod:`test_rewrite_property`'s and
:mod:`test_sources`'s part.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from snipcheck.sources.escapes import decode, encode
from snipcheck.sources.placement import OUTPUT_SEPARATOR

_LINE = st.one_of(
    st.text(alphabet=" \t\\&xtu0c:-`~#\f\r\u2028\x85\x00é", max_size=12),
    st.sampled_from(["", "   ", OUTPUT_SEPARATOR, ".. note::", ":option: value", "```", "---", "\\&", "\\x41"]),
)


@settings(max_examples=500, derandomize=True, deadline=None)
@given(st.lists(_LINE, max_size=6).map("\n".join))
def test_every_text_reads_back_from_its_escaped_form(text: str) -> None:
    encoded = encode(text)
    assert decode(encoded) == text
    lines = encoded.split("\n")
    # what no markup's body holds as it is: none of it is left
    assert not any(c in encoded for c in "\t\f\r\u2028\x85\x00")
    assert all(line == line.rstrip() for line in lines)
    assert lines[0] and lines[-1]
    first = next(line for line in lines if line.strip())
    assert first[0] not in " :-"  # no indentation to strip, no option, no option block
    assert not any(re.match(r"^ {0,3}(`{3,}|~{3,}|:{3,})", line) for line in lines)  # no fence


def test_a_backslash_before_anything_else_stands_for_itself() -> None:
    assert decode("C:\\path\\n") == "C:\\path\\n"
    assert decode("a\\tb\\&\\\\") == "a\tb\\"
