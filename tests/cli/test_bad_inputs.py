"""Every malformed input ends in exactly one error line, a non-zero exit code and no traceback (issues 8 and 16.7).

The CLI's ``main()`` runs in-process with ``sys.argv`` set, so each case costs milliseconds; a case whose
error escaped as an exception would fail the test instead of printing a traceback.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from fake_openai_server import make_row

from privasis_bench.cli import main

RUN = ["run", "-m", "identity", "--judge", "none", "-t", "privasis_sample", "--no-progress"]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("bad")
    out = {
        "latin1": d / "latin1.jsonl", "binary": d / "binary.jsonl", "empty": d / "empty.jsonl",
        "a_file": d / "a_file", "bin_yaml": d / "bin.yaml", "corrupt_cache": d / "cache" / "responses.sqlite",
        "no_keep": d / "no_keep.jsonl", "prompts_file": d / "prompts.txt", "bad_json": d / "bad.jsonl",
    }
    out["latin1"].write_bytes(json.dumps(make_row(1)).encode("utf-8")[:-2] + b' \xe9"}\n')
    out["binary"].write_bytes(bytes(range(256)) * 4)
    out["empty"].write_text("")
    out["a_file"].write_text("I am a file\n")
    out["bin_yaml"].write_bytes(b"task: x\n\x00\x01\x02\xff")
    out["corrupt_cache"].parent.mkdir()
    out["corrupt_cache"].write_bytes(b"this is not an sqlite database" * 200)
    row = make_row(2)
    row["attributes_to_keep"] = {}
    out["no_keep"].write_text(json.dumps(row) + "\n")
    out["prompts_file"].write_text("not a directory")
    out["bad_json"].write_text('{"id": "x",\n')
    return out


# (case id, argv builder, expected exit code, a fragment the single line must contain)
CASES = [
    # 8.1: option values
    ("limit 0", lambda f, o: RUN + ["-o", o, "--limit", "0"], 2, "--limit"),
    ("limit -1", lambda f, o: RUN + ["-o", o, "--limit", "-1"], 2, "--limit"),
    ("limit abc", lambda f, o: RUN + ["-o", o, "--limit", "abc"], 2, "--limit"),
    ("concurrency 0", lambda f, o: RUN + ["-o", o, "--concurrency", "0"], 2, "--concurrency"),
    ("sanitize concurrency 0", lambda f, o: ["sanitize", "-m", "identity", "-t", "privasis_sample", "-o", o,
                                            "--concurrency", "0"], 2, "--concurrency"),
    ("unknown option", lambda f, o: RUN + ["-o", o, "--bogus"], 2, "--bogus"),
    ("missing model", lambda f, o: ["run", "-t", "privasis_sample", "-o", o], 2, "--model"),
    ("unknown command", lambda f, o: ["nosuchcommand"], 2, "nosuchcommand"),
    ("bootstrap -5", lambda f, o: RUN + ["-o", o, "--bootstrap-samples", "-5"], 2, "--bootstrap-samples"),
    ("rpm 0", lambda f, o: RUN + ["-o", o, "--rpm", "0"], 2, "--rpm"),
    ("rpm 0.001 (one request per 1,000 minutes)", lambda f, o: RUN + ["-o", o, "--rpm", "0.001"], 2, "--rpm"),
    ("bad parse mode", lambda f, o: RUN + ["-o", o, "--parse-mode", "fuzzy"], 2, "--parse-mode"),
    ("bad instruction", lambda f, o: RUN + ["-o", o, "--instruction", "casual"], 2, "--instruction"),
    # 8.2: data files that are not UTF-8 text
    ("latin-1 data", lambda f, o: RUN + ["-o", o, "--data-files", str(f["latin1"])], 2, "offset"),
    ("binary data", lambda f, o: RUN + ["-o", o, "--data-files", str(f["binary"])], 2, "binary.jsonl"),
    ("invalid json data", lambda f, o: RUN + ["-o", o, "--data-files", str(f["bad_json"])], 2, "bad.jsonl"),
    ("missing data file", lambda f, o: RUN + ["-o", o, "--data-files", "/nonexistent/x.jsonl"], 2, "x.jsonl"),
    # 8.3: output and cache directories
    ("-o is a file", lambda f, o: RUN + ["-o", str(f["a_file"])], 2, "--output"),
    ("-o under a file", lambda f, o: RUN + ["-o", str(f["a_file"] / "sub")], 2, "--output"),
    ("sanitize -o under a file", lambda f, o: ["sanitize", "-m", "identity", "-t", "privasis_sample",
                                              "-o", str(f["a_file"] / "sub")], 2, "--output"),
    ("cache dir is a file", lambda f, o: RUN + ["-o", o, "--cache-dir", str(f["a_file"])], 2, "--cache-dir"),
    # 8.4: nothing to evaluate
    ("empty data file", lambda f, o: RUN + ["-o", o, "--data-files", str(f["empty"])], 2, "no records"),
    ("no scored record", lambda f, o: RUN + ["-o", o, "--data-files", str(f["no_keep"])], 2, "no keep attribute"),
    # 16.7: corrupted cache, binary task YAML or predictions, bad model argument values
    ("corrupt cache", lambda f, o: RUN + ["-o", o, "--cache-dir", str(f["corrupt_cache"].parent)], 2, "--no-cache"),
    ("binary task yaml", lambda f, o: ["run", "-m", "identity", "--judge", "none", "-t", str(f["bin_yaml"]), "-o", o],
     2, "bin.yaml"),
    ("binary predictions", lambda f, o: ["evaluate", "-p", str(f["binary"]), "-t", "privasis_sample", "--judge", "none",
                                         "-o", o], 2, "binary.jsonl"),
    ("timeout=abc", lambda f, o: ["run", "-m", "openai:x", "--model-args", "base_url=http://127.0.0.1:9/v1,timeout=abc",
                                  "--judge", "none", "-t", "privasis_sample", "-o", o], 2, "timeout"),
    # other inputs of the same kind
    ("unknown task", lambda f, o: RUN[:-3] + ["-t", "privasis_sampel", "-o", o], 2, "privasis_sampel"),
    ("unknown provider", lambda f, o: ["run", "-m", "nosuchprovider:m", "--judge", "none", "-t", "privasis_sample",
                                       "-o", o], 2, "nosuchprovider"),
    ("judge prompts not a dir", lambda f, o: RUN + ["-o", o, "--judge-prompts", str(f["prompts_file"])], 2,
     "--judge-prompts"),
    ("missing predictions", lambda f, o: ["evaluate", "-p", "/nonexistent/preds.jsonl", "-t", "privasis_sample",
                                          "--judge", "none", "-o", o], 2, "preds.jsonl"),
    ("rescore not a run", lambda f, o: ["rescore", str(f["a_file"].parent / "nothing-here")], 2, "nothing-here"),
]


def _write(directory: str, name: str, text: str) -> str:
    """Write ``text`` to ``name`` beside the output path ``directory`` (a fresh tmp dir per case); returns the path."""
    path = Path(directory).parent / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def _row_line(**change) -> str:
    row = make_row(3)
    row.update(change)
    return json.dumps(row)


def _task(o: str, body: str) -> str:
    return _write(o, "t.yaml", "task: my_task\ninclude: privasis_sample.yaml\n" + body)


def _recipe(o: str, kind: str, body: str) -> str:
    return _write(o, "r.yaml", f"recipe: mine\ninclude: {kind}.yaml\n" + body)


def _corpus_input(o: str, line: str) -> str:
    return _write(o, "in.jsonl", line + "\n")


def _empty_parquet(o: str) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(o).parent / "empty.parquet"
    pq.write_table(pa.table({"id": pa.array([], pa.string()), "original_record": pa.array([], pa.string())}), path)
    return str(path)


def _loop(o: str) -> str:
    link = Path(o).parent / "loop.jsonl"
    link.symlink_to(link)
    return str(link)


def _foreign_cache(o: str) -> str:
    cache = Path(o).parent / "foreign-cache"
    cache.mkdir()
    con = sqlite3.connect(cache / "responses.sqlite")
    con.execute("CREATE TABLE responses (id INTEGER PRIMARY KEY, payload BLOB)")
    con.commit()
    con.close()
    return str(cache)


def _resume_over(o: str, what: str) -> str:
    target = Path(o) / "privasis_sample" / "sanitized.jsonl"
    target.parent.mkdir(parents=True)
    if what == "dir":
        target.mkdir()
    else:
        target.write_bytes(b"\x00\xff garbage \xfe\n" * 10)
    return o


def _deep(depth: int = 100_000) -> str:
    return '{"id": "deep", "x": ' + "[" * depth + "]" * depth + "}"


OPENAI = ["run", "-m", "openai:x", "--judge", "none", "-t", "privasis_sample", "--no-progress"]
CORPUS = ["build-corpus", "-r", "corpus", "-m", "identity", "--no-progress"]

# issue 34 point 1: the families that ended in 'error: unexpected X' or a silent success, one case each
CASES += [
    ("temperature inf", lambda f, o: RUN + ["-o", o, "--temperature", "inf"], 2, "--temperature"),
    ("temperature nan", lambda f, o: RUN + ["-o", o, "--temperature", "nan"], 2, "--temperature"),
    ("task yaml .nan temperature", lambda f, o: RUN[:-3] + ["-t", _task(o, "generation: {temperature: .nan}\n"), "-o", o],
     2, "generation.temperature"),
    ("task yaml answer_cue ''", lambda f, o: RUN[:-3] + ["-t", _task(o, "prompt: {answer_cue: ''}\n"), "-o", o], 2,
     "prompt.answer_cue"),
    ("task yaml version abc", lambda f, o: RUN[:-3] + ["-t", _task(o, "version: abc\n"), "-o", o], 2, "version"),
    ("task yaml duplicate key", lambda f, o: RUN[:-3] + ["-t", _task(o, "version: 1\nversion: 2\n"), "-o", o], 2,
     "'version' is given twice"),
    ("base_url=notaurl", lambda f, o: OPENAI + ["-o", o, "--model-args", "base_url=notaurl"], 2, "base_url"),
    ("anthropic base_url=notaurl", lambda f, o: ["run", "-m", "anthropic:claude-x", "--model-args", "base_url=notaurl",
                                                 "--judge", "none", "-t", "privasis_sample", "-o", o], 2, "base_url"),
    ("lmeval base_url=notaurl", lambda f, o: ["run", "-m", "lmeval:local-chat-completions", "--model-args",
                                              "model=x,base_url=notaurl", "--judge", "none", "-t", "privasis_sample", "-o", o],
     2, "base_url"),
    ("reasoning=maybe", lambda f, o: OPENAI + ["-o", o, "--model-args", "base_url=http://127.0.0.1:9/v1,reasoning=maybe"],
     2, "reasoning"),
    ("model label like a key", lambda f, o: ["evaluate", "-p", "/nonexistent/p.jsonl", "-t", "privasis_sample", "--judge",
                                              "none", "-o", o, "--model-label", "sk-proj-abcdef0123456789"], 2, "--model-label"),
    ("model label an absolute path", lambda f, o: ["evaluate", "-p", "/nonexistent/p.jsonl", "-t", "privasis_sample",
                                                    "--judge", "none", "-o", o, "--model-label", "/home/me/m.gguf"], 2,
     "--model-label"),
    ("data NaN", lambda f, o: RUN + ["-o", o, "--data-files", _write(o, "nan.jsonl", _row_line(id=3)[:-1] + ', "n": NaN}')],
     2, "NaN is not valid JSON"),
    ("data Infinity", lambda f, o: RUN + ["-o", o, "--data-files", _write(o, "inf.jsonl", _row_line()[:-1] + ', "n": -Infinity}')],
     2, "Infinity is not valid JSON"),
    ("data 5000-digit id", lambda f, o: RUN + ["-o", o, "--data-files", _write(o, "big.jsonl", _row_line(id=0).replace(
        '"id": 0', '"id": ' + "9" * 5000))], 2, "5000 digits"),
    ("data deep nesting", lambda f, o: RUN + ["-o", o, "--data-files", _write(o, "deep.jsonl", _deep())], 2, "nested too deeply"),
    ("predictions lone surrogate", lambda f, o: ["evaluate", "-p", _write(o, "p.jsonl", '{"id": "x", "model_sanitized_text": '
                                                 '"a\\ud800b"}'), "-t", "privasis_sample", "--judge", "none", "-o", o],
     2, "lone surrogate"),
    ("predictions NaN", lambda f, o: ["evaluate", "-p", _write(o, "p.jsonl", '{"id": "x", "model_sanitized_text": NaN}'),
                                      "-t", "privasis_sample", "--judge", "none", "-o", o], 2, "p.jsonl:1"),
    ("corpus input lone surrogate", lambda f, o: CORPUS + ["-o", o, "-i", _corpus_input(o, '{"id": "a\\udc00"}')], 2,
     "lone surrogate"),
    ("corpus input deep nesting", lambda f, o: CORPUS + ["-o", o, "-i", _corpus_input(o, _deep())], 2, "in.jsonl:1"),
    ("corpus input big int", lambda f, o: CORPUS + ["-o", o, "-i", _corpus_input(o, '{"id": ' + "7" * 5000 + "}")], 2,
     "in.jsonl:1"),
    ("recipe keep_count [3, 1]", lambda f, o: CORPUS[:2] + [_recipe(o, "corpus", "corpus: {keep_count: [3, 1]}\n")]
     + CORPUS[3:] + ["-o", o, "-i", _corpus_input(o, '{"id": "a"}')], 2, "keep_count"),
    ("recipe groups_range [8, 3]", lambda f, o: ["generate", "-r", _recipe(o, "synthesis", "synthesis: {groups_range: [8, 3]}\n"),
                                                 "-m", "identity", "-n", "1", "-o", o], 2, "groups_range"),
    ("recipe .nan temperature", lambda f, o: ["generate", "-r", _recipe(o, "synthesis", "generation: {draft: {temperature: .nan}}\n"),
                                              "-m", "identity", "-n", "1", "-o", o], 2, "temperature"),
    ("recipe duplicate key", lambda f, o: ["generate", "-r", _recipe(o, "synthesis", "seed: 1\nseed: 2\n"), "-m", "identity",
                                           "-n", "1", "-o", o], 2, "given twice"),
    ("0-row parquet", lambda f, o: RUN + ["-o", o, "--data-files", _empty_parquet(o)], 2, "holds no rows"),
    ("symlink loop", lambda f, o: RUN + ["-o", o, "--data-files", _loop(o)], 2, "loop.jsonl"),
    ("foreign cache schema", lambda f, o: RUN + ["-o", o, "--cache-dir", _foreign_cache(o)], 2, "--cache-dir"),
    ("resume over a corrupt sanitized.jsonl", lambda f, o: RUN + ["-o", _resume_over(o, "bytes")], 2, "sanitized.jsonl"),
    ("resume over a directory", lambda f, o: RUN + ["-o", _resume_over(o, "dir")], 2, "is a directory"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_gives_one_line(case, files, tmp_path, monkeypatch, capsys):
    _, build, code, fragment = case
    monkeypatch.setenv("PRIVASIS_BENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "argv", ["privasis-bench", *build(files, str(tmp_path / "out"))])
    with pytest.raises(SystemExit) as exited:
        main()
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert exited.value.code == code, err
    assert len(lines) == 1, f"expected one error line, got:\n{err}"
    assert "Traceback" not in err and lines[0].startswith("error:")
    assert fragment in lines[0], lines[0]


def test_an_unexpected_exception_is_one_line_with_a_debug_hint(monkeypatch, capsys, tmp_path):
    import privasis_bench.cli.eval_cmds as eval_cmds

    def boom(*args, **kwargs):
        raise RuntimeError("simulated bug\nwith a second line")

    monkeypatch.setattr(eval_cmds, "resolve_tasks", boom)
    monkeypatch.setattr(sys, "argv", ["privasis-bench", *RUN, "-o", str(tmp_path / "o")])
    with pytest.raises(SystemExit) as exited:
        main()
    err = capsys.readouterr().err
    assert exited.value.code == 1 and len(err.strip().splitlines()) == 1
    assert "RuntimeError: simulated bug with a second line" in err and "--debug" in err
    # with --debug the traceback is shown (the exception propagates)
    monkeypatch.setattr(sys, "argv", ["privasis-bench", "--debug", *RUN, "-o", str(tmp_path / "o")])
    with pytest.raises(RuntimeError, match="simulated bug"):
        main()


def test_a_corrupt_cache_file_is_left_as_it_is(files, tmp_path, monkeypatch, capsys):
    cache = files["corrupt_cache"]
    before = cache.read_bytes()
    monkeypatch.setattr(sys, "argv", ["privasis-bench", *RUN, "-o", str(tmp_path / "o"), "--cache-dir", str(cache.parent)])
    with pytest.raises(SystemExit):
        main()
    assert cache.read_bytes() == before
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(cache).execute("SELECT 1 FROM sqlite_master").fetchall()


def test_a_full_disk_under_the_cache_stops_the_run_with_one_line(tmp_path, monkeypatch, capsys):
    """Issue 34: 'database or disk is full' while storing an answer (a real SQLite page limit stands in for the disk)."""
    pytest.importorskip("openai")
    from cli_main import run_main
    from fake_openai_server import FakeOpenAIServer, write_tiny_task

    from privasis_bench.engine.cache import ResponseCache

    real_init = ResponseCache.__init__

    def full_after_open(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        pages = self._connection().execute("PRAGMA page_count").fetchone()[0]
        self._connection().execute(f"PRAGMA max_page_count = {pages}")

    monkeypatch.setattr(ResponseCache, "__init__", full_after_open)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yaml = write_tiny_task(tmp_path / "task", n=2)
    with FakeOpenAIServer(reply=lambda prompt: "a long rewrite " * 5000) as server:  # more than a free page holds
        code, out, err = run_main(["run", "-m", "openai:fake", "--model-args", f"base_url={server.base_url}", "-t", str(yaml),
                                   "--judge", "none", "-o", str(tmp_path / "o"), "--cache-dir", str(tmp_path / "cache"),
                                   "--no-progress"], monkeypatch, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in out + err, err
    assert "responses.sqlite: cannot store an answer (database or disk is full)" in err and "--no-cache" in err
