"""Attack class *claimed spans* (issue 50.2): a span masker's real outputs kept, its reported spans widened (one
span over the whole document, or each span stretched over the mentions it missed). A reported span counts only where
the output no longer shows the words, in the scorer and in the verifier alike (privasis_bench/tab/shown.py)."""

from __future__ import annotations

from adversarial_kit import problems, read_json, rewrite, rows_of, tab_entry, tab_metrics_for

from privasis_bench.data.system_output import SystemOutput
from privasis_bench.tab.loading import load_documents
from privasis_bench.tab.metrics import pooled, tally_document
from privasis_bench.tab.scorer import summarize
from privasis_bench.tab.shown import scored_spans, shown_spans
from privasis_bench.tab.tokens import spacy_ignore_map
from privasis_bench.tasks.registry import load_task

PRESIDIO = "microsoft__presidio"


def _docs():
    return {d.doc_id: d for d in load_documents(list(load_task("tab_sample").dataset.data_files))}


def _whole(doc, row):
    return [(0, len(doc.text))]


def _widened(doc, row):
    """Each real span stretched to the next one's start (over every mention it missed in between)."""
    spans = [tuple(s) for s in row["masked_spans"]]
    return [(s, spans[i + 1][0] if i + 1 < len(spans) else len(doc.text)) for i, (s, _) in enumerate(spans)]


def _token_recall(docs, rows, spans_of):
    tallies = [tally_document(docs[r["id"]], spans_of(r), spacy_ignore_map(None)) for r in rows]
    return summarize(tallies, bootstrap_samples=0, seed=0, confidence=0.95)["token_recall"]


def test_claimed_spans_would_inflate_recall_but_the_derived_ones_do_not(tmp_path):
    """The issue's numbers: taken as claimed, Presidio's token recall goes 0.766 -> 1.000 (whole document) or
    -> 0.918 (widened); counted where the output shows the change, it stays at or below the honest 0.766."""
    docs, rows = _docs(), rows_of(tab_entry(tmp_path, PRESIDIO))
    honest = _token_recall(docs, rows, lambda r: [tuple(s) for s in r["masked_spans"]])
    assert round(honest, 3) == 0.766
    for forge, claimed_recall in ((_whole, 1.0), (_widened, 0.918)):
        assert round(_token_recall(docs, rows, lambda r: forge(docs[r["id"]], r)), 3) == claimed_recall
        derived = _token_recall(docs, rows, lambda r: shown_spans(docs[r["id"]].text, forge(docs[r["id"]], r),
                                                                  r["output"]))
        assert derived <= honest + 1e-12, (forge.__name__, derived, honest)


def test_honest_masker_spans_come_back_unchanged():
    """Every seeded span masker's reported spans are exactly what its output shows (the committed boards keep
    their numbers); a span whose replacement keeps a word is cut there."""
    from adversarial_kit import REPO

    docs = _docs()
    for entry in (PRESIDIO, "microsoft__presidio-synthetic", "microsoft__presidio-mask", "datafog__datafog-regex",
                  "spacy__ner-masker", "baselines__regex-scrubber"):
        for row in rows_of(REPO / "submissions" / entry / "tab_sample"):
            spans = [tuple(s) for s in row["masked_spans"]]
            assert scored_spans(docs[row["id"]].text, spans, row["output"]) == spans, (entry, row["id"])
    text, output = "Mr John Smith lives in Oslo.", "Mr John <SURNAME> lives in <CITY>."
    assert scored_spans(text, [(3, 13), (23, 27)], output) == [(8, 13), (23, 27)]
    assert scored_spans(text, [(0, len(text))], output) == [(8, 13), (23, 27)]


def test_the_scorer_scores_what_the_output_shows_and_keeps_the_claim(tmp_path):
    """A system reporting the whole document is scored on the changed words; its claim is kept in the row."""
    from privasis_bench.tab.scorer import TabScorer

    scorer = TabScorer(load_task("tab_sample"))
    scorer.records()
    rows = rows_of(tab_entry(tmp_path, PRESIDIO))
    docs = _docs()
    outputs = {r["id"]: SystemOutput(text=r["output"], spans=_whole(docs[r["id"]], r)) for r in rows}
    metrics, scored = scorer.score(outputs, bootstrap_samples=0, seed=0, confidence=0.95)
    assert round(metrics["token_recall"], 3) == 0.766
    assert all(r["reported_spans"] == [[0, len(docs[r["id"]].text)]] for r in scored)


def _recount(row, doc, spans, ignore):
    """Make a row's derived fields those of ``spans`` (a careful forger recounts everything)."""
    tally = tally_document(doc, spans, ignore)
    row.update(masked_spans=[list(s) for s in spans], counts=dict(tally.counts), by_type=tally.by_type,
               missed=tally.missed, measures={k: (round(v, 3) if not isinstance(v, dict) else
                                                  {a: round(b, 3) for a, b in v.items()})
                                              for k, v in pooled(tally).items()})


def test_a_verified_entry_cannot_claim_the_whole_document(tmp_path):
    """The forged Presidio TAB entry, every row claiming one span over the whole document with counts, measures and
    metrics recounted to match: the verifier derives the spans from the output and refuses the rows."""
    folder = tab_entry(tmp_path, PRESIDIO)
    docs, ignore = _docs(), spacy_ignore_map(None)
    rows = rows_of(folder)
    for row in rows:
        _recount(row, docs[row["id"]], _whole(docs[row["id"]], row), ignore)
    res = read_json(folder / "results.json")
    res["metrics"].update(tab_metrics_for(rows))
    assert res["metrics"]["token_recall"] == 1.0
    rewrite(folder, results=res, rows=rows)
    found = problems(folder)
    assert any("masked_spans is not what its output gives" in p for p in found), found


def test_a_claim_kept_beside_the_derived_spans_verifies_at_the_honest_numbers(tmp_path):
    """A row may carry its claim as ``reported_spans`` beside the spans scored (what the scorer writes): the entry
    verifies, and the recomputed recall is the honest one, not the claim's."""
    from privasis_bench.leaderboard.verify import verify_submission

    folder = tab_entry(tmp_path, PRESIDIO)
    docs, ignore = _docs(), spacy_ignore_map(None)
    rows = rows_of(folder)
    for row in rows:
        doc = docs[row["id"]]
        row["reported_spans"] = [[0, len(doc.text)]]
        _recount(row, doc, scored_spans(doc.text, _whole(doc, row), row["output"]), ignore)
    res = read_json(folder / "results.json")
    res["metrics"].update(tab_metrics_for(rows))
    rewrite(folder, results=res, rows=rows)
    v = verify_submission(folder)
    assert not v.problems, v.problems
    assert round(v.results["metrics"]["token_recall"], 3) == 0.766
