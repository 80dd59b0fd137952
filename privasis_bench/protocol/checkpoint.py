"""The judge-stage checkpoint: finished record verdicts, appended as they are decided.

``<task dir>/judged.jsonl`` holds one line per judged record: the judge fingerprint (judge spec,
prompt hashes, parse mode, call settings), the record id, a hash of the judged output and the
verdict. A re-run reuses every line whose fingerprint and output hash still match, so only what is
missing is judged again. Records left unjudged (a judge call failed) are never written here.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Iterable

from privasis_bench.fsutil import AppendLog
from privasis_bench.protocol.verdicts import RecordVerdict

CHECKPOINT_NAME = "judged.jsonl"


def output_hash(output: str | None, failed: bool) -> str:
    """Identifies the exact output a verdict was reached on."""
    blob = json.dumps({"output": output, "failed": failed}, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def fingerprint(data: dict[str, Any]) -> str:
    """sha256 of the judge configuration (everything a verdict depends on besides the record)."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def read_checkpoint(path: str | os.PathLike[str], judge_fp: str) -> dict[tuple[str, str], RecordVerdict]:
    """Verdicts stored under ``judge_fp``, keyed by (record id, output hash); bad lines are skipped."""
    found: dict[tuple[str, str], RecordVerdict] = {}
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                try:
                    item = json.loads(line)
                    if item.get("judge") != judge_fp:
                        continue
                    verdict = RecordVerdict.from_dict(item["verdict"])
                    found[(item["record_id"], item["output_sha"])] = verdict
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut short by a crash: that record is judged again
    except FileNotFoundError:
        pass
    return found


def checkpoint_line(judge_fp: str, sha: str, verdict: RecordVerdict) -> str:
    """One checkpoint line: the judge fingerprint, the record, the hash of the judged output and the verdict."""
    return json.dumps({"judge": judge_fp, "record_id": verdict.record_id, "output_sha": sha, "verdict": verdict.to_dict()},
                      ensure_ascii=False, sort_keys=True) + "\n"


def append_checkpoint(path: str | os.PathLike[str], judge_fp: str, entries: Iterable[tuple[str, RecordVerdict]]) -> None:
    """Append (output hash, verdict) lines for finished records (unjudged ones are not kept), then fsync."""
    lines = "".join(checkpoint_line(judge_fp, sha, v) for sha, v in entries if v.status != "unjudged")
    if not lines:
        return
    log = AppendLog(path)
    try:
        log.write(lines)
    finally:
        log.close()
