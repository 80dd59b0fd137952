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
#: The sanitize wording each scorer's shipped tasks use: (template inside tasks/, base task file holding its cue).
#: Span scorers (``tab``, ``tab_replacement``) share TAB's wording; a scorer not listed may use either.
SHIPPED_PROMPTS = {"privasis": (SHIPPED_TEMPLATE, BASE_TASK_FILE), "tab": ("prompts/tab/sanitize.txt", "_tab_base.yaml")}


def _sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@lru_cache(maxsize=None)
def _shipped_pair(template: str, base_file: str) -> tuple[str, str]:
    root = builtin_tasks_dir()
    text = read_template_text(root / template, "shipped sanitize template")
    base = yaml.safe_load(read_text(root / base_file, "shipped base task")) or {}
    return _sha256_text(text), str((base.get("prompt") or {}).get("answer_cue", ""))


def shipped_testee_prompts(scorer: str = "privasis") -> set[tuple[str, str]]:
    """The (template sha256, answer cue) pairs the shipped tasks of ``scorer`` are run with."""
    family = "privasis" if scorer == "privasis" else "tab" if scorer in ("tab", "tab_replacement") else None
    names = [family] if family is not None else list(SHIPPED_PROMPTS)
    return {_shipped_pair(*SHIPPED_PROMPTS[name]) for name in names}


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
    trailing newline stripped), the cue, and whether both are the wording the shipped tasks of the task's scorer use
    (TAB's for ``tab`` and ``tab_replacement``)."""
    text = read_template_text(task.prompt.template, "sanitization template")
    digest = _sha256_text(text)
    return {
        "template": file_ref(task.prompt.template),
        "template_sha256": digest,
        "answer_cue": task.prompt.answer_cue,
        "shipped": (digest, task.prompt.answer_cue) in shipped_testee_prompts(str(getattr(task, "scorer", "privasis"))),
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


def custom_testee_prompt(results: dict[str, Any]) -> bool:
    """Whether a results file's model under test was given other wording than its scorer's shipped tasks use.

    Computed from the recorded template sha256 and cue (the recorded ``shipped`` flag is a claim, and runs written
    before TAB's wording was recognised recorded ``false`` for it); a results file with no ``testee_prompt`` is not
    custom."""
    prompt = results.get("testee_prompt")
    if not isinstance(prompt, dict):
        return False
    scorer = results.get("scorer")
    name = str(scorer.get("name")) if isinstance(scorer, dict) and scorer.get("name") else "privasis"
    return (prompt.get("template_sha256"), prompt.get("answer_cue")) not in shipped_testee_prompts(name)
