"""The shared de-identification plumbing: splicing, checking reported replacements, board sentences."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from privasis_bench.adapters.deid import choice, choices, paired, splice
from privasis_bench.errors import ModelSpecError


def test_splice_writes_each_replacement_and_reports_spans():
    out, spans, written = splice("call Ann at 555", [(12, 15, "<N>"), (5, 8, "")])
    assert (out, spans, written) == ("call  at <N>", [(5, 8), (12, 15)], ["", "<N>"])
    with pytest.raises(ValueError, match="overlapping"):
        splice("abcdef", [(0, 3, "x"), (2, 4, "y")])


def test_paired_refuses_replacements_that_do_not_rebuild_the_output():
    assert paired("a b c", [(2, 3)], ["X"], "a X c") == ([(2, 3)], ["X"])
    with pytest.raises(ValueError, match="do not rebuild"):
        paired("a b c", [(2, 3)], ["X"], "a Y c")
    with pytest.raises(ValueError, match="1 replaced spans but 2"):
        paired("a b c", [(2, 3)], ["X", "Y"], "a X c")


def test_choice_lines_name_the_argument_and_the_values():
    assert choice("t", "mode", None, ("none", "all")) == "none"
    with pytest.raises(ModelSpecError, match=r"^t: mode must be one of a, b, not 'c'$"):
        choice("t", "mode", "c", ("a", "b"))
    with pytest.raises(ModelSpecError, match=r"^t: kinds has unknown value\(s\) z; accepted \(\|-separated\): a\|b$"):
        choices("t", "kinds", "a|z", ("a", "b"))


def test_board_descriptions_load_no_tool_library():
    code = ("import json, sys\n"
            "from privasis_bench.adapters.registry import board_descriptions\n"
            "d = board_descriptions()\n"
            "print(json.dumps([sorted(d), sorted(m for m in sys.modules if m.split('.')[0] in "
            "('scrubadub', 'datafog', 'presidio_analyzer', 'presidio_anonymizer', 'spacy', 'faker'))]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    names, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"presidio", "scrubadub", "spacy-ner", "datafog", "regex-scrubber"} <= set(names) and loaded == []
