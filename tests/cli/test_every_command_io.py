"""Issue 23 point 1: every command given an unwritable output path, or a binary artifact, says so in one line (exit 2).

The output path's parent is a file (root ignores permission bits, so "read-only" is simulated that way); the binary
artifact is a samples.jsonl or results.json holding bytes that are not UTF-8.
"""

from __future__ import annotations

import shutil

import pytest
from cli_main import run_main


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A small finished run (identity, no judge) to copy and break."""
    base = tmp_path_factory.mktemp("io")
    mp = pytest.MonkeyPatch()
    try:
        from privasis_bench.cli import main  # noqa: F401  (run_main imports it)
        import sys
        mp.setattr(sys, "argv", ["privasis-bench", "run", "-m", "identity", "-t", "privasis_sample", "--judge", "none",
                                 "--limit", "3", "-o", str(base / "run"), "--no-progress", "--bootstrap-samples", "20",
                                 "--cache-dir", str(base / "cache")])
        try:
            main()
        except SystemExit as exc:
            assert not exc.code
    finally:
        mp.undo()
    return base / "run"


UNWRITABLE = {  # command -> argv with {run} for a finished run and {out} for the unwritable path
    "compare --json": ["compare", "{run}", "{run}", "--json", "{out}"],
    "agreement --json": ["agreement", "{run}", "{run}", "--json", "{out}"],
    "view -o": ["view", "{run}", "-o", "{out}"],
    "submit --submissions-dir": ["submit", "{run}", "--name", "a/b", "--submissions-dir", "{out}"],
    "leaderboard build -o": ["leaderboard", "build", "--submissions-dir", "{subs}", "-o", "{out}"],
    "run -o": ["run", "-m", "identity", "-t", "privasis_sample", "--judge", "none", "--limit", "2", "-o", "{out}",
               "--no-progress"],
    "sanitize -o": ["sanitize", "-m", "identity", "-t", "privasis_sample", "--limit", "2", "-o", "{out}", "--no-progress"],
    "evaluate -o": ["evaluate", "-p", "{run}/privasis_sample/sanitized.jsonl", "-t", "privasis_sample", "--judge", "none",
                    "--limit", "3", "-o", "{out}", "--no-progress"],
    "export-sft -o": ["export-sft", "-i", "privasis_sample", "-o", "{out}/train.jsonl"],
    "generate -o": ["generate", "-r", "synthesis", "-m", "identity", "-n", "1", "-o", "{out}", "--no-progress"],
}


@pytest.mark.parametrize("name", sorted(UNWRITABLE))
def test_an_unwritable_output_path_is_one_line(name, finished_run, tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    subs = tmp_path / "subs"
    if name.startswith("leaderboard"):
        shutil.copytree(_repo_submissions(), subs)
    argv = [a.format(run=finished_run, out=blocker / "out", subs=subs) for a in UNWRITABLE[name]]
    code, out, err = run_main(argv, monkeypatch, capsys)
    assert code == 2, (name, out, err)
    assert "Traceback" not in out + err and "unexpected" not in err and len(err.strip().splitlines()) == 1, err
    assert "a-file" in err
    assert blocker.read_text() == "not a directory"


ARTIFACT = {
    "rescore": ["rescore", "{run}"],
    "compare": ["compare", "{run}", "{good}"],
    "agreement": ["agreement", "{run}", "{good}"],
    "near-verbatim": ["near-verbatim", "{run}"],
    "linkage": ["linkage", "{run}"],
    "view": ["view", "{run}", "-o", "{tmp}/pages"],
    "submit": ["submit", "{run}", "--name", "a/b", "--submissions-dir", "{tmp}/subs"],
}


@pytest.mark.parametrize("artifact", ["samples.jsonl", "results.json"])
@pytest.mark.parametrize("name", sorted(ARTIFACT))
def test_a_binary_artifact_is_one_line(name, artifact, finished_run, tmp_path, monkeypatch, capsys):
    if name == "near-verbatim" and artifact == "results.json":
        pytest.skip("near-verbatim reads only samples.jsonl")
    broken = tmp_path / "broken"
    shutil.copytree(finished_run, broken)
    (broken / "privasis_sample" / artifact).write_bytes(b"\x00\x01\xff\xfe binary \xc3\x28")
    argv = [a.format(run=broken, good=finished_run, tmp=tmp_path) for a in ARTIFACT[name]]
    code, out, err = run_main(argv, monkeypatch, capsys)
    assert code == 2, (name, out, err)
    assert artifact in err and "Traceback" not in out + err and "unexpected" not in err, err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "subs").exists() and not (tmp_path / "pages").exists()


def _repo_submissions():
    from pathlib import Path

    return Path(__file__).resolve().parents[2] / "submissions"


def _sample_line() -> str:
    return (_repo_submissions().parent / "tasks" / "sample" / "privasis_sample.jsonl").read_text(encoding="utf-8").splitlines()[0]


@pytest.mark.parametrize("case", ["latin-1 corpus input", "binary recipe", "corrupt parquet", "lone surrogate id"])
def test_bad_input_files_are_named(case, tmp_path, monkeypatch, capsys):
    if case == "latin-1 corpus input":
        bad = tmp_path / "rows.jsonl"
        bad.write_bytes('{"id": "caf\u00e9"}\n'.encode("latin-1"))
        argv = ["build-corpus", "-r", "corpus", "-m", "identity", "-i", str(bad), "-o", str(tmp_path / "o")]
    elif case == "binary recipe":
        bad = tmp_path / "recipe.yaml"
        bad.write_bytes(b"\x00\xff\xfe")
        argv = ["generate", "-r", str(bad), "-m", "identity", "-n", "1", "-o", str(tmp_path / "o")]
    elif case == "corrupt parquet":
        bad = tmp_path / "rows.parquet"
        bad.write_bytes(b"PAR1 not really parquet")
        argv = ["run", "-m", "identity", "-t", "privasis_sample", "--judge", "none", "-o", str(tmp_path / "o"),
                "--data-files", str(bad), "--no-progress"]
    else:
        bad = tmp_path / "rows.jsonl"
        line = _sample_line()
        rid = line.split('"id": "', 1)[1].split('"', 1)[0]
        bad.write_text(line.replace(f'"id": "{rid}"', '"id": "\\ud800x"', 1) + "\n", encoding="utf-8")
        argv = ["run", "-m", "identity", "-t", "privasis_sample", "--judge", "none", "-o", str(tmp_path / "o"),
                "--data-files", str(bad), "--no-progress"]
    code, out, err = run_main(argv, monkeypatch, capsys)
    assert code == 2 and bad.name in err and "unexpected" not in err and "Traceback" not in out + err, err
    assert len(err.strip().splitlines()) == 1
