"""inspect_ai interop: the privasis tasks inside inspect, and inspect logs judged by privasis-bench.

inspect runs in-process against the scripted OpenAI-compatible server (``openai-api/fake/model``); the real
model agreement check (llama.cpp) is tests/integration/test_inspect_interop.py.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from cli_main import run_main  # noqa: E402
from fake_openai_server import FakeOpenAIServer, expected_output  # noqa: E402

from privasis_bench.data.loading import load_records  # noqa: E402
from privasis_bench.pipeline.predictions import load_predictions  # noqa: E402
from privasis_bench.protocol.metrics import headline_metrics, scored  # noqa: E402
from privasis_bench.protocol.testee import build_sanitize_request  # noqa: E402
from privasis_bench.protocol.verdicts import RecordVerdict  # noqa: E402
from privasis_bench.tasks.registry import load_task  # noqa: E402

LIMIT = 3


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory):
    """One inspect eval of the sample task (first 3 records) against the scripted server, as .eval and .json logs.

    Once per process (session scope): inspect keeps one model per provider name, bound to the first server it saw,
    so a second set-up in the same process (a module fixture is set up again when pytest-xdist runs another file's
    test in between) would ask a server that is gone. A failed call fails fast (few retries, short timeout) instead
    of inspect's back-off of up to 30 minutes.
    """
    from inspect_ai import eval as inspect_eval

    from privasis_bench.interop.inspect_task import privasis_inspect_task

    out = tmp_path_factory.mktemp("inspect")
    mp = pytest.MonkeyPatch()
    with FakeOpenAIServer() as server:
        mp.setenv("FAKE_BASE_URL", server.base_url)
        mp.setenv("FAKE_API_KEY", "sk-test-not-a-secret")
        logs = {}
        for fmt in ("eval", "json"):
            task = privasis_inspect_task("privasis_sample", limit=LIMIT, max_tokens=32)
            (log,) = inspect_eval(task, model="openai-api/fake/model", log_dir=str(out / fmt), log_format=fmt,
                                  display="none", max_retries=2, timeout=60)
            assert log.status == "success", log.error
            logs[fmt] = log
        bodies = list(server.bodies)
    mp.undo()
    return logs, bodies


def test_dataset_is_privasis_benchmarks_own_records_and_prompts():
    from privasis_bench.interop.inspect_task import privasis_inspect_task

    task = load_task("privasis_sample")
    loaded = load_records(task)
    inspect_task = privasis_inspect_task("privasis_sample")
    samples = list(inspect_task.dataset)
    assert [s.id for s in samples] == [r.id for r in loaded.scored]  # same records, same exclusions, same ids
    by_id = {r.id: r for r in loaded.scored}
    for sample in samples:
        assert sample.input == build_sanitize_request(by_id[sample.id], task).messages[0][1]  # byte for byte
    smoothed = privasis_inspect_task("privasis_sample", instruction="base", limit=1)
    first = list(smoothed.dataset)[0]
    assert first.input == build_sanitize_request(loaded.scored[0], task, instruction="base").messages[0][1]
    assert inspect_task.config.max_tokens == task.generation.max_tokens


def test_the_model_gets_exactly_the_sanitize_request(inspect_logs):
    logs, bodies = inspect_logs
    task = load_task("privasis_sample")
    records = {r.id: r for r in load_records(task).scored}
    sent = [b for b in bodies if b["max_tokens"] == 32]
    expected = {build_sanitize_request(records[s.id], task).messages[0][1] for s in logs["eval"].samples}
    assert {b["messages"][-1]["content"] for b in sent} == expected
    assert all(len(b["messages"]) == 1 and b["messages"][0]["role"] == "user" for b in sent)  # no system prompt


def test_scores_carry_verdicts_and_metrics_are_the_results_json_metrics(inspect_logs):
    logs, _ = inspect_logs
    log = logs["eval"]
    verdicts = []
    for sample in log.samples:
        score = sample.scores["privasis_judge"]
        verdict = RecordVerdict.from_dict(score.metadata["verdict"])
        assert verdict.record_id == sample.id and verdict.targets
        assert score.metadata["output"] == expected_output(sample.input)  # the protocol's post-processing
        verdicts.append(verdict)
    expected = headline_metrics(scored(verdicts))
    got = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert set(got) == set(expected)
    for name, value in expected.items():
        assert (value is None and got[name] != got[name]) or got[name] == pytest.approx(value)


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_evaluate_reads_inspect_logs_by_id(inspect_logs, fmt, tmp_path, monkeypatch, capsys):
    logs, _ = inspect_logs
    log = logs[fmt]
    path = Path(log.location)
    task = load_task("privasis_sample")
    loaded = load_records(task)
    preds = load_predictions(path, loaded.scored, task=task)
    assert preds.report.format == "inspect" and preds.report.postprocess == "testee"
    done = [s.id for s in log.samples]
    for sample in log.samples:
        out = preds[sample.id]
        assert out.output == sample.scores["privasis_judge"].metadata["output"]  # the same post-processing
        assert out.model == "inspect:openai-api/fake/model"
    missing = [r.id for r in loaded.scored if r.id not in done]
    assert preds.report.missing == missing and not any(i in preds for i in missing)  # left out, and reported
    assert preds.report.prompt_mismatch == []

    code, out, err = run_main(["evaluate", "--predictions", str(path), "--predictions-format", "inspect", "-t", "privasis_sample",
                               "--judge", "none", "-o", str(tmp_path / "eval"), "--no-progress"], monkeypatch, capsys)
    assert code == 1, (out, err)  # the records inspect did not run are left out: an incomplete result, said so
    assert "left out of the scores" in out and "re-running `run`" not in out
    results = json.loads((tmp_path / "eval" / "privasis_sample" / "results.json").read_text())
    assert results["model"]["predictions"]["format"] == "inspect"
    assert results["model"]["predictions"]["missing"] == len(missing)
    assert results["counts"]["missing_predictions"] == len(missing) and results["counts"]["failed_outputs"] == 0
    assert results["counts"]["judged_records"] == len(done) and results["complete"] is False


def test_a_log_that_is_not_inspects_is_named(tmp_path):
    bad = tmp_path / "broken.eval"
    bad.write_bytes(b"not a zip archive")
    task = load_task("privasis_sample")
    with pytest.raises(Exception) as info:
        load_predictions(bad, load_records(task).scored, task=task)
    assert str(bad) in str(info.value)


def test_the_tasks_are_registered_for_inspect_by_entry_point():
    text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert '[project.entry-points.inspect_ai]\nprivasis_bench = "privasis_bench.interop.inspect_task"' in text
    installed = {ep.name: ep.value for ep in metadata.entry_points(group="inspect_ai")}
    if "privasis_bench" not in installed:
        pytest.skip("privasis-bench is not installed with its entry points (pip install .)")
    assert installed["privasis_bench"] == "privasis_bench.interop.inspect_task"
    from privasis_bench.interop import inspect_task

    for name in ("privasis_sample", "privasis_vanilla", "privasis_hard", "privasis"):
        assert callable(getattr(inspect_task, name))


def test_the_preset_is_a_task_argument_of_its_own():
    """Issue 42: `-T preset=paper` sets every setting of --preset paper; a contradicting argument is refused."""
    from privasis_bench.interop.inspect_task import privasis_inspect_task

    task = privasis_inspect_task("privasis_sample", limit=1, preset="paper")
    assert task.config.max_tokens == 9024 and task.config.temperature == 0.0
    with pytest.raises(ValueError, match="max_tokens=32 contradicts preset=paper"):
        privasis_inspect_task("privasis_sample", limit=1, max_tokens=32, preset="paper")
    with pytest.raises(ValueError, match="unknown scoring preset"):
        privasis_inspect_task("privasis_sample", limit=1, preset="papers")


def test_under_the_preset_an_empty_answer_is_judged_as_the_official_client_reads_it(tmp_path):
    from fake_openai_server import ANSWER_CUE, OK, Action
    from inspect_ai import eval as inspect_eval

    from privasis_bench.interop.inspect_task import privasis_inspect_task

    first = load_records(load_task("privasis_sample")).scored[0]

    def script(prompt: str, n: int) -> Action:
        return Action(content="") if prompt.rstrip().endswith(ANSWER_CUE) and first.text[:40] in prompt else OK

    mp = pytest.MonkeyPatch()
    with FakeOpenAIServer(script=script) as server:
        # a provider name of its own: inspect keeps one model per name, bound to the first server it saw
        mp.setenv("FAKEPRESET_BASE_URL", server.base_url)
        mp.setenv("FAKEPRESET_API_KEY", "sk-test-not-a-secret")
        scores = {}
        for preset in (None, "paper"):
            task = privasis_inspect_task("privasis_sample", limit=1, preset=preset)
            (log,) = inspect_eval(task, model="openai-api/fakepreset/model", log_dir=str(tmp_path / str(preset)), display="none")
            assert log.status == "success", log.error
            scores[preset] = log.samples[0].scores["privasis_judge"].metadata
    mp.undo()
    paper, harness = scores["paper"], scores[None]
    assert paper["output"] == harness["output"] == "" and paper["scoring_preset"] == "paper"
    assert all(t.get("guess") is not None for t in paper["verdict"]["targets"] if t["value"] is not None)  # asked
    assert all(k["via"] != "empty_output" for k in paper["verdict"]["keep"])
    assert all(k["via"] in ("empty_output", "null") for k in harness["verdict"]["keep"])  # the harness rule: not asked
