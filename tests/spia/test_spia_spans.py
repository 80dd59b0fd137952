"""TAB-style span recall beside CPR: SPIA's span files read strictly, rewrites aligned to masked mentions, and the
measure recorded as not available, with the reason, where the task's data holds no span annotations."""

from __future__ import annotations

import json
import re

import pytest
from cli_main import run_main
from fake_openai_server import FakeOpenAIServer

from privasis_bench.errors import DataError
from privasis_bench.spia.spans import is_span_file, load_span_documents, recall_counts, span_recall
from privasis_bench.tasks.paths import builtin_tasks_dir
from tests.spia.spia_fakes import reply, writer
from tests.spia.test_spia_data import span_row

SAMPLE = builtin_tasks_dir() / "spia" / "spia_sample.jsonl"
TEXT = "Mr Olsen, born in 1961, lives in Bergen with Ms Dahl."


def _span_file(tmp_path, entities, text=TEXT, doc_id="TAB-x"):
    path = tmp_path / "entity.jsonl"
    path.write_text(json.dumps({"metadata": {"data_id": doc_id}, "text": text, "entities": entities}) + "\n")
    return path


def _mention(word, kind, entity, text=TEXT, shift=0):
    start = text.index(word) + shift
    return {"span_text": word, "start_offset": start, "end_offset": start + len(word), "entity_id": entity,
            "identifier_type": kind, "entity_type": "MISC"}


def test_token_and_entity_recall_of_a_rewrite(tmp_path):
    path = _span_file(tmp_path, [_mention("Olsen", "DIRECT", "p1"), _mention("1961", "QUASI", "y"),
                                 _mention("Bergen", "QUASI", "c"), _mention("Dahl", "DIRECT", "p2"),
                                 _mention("lives", "NO_MASK", "n")])
    assert is_span_file(path) and not is_span_file(SAMPLE)
    docs, notices = load_span_documents(path)
    doc = docs["TAB-x"]
    assert len(doc.mentions) == 4 and notices == []  # NO_MASK mentions are not to be masked
    assert recall_counts(doc, TEXT) == {"tokens": 4, "tokens_masked": 0, "direct_entities": 2,
                                        "direct_entities_masked": 0, "quasi_entities": 2, "quasi_entities_masked": 0}
    counts = recall_counts(doc, "Mr X, born in a year, lives in Bergen with Ms Dahl.")
    assert counts["tokens_masked"] == 2 and counts["direct_entities_masked"] == 1 and counts["quasi_entities_masked"] == 1
    pooled = span_recall([{"spans": counts}, {"spans": recall_counts(doc, "")}, {"id": "no spans"}])
    assert pooled["available"] and pooled["documents"] == 2
    assert (pooled["token_recall"], pooled["direct_entity_recall"], pooled["quasi_entity_recall"]) == (0.75, 0.75, 0.75)


def test_a_mention_off_its_text_is_re_anchored_or_left_out_with_a_notice(tmp_path):
    path = _span_file(tmp_path, [_mention("Olsen", "DIRECT", "p1", shift=1), {**_mention("Dahl", "DIRECT", "p2"),
                                                                                "span_text": "Hansen"}])
    docs, notices = load_span_documents(path)
    [mention] = docs["TAB-x"].mentions
    assert TEXT[mention.start:mention.end] == "Olsen"
    assert notices == ["entity.jsonl: 1 mention(s) re-anchored to their text within 8 characters, 1 left out of span "
                       "recall (their text is not at their offsets)"]


@pytest.mark.parametrize("entity, message", [
    ({"span_text": "Olsen", "start_offset": "3", "end_offset": 8, "identifier_type": "DIRECT"},
     "entities[0]: start_offset/end_offset must be integers"),
    ({"span_text": "Olsen", "start_offset": 8, "end_offset": 3, "identifier_type": "DIRECT"}, "0 <= start < end"),
    ({"span_text": "Olsen", "start_offset": 3, "end_offset": 8}, "entities[0]: span_text and identifier_type"),
])
def test_a_bad_span_row_is_one_error_naming_file_and_line(tmp_path, entity, message):
    path = _span_file(tmp_path, [entity])
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}:1: .*{re.escape(message)}"):
        load_span_documents(path)


def test_without_span_annotations_the_measure_says_why():
    missing = span_recall([{"id": "a", "scored": True}])
    assert missing["available"] is False and "no document of this run has span annotations" in missing["reason"]


def test_evaluate_records_span_recall_beside_cpr(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    data, spans = tmp_path / "spia.jsonl", tmp_path / "entity.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    spans.write_text("".join(span_row(x) + "\n" for x in lines[:2]), encoding="utf-8")  # two documents annotated
    preds = tmp_path / "anonymized.jsonl"
    preds.write_text("".join(json.dumps({**json.loads(x), "anonymized_text": writer(json.loads(x)["text"])}) + "\n"
                             for x in lines), encoding="utf-8")
    with FakeOpenAIServer(reply=reply) as server:
        url = server.base_url
        code, out, err = run_main(["evaluate", "-p", str(preds), "-t", "spia_sample", "--data-files", str(data),
                                   "--data-files", str(spans), "--role", f"adversary=openai:a,base_url={url}",
                                   "--role", f"matcher=openai:m,base_url={url}", "-o", str(tmp_path / "ev"),
                                   "--no-cache", "--no-progress", "--bootstrap-samples", "20"], monkeypatch, capsys)
    assert code == 0, out + err
    metrics = json.loads((tmp_path / "ev" / "spia_sample" / "results.json").read_text())["metrics"]
    recall = metrics["span_recall"]
    assert metrics["cpr"] is not None and recall["available"] and recall["documents"] == 2
    assert recall["quasi_entity_recall"] == 1.0  # the writer replaced every digit
    rows = [json.loads(x) for x in (tmp_path / "ev" / "spia_sample" / "samples.jsonl").read_text().splitlines()]
    assert sum("spans" in r for r in rows) == 2
