"""Prompt templates load without exactly one trailing newline (issue 35.3), and the shipped prompts did not change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from judge_fakes import TEMPLATES

from privasis_bench.data.loading import load_records
from privasis_bench.fsutil import read_template_text, strip_one_newline
from privasis_bench.protocol.judge_prompts import JudgePrompts
from privasis_bench.protocol.testee import build_sanitize_request, read_template
from privasis_bench.protocol.testee_prompt import describe_testee_prompt, with_testee_prompt
from privasis_bench.tasks.registry import load_task

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("text, expected", [
    ("prompt", "prompt"),
    ("prompt\n", "prompt"),
    ("prompt\r\n", "prompt"),
    ("prompt\n\n", "prompt\n"),  # a template that ends with a blank line on purpose keeps one newline
    ("prompt\r\n\r\n", "prompt\r\n"),
    ("prompt\n \n", "prompt\n "),
    ("", ""),
    ("\n", ""),
])
def test_strip_exactly_one_trailing_newline(text, expected):
    assert strip_one_newline(text) == expected


def _judge_dir(tmp_path: Path, ending: str) -> Path:
    for key, text in TEMPLATES.items():
        (tmp_path / f"{key}.txt").write_bytes((text + ending).encode())
    return tmp_path


@pytest.mark.parametrize("ending", ["", "\n", "\r\n"])
def test_judge_templates_saved_by_any_editor_give_the_same_prompts(tmp_path, ending):
    task = load_task("privasis_sample")
    prompts = JudgePrompts.load(task.judge.templates, _judge_dir(tmp_path, ending))
    assert prompts.texts == TEMPLATES  # byte-identical to the strings, whatever the file's last line ending
    assert prompts.hashes == JudgePrompts(texts=dict(TEMPLATES), sources={}).hashes


def test_testee_template_and_its_recorded_hash_ignore_one_trailing_newline(tmp_path):
    task = load_task("privasis_sample")
    record = load_records(task, limit=1).records[0]
    requests, infos = [], []
    for name, ending in (("a.txt", ""), ("b.txt", "\n")):
        (tmp_path / name).write_text("Do: {instruction}\n{text}\n**Sanitized Text:**" + ending, encoding="utf-8")
        variant = with_testee_prompt(task, tmp_path / name)
        assert read_template(variant).endswith("**Sanitized Text:**")
        requests.append(build_sanitize_request(record, variant).messages[0][1])
        infos.append(describe_testee_prompt(variant))
    assert requests[0] == requests[1] and requests[0].endswith("**Sanitized Text:**")
    assert infos[0]["template_sha256"] == infos[1]["template_sha256"]
    # the task's config hash is taken over the text as loaded too
    a, b = (with_testee_prompt(task, tmp_path / n) for n in ("a.txt", "b.txt"))
    assert a.config_hash() != task.config_hash()
    (tmp_path / "b.txt").rename(tmp_path / "a2.txt")  # same base name matters for the hash: compare like with like
    (tmp_path / "a.txt").write_text("Do: {instruction}\n{text}\n**Sanitized Text:**\n", encoding="utf-8")
    assert with_testee_prompt(task, tmp_path / "a.txt").config_hash() == a.config_hash()


def test_recipe_prompts_load_the_same_way(tmp_path):
    from privasis_bench.recipes.config import load_recipe

    recipe = load_recipe("decomp")
    for name, path in recipe.prompts.items():
        assert recipe.prompt(name) == read_template_text(path)
        assert not recipe.prompt(name).endswith("\n\n")


def _shipped_results() -> list[dict]:
    found = sorted((REPO / "submissions").glob("*/privasis_sample/results.json"))
    return [json.loads(p.read_text(encoding="utf-8")) for p in found]


@pytest.mark.skipif(not (REPO / "submissions").is_dir(), reason="not a source checkout")
def test_the_shipped_prompts_and_hashes_are_unchanged_by_the_rule():
    """The shipped templates end with a blank line, so the rule leaves every prompt and recorded hash as it was."""
    task = load_task("privasis_sample")
    results = _shipped_results()
    assert results
    hashes = JudgePrompts.load(task.judge.templates).hashes
    for res in results:
        if res["judge"]["mode"] == "model":
            assert res["judge"]["prompt_hashes"] == hashes
        assert res["task"]["config_hash"] == task.config_hash()
        assert res["testee_prompt"]["template_sha256"] == describe_testee_prompt(task)["template_sha256"]
        assert res["testee_prompt"]["shipped"] is True
    for path in task.template_files():
        assert Path(path).read_text(encoding="utf-8").endswith("\n\n"), path


def test_templates_saved_with_windows_line_ends_send_the_prompts_of_their_lf_copies(tmp_path, caplog):
    """Issue 42: a template saved with CRLF throughout used to send other prompts; now it is read as LF, once said."""
    from privasis_bench.protocol.judge import Judge, JudgeSettings

    task = load_task("privasis_sample")
    record = load_records(task, limit=1).records[0]
    lf_dir, crlf_dir = tmp_path / "lf", tmp_path / "crlf"
    lf_dir.mkdir(), crlf_dir.mkdir()
    for key in ("guess_target", "guess_abstract", "guess_keep", "compare", "inclusion"):
        shipped = Path(getattr(task.judge.templates, key)).read_text(encoding="utf-8")
        assert "\n" in shipped.rstrip("\n")  # several lines: every line end differs in the CRLF copy
        (lf_dir / f"{key}.txt").write_bytes(shipped.encode())
        (crlf_dir / f"{key}.txt").write_bytes(shipped.replace("\n", "\r\n").encode())
    with caplog.at_level("WARNING"):
        lf, crlf = (JudgePrompts.load(task.judge.templates, d) for d in (lf_dir, crlf_dir))
        JudgePrompts.load(task.judge.templates, crlf_dir)  # read again: no second notice
    assert crlf.texts == lf.texts and crlf.hashes == lf.hashes
    notices = [r.getMessage() for r in caplog.records if "CRLF" in r.getMessage()]
    assert len(notices) == 5 and all(str(crlf_dir) in n and "\n" not in n for n in notices)
    # every judge prompt the two builds is byte-identical
    judges = [Judge(None, p, JudgeSettings()) for p in (lf, crlf)]
    attr, keep = record.targets[0], record.keep[0]
    for build in (lambda j: j.target_guess_request("some text", attr), lambda j: j.keep_guess_request("text", keep),
                  lambda j: j.compare_request(attr, "a", "b"), lambda j: j.inclusion_request("text", "g", keep)):
        assert build(judges[0]).messages == build(judges[1]).messages
    # and the testee prompt and its recorded hash likewise
    shipped = Path(task.prompt.template).read_text(encoding="utf-8")
    (tmp_path / "t_lf.txt").write_bytes(shipped.encode())
    (tmp_path / "t_crlf.txt").write_bytes(shipped.replace("\n", "\r\n").encode())
    variants = [with_testee_prompt(task, tmp_path / n) for n in ("t_lf.txt", "t_crlf.txt")]
    assert build_sanitize_request(record, variants[0]).messages == build_sanitize_request(record, variants[1]).messages
    assert describe_testee_prompt(variants[0])["template_sha256"] == describe_testee_prompt(variants[1])["template_sha256"]
