"""Attack class *DoS*: an entry that tries to make the verifier do unbounded work or print unbounded text is refused
after bounded work, with one short line per problem."""

from __future__ import annotations

from adversarial_kit import problems, read_json, rewrite, rows_of, tab_entry


def test_extra_and_duplicate_tab_rows_are_refused_before_any_alignment(tmp_path, monkeypatch):
    import privasis_bench.leaderboard.families.spans as fam

    folder = tab_entry(tmp_path)
    rows = rows_of(folder)
    rows += [dict(rows[0]), {**rows[1], "id": "not-a-document"}]
    rewrite(folder, rows=rows)
    aligned = []
    monkeypatch.setattr(fam, "masked_spans", lambda *a: aligned.append(1) or [])
    found = problems(folder)
    assert any(f"document {rows[0]['id']!r} has a second row" in p for p in found)
    assert any("'not-a-document' is not a document of the task" in p for p in found)
    assert aligned == []  # nothing aligned for a malformed entry


def test_an_output_past_the_token_budget_is_refused_unread(tmp_path):
    folder = tab_entry(tmp_path, "baselines__identity")
    rows = rows_of(folder)
    rows[0]["output"] = "word " * 200_000
    rewrite(folder, rows=rows)
    found = problems(folder)
    assert any(f"record {rows[0]['id']}: its samples line has" in p and "more than the task's budgets allow" in p
               for p in found)
    assert all(len(p) < 600 for p in found)


def test_a_huge_submitted_value_is_never_echoed(tmp_path):
    folder = tab_entry(tmp_path)
    sub = read_json(folder / "submission.json")
    sub["track"] = "v" * 100_000
    rewrite(folder, sub=sub)
    found = problems(folder)
    assert found and all(len(p) < 600 for p in found)
