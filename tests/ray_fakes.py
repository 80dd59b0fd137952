"""Shared pieces of the Ray executor tests: a fake model that can follow the corpus recipe, sample inputs, the CLI.

The fake server (:mod:`fake_openai_server`) answers every prompt deterministically; :func:`recipe_reply` adds
answers the corpus recipe's steps can read (a ranking, spans, a strategy, a rewrite, a request), so build-corpus
produces real rows, and :func:`synthesis_reply` answers the synthesis recipe's steps (refusing to draft for some
first names, so that generate has failed rows to replace). A Ray driver runs in a subprocess (:func:`cli`, :func:`popen`), so
a test can kill workers meanwhile; the local executor's reference runs run in the test process (:func:`in_process`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from fake_openai_server import REPO_ROOT, reply_for
from ray_nodes import LOOPBACK_ENV

SAMPLE = REPO_ROOT / "tasks" / "sample" / "privasis_sample.jsonl"

#: results.json keys that legitimately differ between two executions of the same run, and why:
#: when it ran; what this invocation paid (the workers' calls are counted, but which answers come from the cache
#: can differ, and a killed worker's calls are lost: compared separately where it must match); how many judge
#: calls the local judge pass made and how many verdicts it found in the checkpoint (with Ray: none and all).
VOLATILE_RESULT_KEYS = ("timestamps", "usage", "usage_cumulative", "judge_calls")
VOLATILE_COUNTS = ("verdicts_reused_from_checkpoint",)


def recipe_reply(prompt: str) -> str:
    """An answer each corpus-recipe step can use; any other prompt gets the usual fake reply."""
    if prompt.startswith("Here is a document and a list of pieces"):
        items = prompt.split("Information:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        return "\n".join(f"{i + 1}. {item.lstrip('-* ').split(':')[0].strip()}" for i, item in enumerate(items))
    if prompt.startswith("Find every place in the passage"):
        value = re.search(r"Known value: (.*)", prompt)
        return f"- {value.group(1).strip()}" if value else "NONE"
    if prompt.startswith("The spans below were given"):
        return "NONE"
    if prompt.startswith("A document has to be made less revealing"):
        return "Generalize it to a vague description."
    if prompt.startswith("Edit the passage below"):
        head, chunk = prompt.split("Passage:\n", 1)
        chunk = chunk.rsplit("\n\nChange only", 1)[0]
        for span in re.findall(r"^- (.*)$", head, re.M):
            chunk = chunk.replace(span, "[redacted]")
        return chunk
    if prompt.startswith("Here is a list of instructions"):
        return "Please tidy up the private bits of my note."
    return reply_for(prompt)


FACTS = ("visited the Elm Street Clinic in Porto on 2021-03-04 for a check-up after the night shifts.",
         "The nurse measured a blood pressure of 128/84 and noted a mild pollen allergy in the chart.",
         "A follow-up was pencilled in for the second week of April, pending the lab results from Braga.",
         "Billing code 7731-B covered the consultation; the co-payment came to 18.40 EUR by card.",
         "The employer, Duarte Logistics, had requested a fitness-to-work note after the shift change.",
         "The receptionist asked for the vaccination card and the referral letter signed by Dr. Amaral.")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def refuses(first_name: str) -> bool:
    """Whether :func:`synthesis_reply` refuses to draft a record about ``first_name`` (about one name in four)."""
    return int(_digest(first_name), 16) % 4 == 0


def synthesis_reply(prompt: str) -> str:
    """An answer each synthesis-recipe step can use, varied by the prompt (so records and embeddings differ)."""
    tag = _digest(prompt)
    first = (re.search(r"First Name: (\S+)", prompt) or re.search(r"^(\S+)", "Lena"))[1]
    if prompt.startswith("Invent a complete"):
        return f"Last Name: Okafor-{tag[:4]}\nSex: female\nEthnicity: Black\nPhone Number: +1 555 {int(tag[:4], 16)}\nEmail: {tag}@example.org"
    if "Describe five different" in prompt or prompt.startswith("Document type:") or "kinds of" in prompt:
        return f"1. Clinic reminder e-mail number {tag[:3]}\n2. Insurance letter from Acme Mutual {tag[3:6]}\n3. A note {tag[6:]}"
    if "Write a realistic" in prompt:
        if refuses(first):
            return "I'm sorry, I can't help with that."
        last = (re.search(r"Last Name: (\S+)", prompt) or re.search(r"(.+)", "Okafor"))[1]
        return f"{first} {last} {FACTS[0]}\n" + "\n".join(FACTS[1:]) + f"\nReference {tag}, filed by {first}."
    if prompt.startswith("Here is a document:"):
        text = prompt.split("\n\n")[1]
        return f"{text}\nAddendum {tag}: the invoice was settled on 2021-05-{int(tag[:2], 16) % 28 + 1:02d}."
    if prompt.startswith("Two versions"):
        return "A" if int(tag, 16) % 2 else "B"
    if prompt.startswith("Read the document below"):
        return "clinic_name: Elm Street Clinic\ncity: Porto\nvisit_date: 2021-03-04\nbilling_code: 7731-B"
    if prompt.startswith("Here are attributes found"):
        names = re.findall(r"^- (.+)$", prompt, re.M)
        return (f"Identity: {', '.join(names[:2])}\nVisit details: {', '.join(names[2:] or names)}\n"
                f"Everything: {', '.join(names)}")  # the recipe asks for 3 to 8 groups
    return reply_for(prompt)


def corpus_inputs(path: Path, n: int = 6) -> Path:
    """Corpus input rows (record, attributes, grouped_attributes) made from the first ``n`` sample records."""
    rows = []
    for line in SAMPLE.read_text(encoding="utf-8").splitlines()[:n]:
        r = json.loads(line)
        groups = r["grouped_annotated_attributes"]
        attrs = {k: v for g in groups.values() for k, v in g.items()}
        rows.append({"id": r["id"], "record": r["original_record"], "record_type": r["record_type"], "attributes": attrs,
                     "grouped_attributes": groups})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m privasis_bench ARGS`` in a subprocess with this checkout on the path (a Ray driver keeps to
    127.0.0.1, where the test cluster's nodes listen: :data:`ray_nodes.LOOPBACK_ENV`)."""
    env = {**os.environ, **LOOPBACK_ENV, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "privasis_bench", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def in_process(monkeypatch, capsys, *args: str) -> subprocess.CompletedProcess:
    """The same command run in the test process (for the local executor's reference runs: no Ray driver to keep on
    127.0.0.1 and nothing to kill, so a subprocess would only add an interpreter start and its imports)."""
    from cli_main import run_main

    code, out, err = run_main(list(args), monkeypatch, capsys)
    return subprocess.CompletedProcess(["privasis-bench", *args], code, out, err)


def popen(*args: str) -> subprocess.Popen:
    """The same as :func:`cli`, started in the background."""
    env = {**os.environ, **LOOPBACK_ENV, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-m", "privasis_bench", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def run_args(base_url: str, out: Path, cache: Path, *extra: str, limit: int = 8) -> list[str]:
    """``run`` on the sample task with the fake server as model and judge."""
    return ["run", "-m", "openai:fake-model", "--model-args", f"base_url={base_url}", "--judge", "openai:fake-judge",
            "--judge-args", f"base_url={base_url}", "-t", "privasis_sample", "--limit", str(limit), "-o", str(out),
            "--cache-dir", str(cache), "--no-progress", "--max-off-label", "100000", "--bootstrap-samples", "200", *extra]


def comparable_results(task_dir: Path) -> dict:
    """results.json without the keys that differ between executions (see :data:`VOLATILE_RESULT_KEYS`)."""
    results = json.loads((task_dir / "results.json").read_text(encoding="utf-8"))
    for key in VOLATILE_RESULT_KEYS:
        results.pop(key, None)
    for key in VOLATILE_COUNTS:
        results["counts"].pop(key, None)
    return results
