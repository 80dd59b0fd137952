"""Selecting the authors' code variants by ``scorer_args``: checked settings, the bugs only on request, what a run
records (nothing new by default, so the default numbers and the board stay as they were), and a run end to end."""

from __future__ import annotations

import json

import pytest

from privasis_bench.errors import TaskConfigError
from privasis_bench.replacement.settings import parse_settings, tps_function, variants
from privasis_bench.replacement.summary import estimator_key
from privasis_bench.replacement.tps import document_tps


def test_the_default_is_the_papers_text_and_records_no_variant():
    settings = parse_settings({}, "t.yaml")
    assert (settings.tps_variant, settings.mlm_variant, settings.nmi_variant) == ("default",) * 3
    assert settings.mlm_window == 256 and settings.reproduce_bugs == ()
    assert variants(settings) is None and tps_function(settings) is document_tps


def test_variant_authors_code_selects_every_measure_and_each_may_be_given_apart():
    settings = parse_settings({"variant": "authors_code"}, "t.yaml")
    assert (settings.tps_variant, settings.mlm_variant, settings.nmi_variant) == ("authors_code",) * 3
    assert settings.mlm_window == 100  # the authors' segments
    assert parse_settings({"mlm_variant": "authors_code", "mlm_window": 64}, "t.yaml").mlm_window == 64
    only_nmi = parse_settings({"variant": "authors_code", "tps_variant": "default", "mlm_variant": "default"}, "t")
    assert variants(only_nmi)["nmi"] == "authors_code" and "tps" not in variants(only_nmi)
    recorded = variants(parse_settings({"tps_variant": "authors_code",
                                        "reproduce_bugs": ["tps_span_at_end_dropped"]}, "t.yaml"))
    assert recorded["tps"] == "authors_code" and recorded["reproduced_bugs"] == ["tps_span_at_end_dropped"]
    assert tps_function(parse_settings({"tps_variant": "authors_code"}, "t")).keywords == {"bugs": ()}


@pytest.mark.parametrize("args, field", [
    ({"reproduce_bugs": ["tps_span_at_end_dropped"]}, "reproduce_bugs"),  # a bug needs its variant
    ({"nmi_variant": "authors_code", "reproduce_bugs": ["tps_inner_terms_unedited"]}, "reproduce_bugs"),
    ({"variant": "authors_code", "reproduce_bugs": ["no_such_bug"]}, "reproduce_bugs"),
    ({"variant": "authors_code", "reproduce_bugs": "tps_span_at_end_dropped"}, "reproduce_bugs"),
    ({"tps_variant": "authors"}, "tps_variant"),
    ({"variant": True}, "variant"),
])
def test_a_bad_variant_or_bug_is_one_line_naming_the_key(args, field):
    with pytest.raises(TaskConfigError) as err:
        parse_settings(args, "my_task.yaml")
    assert "my_task.yaml" in str(err.value) and f"scorer_args.{field}" in str(err.value)
    assert "\n" not in str(err.value)


def test_the_estimator_key_is_unchanged_by_default_and_separates_a_variant():
    described = {"information_content": {"name": "wordfreq:en/best"}, "similarity": {"model": "m"},
                 "spans": {"spacy_pipeline": "p"}, "pairing": "x", "trir": None, "nmi": {"model": "m"}}
    with_variant = {**described, "variant": {"tps": "authors_code", "reproduced_bugs": []}}
    assert estimator_key(described) == estimator_key({**described, "variant": None})  # absent: not hashed
    assert estimator_key(with_variant) != estimator_key(described)


@pytest.mark.slow
def test_an_authors_code_run_records_its_variants_and_reproduces_a_bug_only_when_asked(
        tmp_path, monkeypatch, capsys, tiny_bert):
    from cli_main import run_main
    from test_replacement_run import SAMPLE, _task

    task = _task(tmp_path)
    body = task.read_text(encoding="utf-8").replace(
        "information_content: wordfreq",
        f"information_content: mlm\n  mlm_model: {tiny_bert}\n  variant: authors_code\n"
        "  reproduce_bugs: [tps_span_at_end_dropped]")
    task.write_text(body, encoding="utf-8")
    first, rest = SAMPLE[0], SAMPLE[1:]
    predictions = {first["doc_id"]: {"output": "", "replacements": [
        {"start": 0, "end": len(first["text"]), "replacement": ""}]}}
    predictions.update({d["doc_id"]: {"output": d["text"], "replacements": []} for d in rest})
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps(predictions, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "out"
    code, o, e = run_main(["evaluate", "--tasks", str(task), "-t", "tab_replacement_fast", "-p", str(pred), "-o",
                           str(out), "--bootstrap-samples", "20"], monkeypatch, capsys)
    assert code == 0, o + e
    res = json.loads((out / "tab_replacement_fast" / "results.json").read_text(encoding="utf-8"))
    scorer = res["scorer"]
    assert scorer["variant"]["tps"] == scorer["variant"]["mlm"] == scorer["variant"]["nmi"] == "authors_code"
    assert scorer["variant"]["reproduced_bugs"] == ["tps_span_at_end_dropped"]
    assert scorer["information_content"]["name"].endswith("/authors_code") and scorer["information_content"]["window"] == 100
    assert scorer["spans"]["segmenter"].startswith("authors' code") and scorer["nmi"]["variant"] == "authors_code"
    rows = {r["id"]: r for r in map(json.loads, (out / "tab_replacement_fast" / "samples.jsonl").read_text(
        encoding="utf-8").splitlines())}
    # the whole text suppressed: the run reaches the end of the document, so the reproduced bug ignores it
    assert rows[first["doc_id"]]["tps"] == pytest.approx(1.0)
    assert all(rows[d["doc_id"]]["tps"] == pytest.approx(1.0) for d in rest)  # nothing edited


def test_the_docs_yaml_block_is_accepted_settings():
    import re
    from pathlib import Path

    import yaml

    page = (Path(__file__).resolve().parents[2] / "docs" / "replacement.md").read_text(encoding="utf-8")
    block = yaml.safe_load(re.search(r"```yaml\n(.*?)```", page, re.S).group(1))["scorer_args"]
    settings = parse_settings(block, "docs/replacement.md")
    assert settings.tps_variant == settings.nmi_variant == "authors_code" and len(settings.reproduce_bugs) == 3
