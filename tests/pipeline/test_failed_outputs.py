"""Failed model outputs never look like a success: `run` exits 1 and results say complete: false (issue 16, point 1).

Driven through the console-script entry point against the local fake OpenAI server; a re-run with the server
healthy sends only the prompts that failed and exits 0.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from cli_main import run_main as main
from fake_openai_server import OK, Action, FakeOpenAIServer, write_tiny_task

from privasis_bench.data.loading import load_records
from privasis_bench.protocol.testee import build_sanitize_request
from privasis_bench.tasks.registry import load_task

pytest.importorskip("openai")


def run_args(base_url: str, yaml: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    return ["run", "--model", "openai:fake-model", "--model-args", f"base_url={base_url},timeout=5", "--tasks", str(yaml),
            "--judge", "none", "--output", str(out), "--cache-dir", str(cache), "--no-progress", "--bootstrap-samples", "20",
            "--max-attempts", "1", *extra]


def prompts_of(yaml: Path) -> list[str]:
    task = load_task(str(yaml))
    return [build_sanitize_request(r, task).messages[0][1] for r in load_records(task).scored]


def results(out: Path) -> dict:
    return json.loads((out / "tiny" / "results.json").read_text())


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there any more: connection refused


def test_endpoint_down_at_start_stops_at_once_naming_its_url(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=4)
    out, cache = tmp_path / "out", tmp_path / "cache"
    url = closed_port_url()
    # --max-attempts 6: a refused connection before the server ever answered is not backed off
    code, stdout, stderr = main([a if a != "1" else "6" for a in run_args(url, yaml, out, cache)], monkeypatch, capsys)
    errors = [ln for ln in (stdout + stderr).splitlines() if ln.startswith("error:")]
    assert code == 1 and len(errors) == 1, stdout + stderr
    assert f"connection refused at {url}" in errors[0] and "--wait-for-server" in errors[0]
    assert not (out / "tiny" / "results.json").exists() and "Traceback" not in stdout + stderr


def test_wait_for_server_waits_for_one_that_starts_late(tmp_path: Path, monkeypatch, capsys) -> None:
    import threading

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=2)
    out = tmp_path / "out"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    from privasis_bench.engine.reach import ServerReach

    refused = threading.Event()
    seen = ServerReach.refused

    def refused_and_told(self, message, note):  # type: ignore[no-untyped-def]
        refused.set()
        return seen(self, message, note)

    monkeypatch.setattr(ServerReach, "refused", refused_and_told)

    def start_late() -> None:
        assert refused.wait(60)  # the run has been refused once: the server starts now
        box["server"] = FakeOpenAIServer(port=port).__enter__()

    box: dict = {}
    threading.Thread(target=start_late, daemon=True).start()
    try:
        code, stdout, stderr = main(run_args(f"http://127.0.0.1:{port}/v1", yaml, out, tmp_path / "cache",
                                             "--wait-for-server", "60"), monkeypatch, capsys)
    finally:
        if "server" in box:
            box["server"].__exit__(None, None, None)
    assert code == 0, stdout + stderr
    assert "waiting up to 60 s for the server (--wait-for-server)" in stderr
    assert results(out)["complete"] is True


def test_failed_outputs_make_the_report_lead_with_incompleteness_and_show_no_metric(tmp_path: Path, monkeypatch,
                                                                                    capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=4)
    out = tmp_path / "out"
    with FakeOpenAIServer(script=lambda p, n: Action("500")) as server:
        code, stdout, stderr = main(run_args(server.base_url, yaml, out, tmp_path / "cache"), monkeypatch, capsys)
    assert code == 1, stdout + stderr
    res = results(out)
    assert res["complete"] is False and res["counts"]["failed_outputs"] == 4
    assert res["checks"]["failed_outputs"] == "incomplete"
    lead = stdout.index("INCOMPLETE: tiny: 4 failed model output(s) (so no metric is shown)")
    assert lead < stdout.index("privasis-bench results")  # said before any number
    table = stdout[stdout.index("privasis-bench results"):]
    assert "100.00" not in table and "INCOMPLETE" in table  # no headline number that looks valid
    assert "4 model output(s) failed" in stdout and "Traceback" not in stdout + stderr


def test_rerun_with_a_healthy_server_finishes_only_the_failed_records(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=4)
    prompts = prompts_of(yaml)
    out, cache = tmp_path / "out", tmp_path / "cache"
    down = {prompts[1], prompts[2]}
    with FakeOpenAIServer(script=lambda p, n: Action("500") if p in down else OK) as server:
        args = run_args(server.base_url, yaml, out, cache)
        code, stdout, _ = main(args, monkeypatch, capsys)
        assert code == 1, stdout
        first = results(out)
        assert first["complete"] is False and first["failed_output_records"] == ["r001", "r002"]

        down.clear()
        before = dict(server.received)
        code, stdout, _ = main(args, monkeypatch, capsys)
        assert code == 0, stdout
        again = {p: n - before.get(p, 0) for p, n in server.received.items() if n - before.get(p, 0)}
        assert again == {prompts[1]: 1, prompts[2]: 1}  # only the failed records were sent again
    second = results(out)
    assert second["complete"] is True and second["counts"]["failed_outputs"] == 0


def test_score_failed_as_empty_keeps_the_old_behaviour_and_says_so(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=3)
    out = tmp_path / "out"
    with FakeOpenAIServer(script=lambda p, n: Action("500")) as server:
        code, stdout, stderr = main(run_args(server.base_url, yaml, out, tmp_path / "cache", "--score-failed-as-empty"),
                                    monkeypatch, capsys)
    assert code == 0, stdout + stderr
    res = results(out)
    assert res["complete"] is True and res["counts"]["failed_outputs"] == 3
    assert res["checks"]["failed_outputs"] == "scored_as_empty"
    assert "scored as empty outputs" in stdout
