"""Attack class *self-reported metadata*: what the submitter writes about the run (scorer, schema, labels, owner,
track) is checked against what the verifier derives, or bounded, or refused."""

from __future__ import annotations

from adversarial_kit import problems, read_json, rewrite, tab_entry


def test_a_tab_entry_cannot_claim_another_or_an_unknown_scorer(tmp_path):
    folder = tab_entry(tmp_path)
    res = read_json(folder / "results.json")
    res["scorer"]["name"] = "tab2"
    rewrite(folder, results=res)
    assert any("scorer.name 'tab2' has no board family" in p for p in problems(folder))


def test_a_tab_entry_must_use_its_family_schemas(tmp_path):
    folder = tab_entry(tmp_path)
    sub = read_json(folder / "submission.json")
    sub["schema_versions"] = {"results": "results-1", "samples": "samples-row-1", "submission": "submission-1"}
    rewrite(folder, sub=sub)
    assert any("schema_versions" in p and "for tab entries" in p for p in problems(folder))


def test_a_tab_entry_cannot_show_a_judge_it_never_had(tmp_path):
    """A TAB run has no judge: a judge label in submission.json ("paper judge") is refused by its schema."""
    folder = tab_entry(tmp_path)
    sub = read_json(folder / "submission.json")
    sub["judge"]["label"] = "openai:gpt-oss-120b (paper judge)"
    rewrite(folder, sub=sub)
    assert any("judge.label" in p and "tab-submission-1" in p for p in problems(folder))


def test_the_model_label_is_free_text_but_bounded(tmp_path):
    folder = tab_entry(tmp_path)
    res, sub = read_json(folder / "results.json"), read_json(folder / "submission.json")
    res["model"]["label"] = sub["model"]["label"] = "m" * 201
    rewrite(folder, results=res, sub=sub)
    assert any("model.label has 201 characters, more than the 200" in p for p in problems(folder))


def test_a_span_masker_claim_comes_from_the_model_spec_not_the_rows(tmp_path):
    """An identity run cannot become a span masker by writing `span_source: system` (see test_derived_field): the
    spec decides. A spec naming a span masker must then match what the outputs show."""
    from privasis_bench.leaderboard.families.spans import span_masker

    assert span_masker({"model": {"spec": {"provider": "presidio"}}}) is True
    assert span_masker({"model": {"spec": {"provider": "identity"}}}) is False
    assert span_masker({"model": {"spec": {"provider": "my-plugin-masker"}}}) is False  # beyond the verifier


def test_labels_and_free_text_have_length_bounds(tmp_path):
    """Issue 41: a 1,000,000-character label verified."""
    folder = tab_entry(tmp_path)
    sub = read_json(folder / "submission.json")
    sub["label"] = "x" * 1_000_000
    rewrite(folder, sub=sub)
    assert any("label has 1000000 characters, more than the 200" in p for p in problems(folder))
    sub["label"], sub["harness"]["git_revision"] = "ok", "y" * 5000
    rewrite(folder, sub=sub)
    assert any("harness.git_revision has 5000 characters" in p for p in problems(folder))


def test_an_owner_must_be_a_plain_handle(tmp_path):
    folder = tab_entry(tmp_path)
    sub = read_json(folder / "submission.json")
    sub["owner"] = "<script>alert(1)</script>"
    rewrite(folder, sub=sub)
    found = [p for v in __import__("adversarial_kit").outcomes(tmp_path).values() for p in v.problems]
    assert any("owner:" in p and "expected a handle" in p for p in found)
