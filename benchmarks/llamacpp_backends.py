"""llama-cpp-python vs xllamacpp on the shipped SmolLM2 GGUF: the numbers behind the ``llamacpp:`` default.

For each back-end that is importable, in a fresh child process (so load time and RSS are its own):

* load time of SmolLM2-135M (n_ctx 2048 per slot);
* prompt tokens/s (one long prompt, one output token) and generated tokens/s;
* judge requests/s over the same real judge prompts (the protocol's guess/compare/inclusion prompts built from
  the bundled sample's records, the sample task's answer budgets), at 1 slot and, for xllamacpp, 4 slots
  (llama-cpp-python has one context: its 4-slot figure is the same serial loop behind a lock);
* peak RSS, and the answers themselves: the script reports whether temperature-0 answers are identical
  across back-ends and slot counts.

``--install`` also times ``pip install --no-cache-dir --only-binary=:all:`` of xllamacpp and
``pip install --no-cache-dir`` of llama-cpp-python (a source build) into temporary targets.

Usage: ``python benchmarks/llamacpp_backends.py [--threads N] [--prompts 24] [--install] [--json out.json]``.
The machine this ran on is shared: treat the figures as indicative (see benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def judge_prompts(limit: int) -> list[tuple[str, int]]:
    """(prompt, max_tokens) pairs: real judge questions (guess, compare, inclusion) over the bundled sample's records."""
    from privasis_bench.data.loading import load_records
    from privasis_bench.protocol.judge import Judge, JudgeSettings
    from privasis_bench.protocol.judge_prompts import JudgePrompts
    from privasis_bench.tasks.registry import load_task

    task = load_task("privasis_sample")
    judge = Judge(None, JudgePrompts.load(task.judge.templates), JudgeSettings(
        guess_max_tokens=task.judge.guess_max_tokens, compare_max_tokens=task.judge.compare_max_tokens))
    requests = []
    for record in load_records(task).scored:
        for attr in record.targets:
            requests.append(judge.target_guess_request(record.text, attr))
            requests.append(judge.compare_request(attr, "a first guess", "a second guess"))
        for attr in record.keep:
            requests.append(judge.inclusion_request(record.reference_sanitized, "a guess", attr))
        if len(requests) >= limit:
            break
    return [(r.messages[-1][1], r.max_tokens) for r in requests[:limit]]


def child(backend: str, threads: int, slots: int, prompts: list[tuple[str, int]]) -> dict:
    """Run inside a fresh process: load, measure, answer every prompt."""
    from privasis_bench.adapters.base import ChatRequest
    from privasis_bench.adapters.llamacpp_adapter import smollm2_path

    path = str(smollm2_path())
    started = time.perf_counter()
    if backend == "xllamacpp":
        from privasis_bench.adapters.llamacpp_xll import XllamaEngine, XllamaSettings

        engine = XllamaEngine(XllamaSettings(path=path, n_ctx=2048, n_threads=threads, n_parallel=slots,
                                             chat_template=None, extra_bufts=False, verbose=False))

        def ask(prompt: str, max_tokens: int) -> tuple[str | None, int, int]:
            r = engine.generate(ChatRequest.user(prompt, max_tokens=max_tokens), 0, {})
            return r.text, r.usage.prompt_tokens, r.usage.completion_tokens
    else:
        import threading

        from llama_cpp import Llama

        llm = Llama(model_path=path, n_ctx=2048, n_threads=threads, seed=0, verbose=False)
        lock = threading.Lock()

        def ask(prompt: str, max_tokens: int) -> tuple[str | None, int, int]:
            with lock:
                out = llm.create_chat_completion(messages=[{"role": "user", "content": prompt}], max_tokens=max_tokens,
                                                 temperature=0.0, seed=0)
            u = out["usage"]
            return out["choices"][0]["message"]["content"], u["prompt_tokens"], u["completion_tokens"]
    load_s = time.perf_counter() - started

    long_prompt = "The committee met on Tuesday to review the annual budget. " * 120
    ask("warm up", 1)
    t = time.perf_counter()
    _, p_tokens, _ = ask(long_prompt + " Summarize.", 1)
    prompt_tps = p_tokens / (time.perf_counter() - t)
    t = time.perf_counter()
    _, _, g_tokens = ask("Write a long story about a lighthouse.", 128)
    gen_tps = g_tokens / (time.perf_counter() - t)

    t = time.perf_counter()
    with ThreadPoolExecutor(max_workers=slots) as pool:
        answers = list(pool.map(lambda pm: ask(*pm), prompts))
    judge_s = time.perf_counter() - t
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"backend": backend, "threads": threads, "slots": slots, "load_s": round(load_s, 3),
            "prompt_tok_per_s": round(prompt_tps, 1), "gen_tok_per_s": round(gen_tps, 1),
            "judge_req_per_s": round(len(prompts) / judge_s, 3), "judge_requests": len(prompts),
            "peak_rss_mb": round(rss_mb, 1), "answers": [a[0] for a in answers]}


def time_install(requirement: str, only_binary: bool) -> dict:
    """Wall time of a cache-less pip install into a throw-away target directory."""
    with tempfile.TemporaryDirectory() as target:
        cmd = [sys.executable, "-m", "pip", "install", "--no-cache-dir", "--no-deps", "--target", target, requirement]
        if only_binary:
            cmd.insert(4, "--only-binary=:all:")
        started = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        return {"requirement": requirement, "only_binary": only_binary, "ok": proc.returncode == 0,
                "seconds": round(time.perf_counter() - started, 1),
                "tail": proc.stdout.strip().splitlines()[-1:] + proc.stderr.strip().splitlines()[-1:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--prompts", type=int, default=24)
    parser.add_argument("--backends", nargs="+", default=["xllamacpp", "llama-cpp-python"])
    parser.add_argument("--install", action="store_true", help="also time cache-less installs (llama-cpp-python builds)")
    parser.add_argument("--json", type=Path, help="write every figure (and the answers) here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        backend, threads, slots, limit = args.child.split(":")
        print(json.dumps(child(backend, int(threads), int(slots), judge_prompts(int(limit)))))
        return

    import importlib.util

    modules = {"xllamacpp": "xllamacpp", "llama-cpp-python": "llama_cpp"}
    rows = []
    print(f"cpus: {os.cpu_count()}  load average: {os.getloadavg()[0]:.1f} (a shared machine: figures are indicative)")
    for backend in args.backends:
        if importlib.util.find_spec(modules[backend]) is None:
            print(f"{backend}: not installed, skipped")
            continue
        for threads in args.threads:
            for slots in (1, 4):
                out = subprocess.run([sys.executable, __file__, "--child", f"{backend}:{threads}:{slots}:{args.prompts}"],
                                     capture_output=True, text=True)
                if out.returncode != 0:
                    print(f"{backend} threads={threads} slots={slots}: FAILED\n{out.stderr[-2000:]}")
                    continue
                row = json.loads(out.stdout.strip().splitlines()[-1])
                rows.append(row)
                print(f"{backend:17} threads={threads} slots={slots}  load {row['load_s']:6.2f} s  "
                      f"prompt {row['prompt_tok_per_s']:7.1f} tok/s  gen {row['gen_tok_per_s']:6.1f} tok/s  "
                      f"judge {row['judge_req_per_s']:6.3f} req/s  RSS {row['peak_rss_mb']:6.0f} MB", flush=True)
    if rows:
        reference = rows[0]["answers"]
        for row in rows[1:]:
            same = sum(a == b for a, b in zip(reference, row["answers"]))
            print(f"identical temperature-0 answers vs {rows[0]['backend']} t={rows[0]['threads']} s=1: "
                  f"{row['backend']} t={row['threads']} s={row['slots']}: {same}/{len(reference)}")
    installs = []
    if args.install:
        installs = [time_install("xllamacpp", True), time_install("llama-cpp-python", False)]
        for item in installs:
            print(f"install {item['requirement']:17} only-binary={item['only_binary']!s:5}  ok={item['ok']}  "
                  f"{item['seconds']:7.1f} s")
    if args.json:
        args.json.write_text(json.dumps({"runs": rows, "installs": installs}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
