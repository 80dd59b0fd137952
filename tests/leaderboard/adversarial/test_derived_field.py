"""Attack class *derived field*: a number, span, count or flag the verifier can derive is forged, with every other
number made consistent with it. The verifier derives it again from the outputs and the data it holds."""

from __future__ import annotations

from adversarial_kit import problems, read_json, rewrite, rows_of, tab_entry, tab_metrics_for

from privasis_bench.leaderboard.families.spans import span_problems
from privasis_bench.tab.loading import load_documents
from privasis_bench.tab.metrics import pooled, tally_document
from privasis_bench.tab.tokens import spacy_ignore_map
from privasis_bench.tasks.registry import load_task


def _docs():
    return {d.doc_id: d for d in load_documents(list(load_task("tab_sample").dataset.data_files))}


def _claim_spans(row, doc, spans, ignore):
    """Make a row say ``spans`` were masked, with counts and measures recounted to match (a careful forger)."""
    tally = tally_document(doc, spans, ignore)
    row.update(masked_spans=[list(s) for s in spans], span_source="system", counts=dict(tally.counts),
               by_type=tally.by_type, missed=tally.missed,
               measures={k: (round(v, 3) if not isinstance(v, dict) else {a: round(b, 3) for a, b in v.items()})
                         for k, v in pooled(tally).items()})


def _consistent(folder, rows):
    res = read_json(folder / "results.json")
    res["metrics"].update({k: v for k, v in tab_metrics_for(rows).items()})
    rewrite(folder, results=res, rows=rows)


def test_identity_claiming_every_gold_mention_masked_is_refused(tmp_path):
    """Issue 41: identity rows with `span_source: reported` claiming every gold mention ranked at token recall 1."""
    folder = tab_entry(tmp_path, "baselines__identity")
    docs, ignore = _docs(), spacy_ignore_map(None)
    rows = rows_of(folder)
    for row in rows:
        doc = docs[row["id"]]
        _claim_spans(row, doc, _gold(doc), ignore)
    _consistent(folder, rows)
    assert read_json(folder / "results.json")["metrics"]["token_recall"] > 0.9  # what the forger wanted shown
    found = problems(folder)
    assert any("masked_spans is not what its output gives" in p for p in found), found


def _gold(doc):
    """Every annotated mention of ``doc`` as merged character spans."""
    return _merge(sorted({(m.start_offset, m.end_offset) for ms in doc.annotations.values() for m in ms}))


def _merge(spans):
    out = []
    for s, e in spans:
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def test_marking_the_worst_documents_unscored_cannot_drop_them(tmp_path):
    """Issue 41: `scored: false` on the worst documents lifted the scrubber's token recall 0.372 -> 0.410."""
    folder = tab_entry(tmp_path)
    rows = rows_of(folder)
    worst = sorted(rows, key=lambda r: r["measures"]["token_recall"])[:2]
    for row in worst:
        row["scored"] = False
    _consistent(folder, rows)
    assert read_json(folder / "results.json")["metrics"]["token_recall"] > 0.372
    found = problems(folder)
    assert sum("scored is False but its output can be scored" in p for p in found) == 2, found
    assert any("metrics.token_recall" in p for p in found)


def test_a_span_masker_claiming_a_span_its_output_keeps_is_refused(tmp_path):
    folder = tab_entry(tmp_path)
    docs, ignore = _docs(), spacy_ignore_map(None)
    rows = rows_of(folder)
    row = rows[0]
    doc = docs[row["id"]]
    extra = next((s, e) for s, e in _gold(doc) if doc.text[s:e] in row["output"])  # a mention the output kept
    _claim_spans(row, doc, _merge(sorted([*map(tuple, row["masked_spans"]), extra])), ignore)
    _consistent(folder, rows)
    found = problems(folder)
    assert any(f"document {row['id']}:" in p and ("keeps it" in p or "not in the output" in p) for p in found), found


def test_reported_spans_must_describe_the_output():
    text = "Mr Smith lives in Oslo."
    assert span_problems(text, [[3, 8], [18, 22]], "Mr [NAME] lives in [LOC].") is None
    assert "keeps it" in span_problems(text, [[3, 8]], "Mr Smith lives in Oslo.")
    assert span_problems(text, [[3, 8]], "Mr [NAME] lives in [LOC].") is not None  # Oslo changed, not claimed
    assert "out of order" in span_problems(text, [[18, 22], [3, 8]], "Mr [NAME] lives in [LOC].")
    assert "out of order" in span_problems(text, [[3, 99]], "Mr [NAME]")
    assert "integer pairs" in span_problems(text, [["3", 8]], "x")


def test_recounted_counts_and_missed_mentions_must_match(tmp_path):
    folder = tab_entry(tmp_path)
    rows = rows_of(folder)
    rows[0]["missed"] = []
    rows[1]["counts"]["tok_masked"] = rows[1]["counts"].get("tok_masked", 0) + 5
    rewrite(folder, rows=rows)
    found = problems(folder)
    assert any(f"document {rows[0]['id']}: missed is not" in p for p in found)
    assert any(f"document {rows[1]['id']}: counts is not" in p for p in found)


def test_results_counts_and_interval_are_recomputed(tmp_path):
    folder = tab_entry(tmp_path)
    res = read_json(folder / "results.json")
    res["counts"]["scored"] = 9
    res["metrics"]["ci"]["token_recall"]["low"] = 0.5
    rewrite(folder, results=res)
    found = problems(folder)
    assert any("counts.scored is 9; the rows give 10" in p for p in found)
    assert any("metrics.ci.token_recall.low" in p for p in found)


def test_a_privasis_headline_number_is_recomputed(tmp_path):
    """The same class on the other family: a Privasis headline edited in results.json."""
    import shutil
    from pathlib import Path

    src = Path(__file__).resolve().parents[3] / "submissions" / "baselines__identity" / "privasis_sample"
    folder = Path(shutil.copytree(src, tmp_path / "baselines__identity" / "privasis_sample"))
    res = read_json(folder / "results.json")
    res["metrics"]["headline"]["retention_attribute"] += 5
    rewrite(folder, results=res)
    assert any("metrics.headline.retention_attribute" in p for p in problems(folder))


def test_a_run_cut_to_its_best_document_is_partial_and_never_ranks_with_full_runs(tmp_path):
    """Issue 41: a run cut to its best document ranked in the same table as 10-document runs."""
    from leaderboard_fakes import invoke

    from privasis_bench.leaderboard.build import board_rows
    from privasis_bench.leaderboard.submit import submit_run
    from privasis_bench.leaderboard.verify import verify_paths

    subs = tmp_path / "submissions"
    dropped = tab_entry(subs, "microsoft__presidio")
    rows = rows_of(dropped)[:1]  # only the first document, numbers made to match
    _consistent(dropped, rows)
    assert any("no samples row" in p for p in problems(dropped))
    import shutil

    shutil.rmtree(dropped.parent)
    tab_entry(subs, "baselines__regex-scrubber")
    invoke("run", "-m", "regex-scrubber", "-t", "tab_sample", "--limit", "1", "--no-progress", "--no-cache",
           "-o", str(tmp_path / "run"))
    (cut,) = submit_run(tmp_path / "run", "cut/best-document", track="verified", root=subs)
    accepted = [v for v in verify_paths([subs]) if v.ok]
    assert len(accepted) == 2
    rows = {r["name"]: r for r in board_rows(accepted, {})}
    assert rows["cut/best-document"]["partial"] is True and rows["baselines/regex-scrubber"]["partial"] is False
    assert rows["cut/best-document"]["group"] != rows["baselines/regex-scrubber"]["group"]
    assert rows["cut/best-document"]["rank"] == rows["baselines/regex-scrubber"]["rank"] == 1  # each in its own table


def test_a_failed_document_makes_an_unfinished_run_unless_scored_as_empty(tmp_path):
    folder = tab_entry(tmp_path)
    rows = rows_of(folder)
    rows[0].update(output=None, error="timeout", scored=False)
    for key in ("masked_spans", "counts", "by_type", "missed", "measures", "span_source"):
        rows[0].pop(key, None)
    res = read_json(folder / "results.json")
    res["metrics"].update(tab_metrics_for(rows))
    res["counts"].update(scored=9, failed_outputs=1)
    rewrite(folder, results=res, rows=rows)
    found = problems(folder)
    assert any("1 document(s) with a failed output: an unfinished run" in p for p in found), found
