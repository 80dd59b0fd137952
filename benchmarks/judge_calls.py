"""How many judge calls a model costs: the first model, each further model, without reuse, and a re-run.

The judge's guesses on the original records depend only on (judge, template, record, attribute), so the first
model evaluated with a judge pays for them and every further model reuses them from the response cache. This
script evaluates two models (two local fake servers that rewrite differently) with one fake judge server and one
cache, then re-runs the second evaluation, and prints the judge requests the server received in each case
beside the count the second model would need without reuse.

Usage: ``python benchmarks/judge_calls.py [--records 50]``. A measuring tool, not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from fake_openai_server import FakeOpenAIServer  # noqa: E402
from judge_fakes import write_templates  # noqa: E402
from scale import write_task  # noqa: E402
from throughput import judge_reply  # noqa: E402


def run(task: Path, prompts: Path, model_url: str, judge_url: str, out: Path, cache: Path) -> dict:
    from privasis_bench.cli import main

    # two different deployments named "fake": cache_namespace keeps their cached rewrites apart
    sys.argv = ["privasis-bench", "run", "-m", f"openai:fake,base_url={model_url},cache_namespace={out.name}", "-t", str(task), "-o", str(out),
                "--judge", f"openai:judge,base_url={judge_url}", "--judge-prompts", str(prompts), "--cache-dir", str(cache),
                "--no-progress", "--bootstrap-samples", "50"]
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main()
        except SystemExit as exc:
            if exc.code not in (0, None):
                raise
    return json.loads(next(out.glob("*/results.json")).read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        task = write_task(tmp, args.records)
        prompts = write_templates(tmp / "prompts")
        cache = tmp / "cache"
        with FakeOpenAIServer(reply=judge_reply) as judge, FakeOpenAIServer() as model_a, \
                FakeOpenAIServer(reply=lambda p: "A short neutral summary. " + str(len(p))) as model_b:
            rows = []
            for label, model, out in (("first model", model_a, "a"), ("second model", model_b, "b"),
                                      ("second model, re-run", model_b, "b")):
                before = sum(judge.received.values())
                results = run(task, prompts, model.base_url, judge.base_url, tmp / out, cache)
                calls = results["judge_calls"]
                rows.append((label, sum(judge.received.values()) - before, calls["guess_original_computed"],
                             calls["guess_original_reused"]))
        print(f"{args.records} records, one judge, one cache")
        print(f"{'evaluation':<24} {'judge requests':>15} {'orig. computed':>15} {'orig. reused':>13}")
        for label, sent, computed, reused in rows:
            print(f"{label:<24} {sent:>15} {computed:>15} {reused:>13}")
        second = rows[1]
        print(f"second model without reuse would need {second[1] + second[3]} judge requests "
              f"({second[3]} original-record guesses saved)")


if __name__ == "__main__":
    main()
