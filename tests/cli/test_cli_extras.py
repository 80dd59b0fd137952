"""End to end on privasis_sample, offline: ``linkage`` and ``near-verbatim`` on the identity and empty baselines.

Both write their own JSON beside the run and leave results.json and samples.jsonl untouched (rescore still matches).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from privasis_bench.cli import app, main
from privasis_bench.results.rescore import rescore_run

TASK = "privasis_sample"


def invoke(*args: str, expect: int = 0) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == expect, result.output
    return result.output


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("extras")
    out = {}
    for model in ("identity", "empty", "reference"):
        out[model] = base / model
        invoke("run", "-m", model, "--judge", "none", "-t", TASK, "-o", str(out[model]), "--no-cache", "--no-progress",
               "--bootstrap-samples", "100")
    return out


def _untouched(run: Path):
    task_dir = run / TASK
    before = {name: (task_dir / name).read_bytes() for name in ("results.json", "samples.jsonl")}
    yield
    assert before == {name: (task_dir / name).read_bytes() for name in before}
    assert all(r.matches for r in rescore_run(run))


def test_linkage_identity_links_everything_and_empty_nothing(runs):
    for model, expected in (("identity", 100.0), ("empty", 0.0)):
        guard = _untouched(runs[model])
        next(guard)
        output = invoke("linkage", str(runs[model]), "-k", "3", "--seed", "7", "--judge", "none",
                        "--bootstrap-samples", "100")
        assert "beyond Table 4" in output
        report = json.loads((runs[model] / TASK / "linkage.json").read_text())
        assert report["linkage_rate"] == pytest.approx(expected)
        assert report["attacked_records"] == 27 and report["k"] == 3 and report["seed"] == 7
        assert all(len(a["claims"]) <= 3 for a in report["attacks"])
        assert report["corpus_has_terms"] is (model == "identity")
        with pytest.raises(StopIteration):
            next(guard)


@pytest.mark.parametrize("extra, fragment", [(["--judge", "nosuchprovider:x"], "nosuchprovider"), (["-k", "0"], "-k")])
def test_linkage_bad_arguments_are_one_line(runs, monkeypatch, capsys, extra, fragment):
    monkeypatch.setattr(sys, "argv", ["privasis-bench", "linkage", str(runs["identity"]), *extra])
    with pytest.raises(SystemExit) as exited:
        main()
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 2 and len(err.splitlines()) == 1 and fragment in err


def test_agreement_of_a_run_with_a_missing_run_is_one_line(runs, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(sys, "argv", ["privasis-bench", "agreement", str(runs["identity"]), str(tmp_path / "nope")])
    with pytest.raises(SystemExit) as exited:
        main()
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 2 and len(err.splitlines()) == 1 and "nope" in err


def test_near_verbatim_on_baselines(runs):
    invoke("near-verbatim", str(runs["identity"]))
    ident = json.loads((runs["identity"] / TASK / "near_verbatim.json").read_text())
    assert ident["counts"]["near_verbatim"] == 0 and ident["counts"]["verbatim"] == ident["targets_with_value"] > 0
    invoke("near-verbatim", str(runs["empty"]))
    empty = json.loads((runs["empty"] / TASK / "near_verbatim.json").read_text())
    assert empty["counts"]["absent"] == empty["targets_with_value"] and empty["near_verbatim_rate"] == 0.0


def test_near_verbatim_finds_nothing_in_the_gold_sanitized_records(runs):
    """The dataset's own sanitized records drop or generalize every target: no false positive may fire there."""
    invoke("near-verbatim", str(runs["reference"]))
    report = json.loads((runs["reference"] / TASK / "near_verbatim.json").read_text())
    assert report["targets_with_value"] > 100 and report["counts"]["near_verbatim"] == 0, report["hits"]


def test_linkage_with_a_judge_rates_linked_records_through_the_engine(runs, monkeypatch, tmp_path):
    from judge_fakes import FakeJudgeAdapter

    import privasis_bench.pipeline.run as runner_mod
    from privasis_bench.adapters.base import ChatResult, Usage

    class SaysSimilar(FakeJudgeAdapter):
        async def agenerate(self, request):
            FakeJudgeAdapter.CALLS.append(request.messages[0][1])
            return ChatResult(text="2", usage=Usage(10, 1))

    real = runner_mod.build_adapter
    monkeypatch.setattr(runner_mod, "build_adapter",
                        lambda spec: SaysSimilar(spec.model) if spec.provider == "fakejudge" else real(spec))
    FakeJudgeAdapter.CALLS.clear()
    invoke("linkage", str(runs["identity"]), "--judge", "fakejudge:x", "--cache-dir", str(tmp_path / "cache"),
           "--bootstrap-samples", "50")
    report = json.loads((runs["identity"] / TASK / "linkage.json").read_text())
    support = report["target_support"]
    assert report["judge"] == "fakejudge:x" and support["rated_records"] == 27
    assert support["support"] == pytest.approx(50.0) and support["failed_calls"] == 0
    assert len(FakeJudgeAdapter.CALLS) == support["questions"] > 27
    FakeJudgeAdapter.CALLS.clear()
    invoke("linkage", str(runs["identity"]), "--judge", "fakejudge:x", "--cache-dir", str(tmp_path / "cache"),
           "--bootstrap-samples", "50")
    assert FakeJudgeAdapter.CALLS == []  # every answer came from the cache
