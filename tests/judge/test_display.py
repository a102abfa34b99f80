"""snipcheck.report.display: control characters made visible, terminal lines, long words (issue 23, items 4 to 6)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from snipcheck.judge.compare import judge, terminal_text
from snipcheck.model import Event, RunResult, Stamp, Tags
from snipcheck.report.display import (
    LONGEST_WORD,
    long_words,
    may_wrap,
    mixed,
    terminal_blocks,
    visible,
    visible_keeping_colours,
)

OUT, ERR, WARN = ("stdout", "text"), ("stderr", "text"), ("stderr", "warning")


def ev(where: tuple[str, str], text: str) -> Event:
    return Event(where[0], where[1], text)


def shape(blocks: list[tuple[Event, ...]]) -> list[list[tuple[str, str]]]:
    return [[(e.stream if e.kind == "text" else e.kind, e.text) for e in block] for block in blocks]


# --- control characters -------------------------------------------------------------------------


def test_every_control_character_but_newline_and_tab_is_shown_as_its_python_escape() -> None:
    text = "".join(chr(c) for c in range(0x20)) + "\x7f" + "".join(chr(c) for c in range(0x80, 0xA0)) + "\u2028\u2029"
    shown = visible(text)
    assert shown == "".join(
        ch if ch in "\t\n" else (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}") for ch in text
    )
    assert "\\x0c" in shown and "\\x85" in shown and "\\u2028" in shown and "\\x1b" in shown
    assert visible("plain text, tabs\tand newlines\n, 中文 é") == "plain text, tabs\tand newlines\n, 中文 é"


def test_colour_codes_are_kept_for_the_lexer_and_every_other_escape_is_shown() -> None:
    assert visible_keeping_colours("\x1b[31mred\x1b[0m \x1b[1;38;5;200mx\x1b[m") == "\x1b[31mred\x1b[0m \x1b[1;38;5;200mx\x1b[m"
    assert visible_keeping_colours("c\x1b \x1b[31 \x00\x07") == "c\\x1b \\x1b[31 \\x00\\x07"


def test_comparing_and_the_stated_text_keep_the_raw_characters() -> None:
    # Only rendering changes: the terminal text (what `record` writes) holds
    # the characters themselves, and a stated output that holds them matches.
    stamp = Stamp("3.11.7", None, "CPU", "Linux x86_64")
    result = RunResult((Event("stdout", "text", "nul\x00 ff\x0c\x1b[31mred\x1b[0m\n"),), 0, None, None, 0.1, False, 0, stamp, "fork")
    assert terminal_text(result) == "nul\x00 ff\x0cred"
    assert judge(Tags(), result, "nul\x00 ff\x0cred", ()).ok
    assert not judge(Tags(), result, "nul\\x00 ff\\x0cred", ()).ok


# --- long words -----------------------------------------------------------------------------------


def test_long_words_are_the_runs_of_word_characters_over_the_bound() -> None:
    long = "y" * (LONGEST_WORD + 1)
    text = f"short {'x' * LONGEST_WORD} {long}.{long}_{long} end"
    found = [text[a:b] for a, b in long_words(text)]
    assert found == [long, f"{long}_{long}"]  # "_" is a word character, "." is not


# --- terminal lines ---------------------------------------------------------------------------------


def test_a_partial_line_ended_by_the_other_stream_is_one_mixed_block() -> None:
    blocks = terminal_blocks([ev(OUT, "a"), ev(ERR, "b"), ev(OUT, "c\n")])
    assert shape(blocks) == [[("stdout", "a"), ("stderr", "b"), ("stdout", "c\n")]]
    assert mixed(blocks[0])


def test_whole_lines_stay_in_blocks_of_their_own_stream() -> None:
    blocks = terminal_blocks([ev(OUT, "one\ntwo "), ev(ERR, "three\nfour\n"), ev(OUT, "five\n")])
    assert shape(blocks) == [
        [("stdout", "one\n")],
        [("stdout", "two "), ("stderr", "three\n")],
        [("stderr", "four\n")],
        [("stdout", "five\n")],
    ]
    assert [mixed(b) for b in blocks] == [False, True, False, False]


def test_consecutive_mixed_lines_make_one_block() -> None:
    events = [ev(OUT, "a "), ev(ERR, "b\nc "), ev(WARN, "w\n"), ev(OUT, "d\n")]
    assert shape(terminal_blocks(events)) == [
        [("stdout", "a "), ("stderr", "b\n"), ("stderr", "c "), ("warning", "w\n")],
        [("stdout", "d\n")],
    ]


def test_a_figure_is_a_block_of_its_own() -> None:
    figure = Event("stdout", "figure", "[figure 1: PNG]\n")
    assert shape(terminal_blocks([ev(OUT, "x"), figure, ev(ERR, "y")])) == [
        [("stdout", "x")], [("figure", "[figure 1: PNG]\n")], [("stderr", "y")]
    ]


events_strategy = st.lists(
    st.tuples(st.sampled_from([OUT, ERR, WARN]), st.text(alphabet="ab\n", min_size=1, max_size=8)), max_size=12
)


@given(events_strategy)
def test_blocks_hold_the_events_text_in_order_and_split_only_at_line_ends(pairs: list) -> None:
    events = [ev(where, text) for where, text in pairs]
    blocks = terminal_blocks(events)
    # Every character, with its stream and kind, in order: nothing lost, moved or relabelled.
    assert [(e.stream, e.kind, c) for b in blocks for e in b for c in e.text] == [
        (e.stream, e.kind, c) for e in events for c in e.text
    ]
    assert all(block[-1].text.endswith("\n") for block in blocks[:-1])  # blocks end at line ends
    for block in blocks:
        if not mixed(block):
            assert len(block) == 1
            continue
        # Each line of a mixed block mixes streams or kinds.
        line: set[tuple[str, str]] = set()
        for part in block:
            for c in part.text:
                line.add((part.stream, part.kind))
                if c == "\n":
                    assert len(line) > 1
                    line = set()


# --- which blocks may wrap on a phone (issue 34) ----------------------------------------


@pytest.mark.parametrize(
    ("stream", "kind", "text", "wraps"),
    [
        ("stdout", "text", "编译后的结果和 eager 相同: True\n编译后每次调用仍得到一块新存储: True\n", True),
        ("stdout", "text", "saved: a tensor saved for backward was modified in place (version 1, expected 0)\n", True),
        ("stdout", "text", "x = tensor([1., 2., 3.], requires_grad=True)\n\nend\n", True),  # a one-line tensor in a sentence
        ("stdout", "text", "w.grad = tensor([[-0.0580, -0.3042],\n        [-0.6689,  0.7850]])\n", False),  # rows line up
        ("stdout", "text", "op       saved\nsigmoid  output\n", False),  # columns lined up by spaces
        ("stdout", "text", "name\tsaved\n", False),
        ("stdout", "text", "form\n-----\n1\n", False),  # a table's head and its rule
        ("stdout", "text", "\x1b[31mred\x1b[0m words\n", False),  # colours: a terminal's layout
        ("stderr", "text", "a plain line on stderr\n", False),
        ("stderr", "traceback", "Traceback (most recent call last):\n", False),
        ("stderr", "warning", "UserWarning: x\n", False),
        ("stdout", "figure", "[figure 1: 500×300 PNG]\n", False),
    ],
)
def test_only_plain_stdout_read_as_prose_may_wrap(stream: str, kind: str, text: str, wraps: bool) -> None:
    assert may_wrap(stream, kind, text) is wraps
