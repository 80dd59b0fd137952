"""The regex scrubber reports the spans it replaced, and its text is exactly what it always produced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privasis_bench.adapters.baselines import regex_scrub, regex_scrub_spans

TASKS = Path(__file__).resolve().parents[2] / "tasks" / "sample"
CRAFTED = ("Mr John Smith met Dr. Anna Bell on March 3, 2021 at www.x.com, call +1 555 123 4567 or mail a.b@c.org; "
           "id AB-12345 and 4111 1111 1111 1111. The Big Red Dog And Cat ran.\nJohn\nSmith Jones paid $5,000 on 2021-01-02.")


def _texts() -> list[str]:
    rows = [json.loads(line)["original_record"] for line in (TASKS / "privasis_sample.jsonl").read_text(encoding="utf-8").splitlines()]
    return rows + [d["text"] for d in json.loads((TASKS / "tab_sample.json").read_text(encoding="utf-8"))] + [CRAFTED]


@pytest.mark.parametrize("names", [False, True])
def test_the_text_is_unchanged_and_every_span_is_gone_from_it(names: bool):
    for text in _texts():
        out, spans = regex_scrub_spans(text, names=names)
        assert out == regex_scrub(text, names=names)
        assert spans == sorted(spans) and all(0 <= s < e <= len(text) for s, e in spans)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))  # no overlap


def test_the_spans_are_the_replaced_values():
    _, spans = regex_scrub_spans(CRAFTED, names=True)
    assert [CRAFTED[s:e] for s, e in spans] == [
        "Mr John Smith", "Dr. Anna Bell", "March 3, 2021", "www.x.com", "+1 555 123 4567", "a.b@c.org", "AB-12345",
        "4111 1111 1111 1111", "Big Red Dog", "John\nSmith Jones", "$5,000", "2021-01-02"]
