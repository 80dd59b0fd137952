"""Which wording the model under test was given: the shipped sanitize template, or one the user plugged in.

The shipped template is the harness's own wording. A user who needs numbers comparable with a published table can
plug in another pipeline's wording with ``--prompt-template FILE`` (and ``--answer-cue TEXT``) on ``run``,
``sanitize`` and ``evaluate``; :func:`with_testee_prompt` applies that to a task, and :func:`describe_testee_prompt`
is what ``results.json`` (and so a submission) records about it: the template's portable name and sha256, the cue,
and whether both are the shipped ones.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from privasis_bench.errors import PrivasisError
from privasis_bench.fsutil import read_template_text, read_text
from privasis_bench.tasks.config import TaskConfig
from privasis_bench.tasks.paths import BUILTIN_PREFIX, builtin_tasks_dir, file_ref

SHIPPED_TEMPLATE = "prompts/sanitize.txt"  # inside the shipped tasks/ directory
BASE_TASK_FILE = "_privasis_base.yaml"


def _sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@lru_cache(maxsize=1)
def shipped_testee_prompt() -> tuple[str, str]:
    """(sha256 of the shipped sanitize template, the shipped answer cue)."""
    root = builtin_tasks_dir()
    template = read_template_text(root / SHIPPED_TEMPLATE, "shipped sanitize template")
    base = yaml.safe_load(read_text(root / BASE_TASK_FILE, "shipped base task")) or {}
    return _sha256_text(template), str((base.get("prompt") or {}).get("answer_cue", ""))


def with_testee_prompt(task: TaskConfig, template: str | Path | None = None, answer_cue: str | None = None) -> TaskConfig:
    """A copy of ``task`` whose model-under-test request uses ``template`` and/or ``answer_cue``.

    The template must be a readable UTF-8 file holding both ``{instruction}`` and ``{text}``; the cue must not be
    blank. Passing neither returns ``task`` unchanged.
    """
    if template is None and answer_cue is None:
        return task
    update: dict[str, Any] = {}
    if template is not None:
        path = Path(template)
        text = read_template_text(path, "--prompt-template")
        missing = [p for p in ("{instruction}", "{text}") if p not in text]
        if missing:
            raise PrivasisError(f"--prompt-template {path}: the template lacks the placeholder(s) {', '.join(missing)}")
        update["template"] = str(path.resolve())
    if answer_cue is not None:
        if not answer_cue.strip():
            raise PrivasisError("--answer-cue must not be blank (it is the heading the sanitized text follows)")
        update["answer_cue"] = answer_cue
    return task.model_copy(update={"prompt": task.prompt.model_copy(update=update)})


def describe_testee_prompt(task: TaskConfig) -> dict[str, Any]:
    """The ``testee_prompt`` section of results: template (portable name), the sha256 of its text as loaded (one
    trailing newline stripped), the cue, shipped or not."""
    text = read_template_text(task.prompt.template, "sanitization template")
    digest = _sha256_text(text)
    shipped_sha, shipped_cue = shipped_testee_prompt()
    return {
        "template": file_ref(task.prompt.template),
        "template_sha256": digest,
        "answer_cue": task.prompt.answer_cue,
        "shipped": digest == shipped_sha and task.prompt.answer_cue == shipped_cue,
    }


def expected_config_hash(task: TaskConfig, testee_prompt: dict[str, Any] | None) -> str:
    """The config hash a run of the shipped ``task`` has with the recorded ``testee_prompt`` (no file needed).

    A run with the shipped wording hashes as the task itself; a run with ``--prompt-template``/``--answer-cue``
    hashes with the recorded template name, contents hash and cue in place of the shipped ones.
    """
    if not isinstance(testee_prompt, dict) or testee_prompt.get("shipped", True) is True:
        return task.config_hash()
    ref, digest = testee_prompt.get("template"), str(testee_prompt.get("template_sha256") or "")
    if isinstance(ref, str) and ref.startswith(BUILTIN_PREFIX):
        path = str(builtin_tasks_dir() / ref[len(BUILTIN_PREFIX):])
    else:
        path = str((ref or {}).get("name") if isinstance(ref, dict) else ref)
    prompt = task.prompt.model_copy(update={"template": path, "answer_cue": str(testee_prompt.get("answer_cue"))})
    return task.model_copy(update={"prompt": prompt}).config_hash(known_contents={path: digest})
