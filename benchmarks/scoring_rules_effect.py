"""What each harness default that departs from the official evaluator changes (issue 35), measured with a real judge.

For each rule, the same outputs are judged twice by the sample task's judge (SmolLM2-135M through llama.cpp,
``llamacpp:smollm2``), once with the harness default and once with the official rule, and the script prints how
many judge decisions and which Table-4 headline numbers differ:

* ``--empty-outputs skip`` vs ``judge``: the ``empty`` baseline (every output empty);
* ``--inclusion-text after-think`` vs ``raw``: regex-scrubber outputs with a short reasoning block before
  ``</think>``, judged verbatim (``--predictions-postprocess none``);
* the answer cue: how many probe outputs post-process differently when the cue ``**Sanitized Text:**`` is cut
  as given (the old rule) instead of at its heading (the official rule; no model needed).

Usage: ``python benchmarks/scoring_rules_effect.py [--limit N]`` (needs the llamacpp extra). Writes only to a
temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TASK = "privasis_sample"
HEADLINE = ("sanitization_attribute", "sanitization_record", "retention_attribute", "retention_record",
            "full_successful_record")


def cli(*args: str, expect=(0, 1)) -> None:
    done = subprocess.run([sys.executable, "-m", "privasis_bench", *args], capture_output=True, text=True)
    if done.returncode not in expect:
        raise SystemExit(f"privasis-bench {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")


def decisions(task_dir: Path) -> dict[tuple[str, str, str], str]:
    found = {}
    for line in (task_dir / "samples.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row.get("status") != "judged":
            continue
        for t in row.get("targets") or []:
            found[(row["record_id"], "target", t["name"])] = t["tier"]
        for k in row.get("keep") or []:
            found[(row["record_id"], "keep", k["name"])] = f"{k['via']}:{k['retained']}"
    return found


def report(name: str, a: Path, b: Path) -> None:
    da, db = decisions(a / TASK), decisions(b / TASK)
    common = sorted(set(da) & set(db))
    differ = [key for key in common if da[key] != db[key]]
    ra, rb = (json.loads((p / TASK / "results.json").read_text()) for p in (a, b))
    print(f"\n{name}: {len(differ)} of {len(common)} attribute decisions differ "
          f"(records scored: {ra['metrics']['scored_records']})")
    for metric in HEADLINE:
        x, y = ra["metrics"]["headline"][metric], rb["metrics"]["headline"][metric]
        print(f"  {metric:28s} default {x:6.2f}  official rule {y:6.2f}  delta {y - x:+6.2f}")


def cue_probes() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "protocol"))
    from test_cue_official import EMPHASIZED, PROBES  # the probe set of the tests

    from privasis_bench.protocol.testee import postprocess_output

    def old_rule(raw: str) -> str:
        text = postprocess_output(raw, "\x00never")
        text = re.sub(r"\*{0,2}\s*Sanitized Text:\s*\*{0,2}\s*\Z", "", text).rstrip()
        return text.rsplit(EMPHASIZED, 1)[1].strip() if EMPHASIZED in text else text.strip()

    differ = sum(old_rule(p) != postprocess_output(p, EMPHASIZED) for p in PROBES)
    print(f"\nanswer cue **Sanitized Text:**: {differ} of {len(PROBES)} probe outputs post-process differently "
          "when cut at the cue as given instead of at its heading")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=6, help="records of the sample task (default 6)")
    args = parser.parse_args()
    cue_probes()
    with tempfile.TemporaryDirectory(prefix="rules-effect-") as tmp:
        root, clock = Path(tmp), time.perf_counter()
        common = ["-t", TASK, "--limit", str(args.limit), "--no-progress", "--cache-dir", str(root / "cache"),
                  "--bootstrap-samples", "0", "--max-off-label", "100000", "--judge-truncated-answers", "accept",
                  "--empty-answers", "accept"]
        for rule in ("skip", "judge"):
            cli("run", "-m", "empty", "-o", str(root / f"empty-{rule}"), "--empty-outputs", rule, *common)
        report("--empty-outputs skip vs judge (empty baseline)", root / "empty-skip", root / "empty-judge")
        cli("run", "-m", "regex-scrubber", "-o", str(root / "scrub"), "--judge", "none", *common[:-6])
        rows = [json.loads(x) for x in (root / "scrub" / TASK / "sanitized.jsonl").read_text().splitlines()]
        preds = root / "think.jsonl"
        preds.write_text("".join(json.dumps({"id": r["id"], "model_sanitized_text": "I rewrite the record and keep "
                                             "what the instruction asks me to keep.</think>" + (r["output"] or "")}) + "\n"
                                 for r in rows))
        for rule in ("after-think", "raw"):
            cli("evaluate", "-p", str(preds), "--predictions-postprocess", "none", "-o", str(root / f"incl-{rule}"),
                "--inclusion-text", rule, *common)
        report("--inclusion-text after-think vs raw (reasoning before </think>)", root / "incl-after-think",
               root / "incl-raw")
        print(f"\n({time.perf_counter() - clock:.0f} s, judge llamacpp:smollm2, {args.limit} records, "
              f"load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
