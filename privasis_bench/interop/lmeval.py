"""Interop with lm-evaluation-harness: the shipped lm-eval task YAMLs and the code they call.

The YAMLs live in ``tasks/lm_eval/`` (``privasis_bench/_tasks/lm_eval/`` in a wheel). They load their
documents through lm-eval's ``custom_dataset`` hook, which calls :func:`load_lmeval_dataset` here, so
data paths are resolved by privasis-bench's own task loader (any working directory works) and each
document carries the exact user message ``privasis-bench sanitize`` would send.

lm-eval only generates; ``privasis-bench evaluate --predictions samples_<task>_<ts>.jsonl`` judges.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privasis_bench.adapters.base import ChatRequest
from privasis_bench.errors import PrivasisError

#: The split key of the DatasetDict handed to lm-eval (``test_split`` in the YAMLs).
LMEVAL_SPLIT = "test"


def lmeval_tasks_dir() -> Path:
    """The directory to pass to ``lm_eval --include_path`` (works in a wheel and a source checkout)."""
    from privasis_bench.tasks.registry import builtin_tasks_dir

    path = builtin_tasks_dir() / "lm_eval"
    if not (path / "utils.py").is_file():
        raise PrivasisError(f"the lm-eval task files are missing from this installation (looked in {path})")
    return path


def shipped_names() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The lm-eval task names, and the group and tag names, the shipped YAMLs declare (read from the files, so the
    list follows whatever tasks are shipped)."""
    import yaml

    class _Loader(yaml.SafeLoader):  # lm-eval's ``!function`` tags are not ours to build
        pass

    _Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    tasks: list[str] = []
    groups: list[str] = []
    for path in sorted(lmeval_tasks_dir().glob("*.yaml")):
        config = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader) or {}
        if "group" in config:
            groups.append(str(config["group"]))
        elif isinstance(config.get("task"), str):
            tasks.append(config["task"])
        tags = config.get("tag") or []
        groups += [t for t in ([tags] if isinstance(tags, str) else tags) if t not in groups]
    return tuple(tasks), tuple(groups)


def example_command(
    tasks: str = "privasis_sample",
    base_url: str = "http://127.0.0.1:8080/v1",
    model: str = "MODEL",
    output_path: str = "runs/lmeval_out",
) -> str:
    """A complete ``lm_eval`` command line for the shipped tasks against an OpenAI-compatible server."""
    return (
        f"lm_eval --include_path {lmeval_tasks_dir()} --tasks {tasks} "
        f"--model local-chat-completions "
        f"--model_args model={model},base_url={base_url.rstrip('/')}/chat/completions,num_concurrent=1,max_retries=3 "
        f"--apply_chat_template --log_samples --output_path {output_path}"
    )


@dataclass(frozen=True)
class DocOptions:
    """Settings read from a task's lm-eval ``metadata`` (and ``lm_eval --metadata '{...}'``)."""

    privasis_task: str
    instruction: str | None = None  # base | smoothed; default: the task's
    data_files: tuple[str, ...] | None = None  # local files instead of the task's configured source
    skip_invalid: bool = False
    include_excluded: bool = False  # also generate for records that are never scored

    @classmethod
    def from_kwargs(cls, kwargs: dict[str, Any]) -> "DocOptions":
        """Pick the honoured keys; everything else (lm-eval's own metadata, model args) is ignored."""
        task = kwargs.get("privasis_task")
        if not task or not isinstance(task, str):
            raise PrivasisError("lm-eval task metadata lacks `privasis_task` (the privasis-bench task to load)")
        files = kwargs.get("data_files")
        if isinstance(files, str):
            files = [f for f in files.split(",") if f]
        return cls(
            privasis_task=task,
            instruction=kwargs.get("instruction") or None,
            data_files=tuple(str(f) for f in files) if files else None,
            skip_invalid=_as_bool(kwargs.get("skip_invalid", False)),
            include_excluded=_as_bool(kwargs.get("include_excluded", False)),
        )


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def build_docs(options: DocOptions) -> list[dict[str, Any]]:
    """One lm-eval document per record: id, context fields and the exact sanitization prompt.

    Records that are never scored (no keep attribute) are left out unless ``include_excluded``.
    """
    from privasis_bench.data.loading import load_records, with_data_files
    from privasis_bench.protocol.testee import build_sanitize_request, read_template
    from privasis_bench.tasks.registry import load_task

    task = load_task(options.privasis_task)
    if options.data_files:
        task = with_data_files(task, list(options.data_files))
    loaded = load_records(task, skip_invalid=options.skip_invalid)
    variant = options.instruction or task.prompt.instruction
    template = read_template(task)
    docs: list[dict[str, Any]] = []
    for record in loaded.records:
        if record.excluded and not options.include_excluded:
            continue
        request = build_sanitize_request(record, task, instruction=variant, template=template)
        docs.append(
            {
                "id": record.id,
                "record_type": record.record_type,
                "category": record.breakdown_category,
                "privasis_task": task.task,
                "instruction_variant": variant,
                "prompt": request.messages[0][1],
                "prompt_hash": request.prompt_hash(),
            }
        )
    if not docs:
        raise PrivasisError(f"task {task.task}: no records to generate for (source {loaded.source})")
    return docs


def load_lmeval_dataset(**kwargs: Any):
    """The ``custom_dataset`` hook: a ``datasets.DatasetDict`` with one ``test`` split of documents."""
    import datasets

    docs = build_docs(DocOptions.from_kwargs(kwargs))
    return datasets.DatasetDict({LMEVAL_SPLIT: datasets.Dataset.from_list(docs)})


def nonempty_metric(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """lm-eval's placeholder metric: 1.0 when the raw output has any non-whitespace text."""
    text = results[0] if results else ""
    return {"nonempty": 1.0 if isinstance(text, str) and text.strip() else 0.0}


def sample_context(sample: dict[str, Any]) -> str | None:
    """The context string lm-eval logged for one ``--log_samples`` row (``arguments.gen_args_0.arg_0``).

    lm-eval serializes a chat context (its JsonChatStr tuple) as a one-element list; it is unwrapped.
    """
    args = sample.get("arguments")
    context: Any = None
    if isinstance(args, dict):
        first = args.get("gen_args_0")
        if isinstance(first, dict):
            context = first.get("arg_0")
    elif isinstance(args, list) and args and isinstance(args[0], (list, tuple)) and args[0]:
        context = args[0][0]
    if isinstance(context, list) and len(context) == 1 and isinstance(context[0], str):
        context = context[0]
    return context if isinstance(context, str) else None


def sample_messages(sample: dict[str, Any]) -> list[dict[str, str]] | None:
    """The chat messages lm-eval sent for one samples row.

    A chat-templated context is a JSON list of messages; a plain-text context (a completions model
    without ``--apply_chat_template``) is returned as one user message. None if nothing was logged.
    """
    context = sample_context(sample)
    if context is None:
        return None
    try:
        messages = json.loads(context)
    except ValueError:
        messages = None
    if isinstance(messages, list) and messages and all(isinstance(m, dict) and "role" in m and "content" in m for m in messages):
        return [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]
    return [{"role": "user", "content": context}]


def messages_prompt_hash(messages: list[dict[str, str]]) -> str:
    """The privasis-bench prompt hash of a message list (equal to ours iff the prompt is identical)."""
    request = ChatRequest(messages=tuple((m["role"], m["content"]) for m in messages), max_tokens=1)
    return request.prompt_hash()
