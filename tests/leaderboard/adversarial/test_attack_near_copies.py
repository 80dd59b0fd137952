"""Attack class *near copies and row order* (issue 50.5, 50.6): another entry's outputs with a cosmetic edit (one
whitespace doubled per output, a space inside a placeholder, a case change) are the same content; and a bootstrap
interval does not depend on the order of the rows (trying orders moved a bound 15.34 -> 16.20)."""

from __future__ import annotations

import random

import pytest
from adversarial_kit import REPO, entry_as, outcomes, rewrite, rows_of

from privasis_bench.leaderboard.families.spans import span_content as tab_content
from privasis_bench.leaderboard.scored_content import privasis_content
from privasis_bench.protocol.metrics import bootstrap_ci
from privasis_bench.protocol.verdicts import RecordVerdict
from privasis_bench.tab.scorer import summarize, tallies_from_rows

P, T = "privasis_sample", "tab_sample"


@pytest.fixture(autouse=True)
def _no_ci_env(monkeypatch):
    monkeypatch.delenv("PRIVASIS_BENCH_BASE_REF", raising=False)
    monkeypatch.delenv("PRIVASIS_BENCH_SUBMITTER", raising=False)


def _double_first_space(text):
    return text.replace(" ", "  ", 1) if isinstance(text, str) else text


def test_cosmetic_edits_keep_the_content_digest_and_real_edits_change_it():
    rows = rows_of(REPO / "submissions" / "microsoft__presidio" / P)
    edited = [{**r, "output": _double_first_space(r.get("output"))} for r in rows]
    edited = [{**r, "output": r["output"].upper()} if isinstance(r["output"], str) else r for r in edited]
    assert privasis_content(edited) == privasis_content(rows)
    changed = [dict(r) for r in rows]
    first = next(r for r in changed if isinstance(r.get("output"), str))
    first["output"] += " extra words"
    assert privasis_content(changed) != privasis_content(rows)
    tab_rows = rows_of(REPO / "submissions" / "microsoft__presidio" / T)
    results = {"model": {"spec": {"provider": "presidio"}}}
    spaced = [{**r, "output": r["output"].replace("<PERSON>", "<PER SON>")} for r in tab_rows]
    assert spaced != tab_rows and tab_content(spaced, results) == tab_content(tab_rows, results)


@pytest.mark.parametrize("source,task,edit", [
    ("baselines__identity", P, _double_first_space),
    pytest.param("microsoft__presidio", T, lambda text: text.replace("<PERSON>", "<PER SON>"),
                 marks=pytest.mark.slow),  # verifying a TAB entry tags tokens with spaCy
])
def test_a_cosmetically_edited_copy_is_the_same_samples(tmp_path, source, task, edit):
    """The issue's reproduction: the copy verified as a new entry, ranked equal to its victim. Now both are one set
    of outputs (neither on the base branch here: both rejected, as for an exact copy)."""
    subs = tmp_path / "submissions"
    original = entry_as(subs, source, task, f"{source.split('__')[0]}/{source.split('__')[1]}")
    copy = entry_as(subs, source, task, "mallory/near-copy")
    rows = rows_of(copy)
    for row in rows:
        if isinstance(row.get("output"), str):
            row["output"] = edit(row["output"])
    rewrite(copy, rows=rows)
    got = outcomes(subs)
    assert any("the same samples as" in p for p in got[copy].problems), got[copy].problems
    assert any("the same samples as" in p for p in got[original].problems)


def test_privasis_intervals_do_not_depend_on_row_order():
    rows = rows_of(REPO / "submissions" / "HuggingFaceTB__SmolLM2-135M-Instruct" / P)
    verdicts = [RecordVerdict.from_dict(r) for r in rows]
    first = bootstrap_ci(verdicts, samples=500, seed=7, confidence=0.95)
    for seed in range(5):
        shuffled = verdicts[:]
        random.Random(seed).shuffle(shuffled)
        assert bootstrap_ci(shuffled, samples=500, seed=7, confidence=0.95) == first


def test_tab_and_replacement_intervals_do_not_depend_on_row_order():
    from privasis_bench.replacement.summary import summarize_rows

    rows = rows_of(REPO / "submissions" / "microsoft__presidio" / T)
    first = summarize(tallies_from_rows(rows), bootstrap_samples=300, seed=3, confidence=0.95)["ci"]
    rep_rows = rows_of(REPO / "submissions" / "microsoft__presidio" / "tab_replacement_sample")
    stored = {"nmi": None}
    rep_first = summarize_rows(rep_rows, stored, bootstrap_samples=300, seed=3, confidence=0.95)["ci"]
    for seed in range(3):
        order = random.Random(seed)
        shuffled, rep_shuffled = rows[:], rep_rows[:]
        order.shuffle(shuffled)
        order.shuffle(rep_shuffled)
        assert summarize(tallies_from_rows(shuffled), bootstrap_samples=300, seed=3, confidence=0.95)["ci"] == first
        assert summarize_rows(rep_shuffled, stored, bootstrap_samples=300, seed=3, confidence=0.95)["ci"] == rep_first
