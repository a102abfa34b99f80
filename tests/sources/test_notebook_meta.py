"""Notebook metadata as tags (snipcheck.sources.notebook_meta): what a cell's tag block becomes."""

from __future__ import annotations

import pytest
from snipcheck.sources import tags
from snipcheck.sources.notebook_meta import CELL_KEYS, NOTEBOOK_KEYS, cell_table, known, tag_block


def test_a_cells_table_goes_over_the_notebooks_and_joins_its_lists() -> None:
    notebook = {"requires": ["cuda"], "timeout": 30, "seed": 7, "env": ["A"]}
    cell = {"requires": ["torch>=2.14", "cuda"], "timeout": 120, "env": "B"}
    assert cell_table(notebook, cell, first=True) == {
        "requires": ["cuda", "torch>=2.14"], "timeout": 120, "seed": 7, "env": ["A", "B"]
    }  # fmt: skip
    assert "seed" not in cell_table(notebook, {}, first=False)  # the chain's process is seeded at its first cell


def test_the_tag_block_is_read_back_as_the_same_tags() -> None:
    block = tag_block({"requires": ["cuda"], "timeout": 2.5, "seed": 3, "expect": "KeyError", "refutes": 'a "b"\\c'})
    read = tags.parse("print(1)\n" + block).tags
    assert (read.requires, read.timeout, read.seed, read.expect, read.refutes) == (("cuda",), 2.5, 3, "KeyError", 'a "b"\\c')
    assert tag_block({}) == ""
    with pytest.raises(ValueError, match="bad value for 'timeout'"):
        tag_block({"timeout": {"seconds": 3}})


def test_unknown_and_misplaced_keys_are_left_out_and_named() -> None:
    kept, problems = known({"timeout": 3, "expect": "E", "timout": 4}, NOTEBOOK_KEYS)
    assert kept == {"timeout": 3}
    assert problems[0].startswith("tag 'expect' says what one cell does")
    assert problems[1].startswith("unknown tag 'timout'") and ", ".join(NOTEBOOK_KEYS) in problems[1]
    assert known(["timeout"], CELL_KEYS)[1] == ["its metadata 'snipcheck' is a list, not an object of tags; it is left out"]
    assert known(None, CELL_KEYS) == ({}, [])
