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
        import sys

        from privasis_bench.cli import main  # noqa: F401  (run_main imports it)
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
    if name.startswith("leaderboard"):  # one shipped entry: what is tested is the output path, not the board's size
        # (its Privasis task only: verifying its replacement task would load sentence-transformers, a slow-tier library)
        task = subs / "baselines__identity" / "privasis_sample"
        shutil.copytree(_repo_submissions() / "baselines__identity" / "privasis_sample", task)
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


def _read_only_under(root, monkeypatch):
    """Fault injection: every write under ``root`` fails as on a read-only mount (EROFS; mkdir of an existing
    directory still says it exists, and unlink is refused even for a missing file, as Linux does)."""
    import builtins
    import errno
    import io
    import os
    from pathlib import Path

    root = str(Path(root).resolve())

    def under(path) -> bool:
        try:
            return str(Path(os.fsdecode(path)).resolve()).startswith(root)
        except (TypeError, ValueError):
            return False

    def refuse(path):
        raise OSError(errno.EROFS, "Read-only file system", os.fsdecode(path))

    real_open, real_os_open, real_mkdir = builtins.open, os.open, os.mkdir
    real_replace, real_rename, real_unlink = os.replace, os.rename, os.unlink

    def fake_open(file, mode="r", *args, **kwargs):
        if isinstance(file, (str, bytes, os.PathLike)) and any(c in mode for c in "wax+") and under(file):
            refuse(file)
        return real_open(file, mode, *args, **kwargs)

    def fake_os_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and under(path):
            refuse(path)
        return real_os_open(path, flags, *args, **kwargs)

    def fake_mkdir(path, *args, **kwargs):
        if under(path):
            if os.path.exists(path):
                raise FileExistsError(errno.EEXIST, "File exists", os.fsdecode(path))
            refuse(path)
        return real_mkdir(path, *args, **kwargs)

    def guarded(real):
        def call(src, *args, **kwargs):
            dst = args[0] if args else src
            if under(src) or under(dst):
                refuse(src)
            return real(src, *args, **kwargs)
        return call

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(io, "open", fake_open)
    monkeypatch.setattr(os, "open", fake_os_open)
    monkeypatch.setattr(os, "mkdir", fake_mkdir)
    monkeypatch.setattr(os, "replace", guarded(real_replace))
    monkeypatch.setattr(os, "rename", guarded(real_rename))
    monkeypatch.setattr(os, "unlink", guarded(real_unlink))


READ_ONLY = {  # issue 34: command -> argv writing under {ro} (a read-only file system); {run} is a copy of a finished run
    "compare --json": ["compare", "{good}", "{good}", "--json", "{ro}/cmp.json"],
    "agreement --json": ["agreement", "{good}", "{good}", "--json", "{ro}/agr.json"],
    "export-sft -o": ["export-sft", "-i", "privasis_sample", "-o", "{ro}/train.jsonl", "--allow-eval-overlap"],
    "near-verbatim": ["near-verbatim", "{ro}"],
    "linkage": ["linkage", "{ro}"],
    "view": ["view", "{ro}"],
    "rescore --write": ["rescore", "{ro}", "--write"],
    "lm-eval-path --copy-to": ["lm-eval-path", "--copy-to", "{ro}/lmeval"],
}


@pytest.mark.parametrize("name", sorted(READ_ONLY))
def test_a_read_only_file_system_under_an_output_path_is_one_line(name, finished_run, tmp_path, monkeypatch, capsys):
    ro = tmp_path / "ro"
    if name in ("near-verbatim", "linkage", "view", "rescore --write"):
        shutil.copytree(finished_run, ro)  # the run itself lies on the read-only file system
    else:
        ro.mkdir()
    argv = [a.format(good=finished_run, ro=ro) for a in READ_ONLY[name]]
    _read_only_under(ro, monkeypatch)
    code, out, err = run_main(argv, monkeypatch, capsys)
    monkeypatch.undo()
    assert code == 2, (name, out, err)
    assert "unexpected" not in err and "Traceback" not in out + err and len(err.strip().splitlines()) == 1, err
    assert str(ro) in err and ("read-only" in err.lower()), err
