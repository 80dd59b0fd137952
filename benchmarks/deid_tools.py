"""Speed and memory of each de-identification tool: documents per second and peak RSS.

Each tool runs in its own fresh interpreter (so peak memory is its own) over two inputs: the TAB sample (ten
court-style documents, ~500 words each) and 200 synthetic Privasis records (the bundled sample's records, cycled).
Load time (building the adapter and answering one short warm-up text: importing the library, loading a spaCy
pipeline, Presidio's lazy engine start) is printed apart from the documents per second of de-identification itself. A tool whose extra is not installed is listed as skipped.

    python benchmarks/deid_tools.py [--records 200] [--tools presidio presidio:,nlp=none scrubadub ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "tasks" / "sample"
TOOLS = ("presidio", "presidio:,nlp=none", "presidio:,operator=synthetic", "scrubadub", "spacy-ner", "datafog",
         "regex-scrubber:,names=true")

CHILD = r"""
import json, resource, sys, time
from privasis_bench.adapters.base import ChatRequest
from privasis_bench.adapters.registry import build_adapter
from privasis_bench.adapters.spec import ModelSpec
from privasis_bench.data.records import Record
from privasis_bench.errors import ModelSpecError

spec, texts = sys.argv[1], json.load(open(sys.argv[2]))
t0 = time.perf_counter()
try:
    adapter = build_adapter(ModelSpec.parse(spec))
except ModelSpecError as exc:
    print(json.dumps({"skipped": str(exc)})); sys.exit(0)
requests = [ChatRequest.user("x", max_tokens=1, record=Record(id=str(i), record_type="doc", text=t, base_instruction="",
            smoothed_instruction="", reference_sanitized="", targets=(), keep=())) for i, t in enumerate(texts)]

def answer(batch):
    if adapter.batched:
        return adapter.generate_batch(batch)
    import asyncio
    return [asyncio.run(adapter.agenerate(r)) for r in batch]

answer([ChatRequest.user("x", max_tokens=1, record=Record(id="w", record_type="doc", text="Warm up, Ann.",
        base_instruction="", smoothed_instruction="", reference_sanitized="", targets=(), keep=()))])
load_s = time.perf_counter() - t0  # building the adapter and its first (lazy) load
t0 = time.perf_counter()
results = answer(requests)
run_s = time.perf_counter() - t0
failed = sum(1 for r in results if not r.ok)
print(json.dumps({"load_s": load_s, "docs_per_s": len(texts) / run_s, "failed": failed,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def inputs(records: int) -> dict[str, list[str]]:
    """The two inputs: TAB sample texts, and ``records`` Privasis sample texts cycled."""
    tab = [d["text"] for d in json.loads((SAMPLE / "tab_sample.json").read_text(encoding="utf-8"))]
    rows = [json.loads(line)["original_record"] for line in
            (SAMPLE / "privasis_sample.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    return {"tab_sample": tab, f"privasis x{records}": [rows[i % len(rows)] for i in range(records)]}


def measure(spec: str, path: Path) -> dict:
    """Run one tool over one input file in a fresh interpreter; its figures."""
    out = subprocess.run([sys.executable, "-c", CHILD, spec, str(path)], capture_output=True, text=True, timeout=1800,
                         cwd=REPO, env={**__import__("os").environ, "PYTHONPATH": str(REPO)})
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=200)
    ap.add_argument("--tools", nargs="+", default=list(TOOLS))
    args = ap.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for name, texts in inputs(args.records).items():
            files[name] = Path(tmp) / f"{len(files)}.json"
            files[name].write_text(json.dumps(texts), encoding="utf-8")
        print(f"{'tool':34} {'input':16} {'load s':>7} {'docs/s':>9} {'peak MiB':>9} failed")
        for spec in args.tools:
            for name, path in files.items():
                fig = measure(spec, path)
                if "skipped" in fig or "error" in fig:
                    print(f"{spec:34} {name:16} {fig.get('skipped') or fig.get('error')}")
                    continue
                print(f"{spec:34} {name:16} {fig['load_s']:7.2f} {fig['docs_per_s']:9.1f} {fig['peak_mib']:9.0f} "
                      f"{fig['failed']}")


if __name__ == "__main__":
    main()
