"""How close a full `run` gets to the throughput ceiling of its servers.

A local OpenAI-compatible fake server, in its own process like any real server, answers every request after a
fixed latency. The same server (or, with
``--two-servers``, a second one with another latency) plays the judge, asked with tagged templates that a
deterministic function answers, so every record goes through the judge's whole chain (guesses, original-record
guesses, comparisons, inclusion questions). For each concurrency level the script runs `privasis-bench run` on a
synthetic task with a fresh cache, counts the requests the servers received, and drives the same number of
requests through a plain asyncio load generator at the same concurrency: the ceiling. It prints the harness's
throughput as a fraction of that ceiling.

Concurrency levels below 8 run on a share of the records (``records x conc / 8``, at least 20) so that every level
takes about the same time. With ``--two-servers`` the model and the judge each get their own server.
``throughput_llamacpp.py`` does the same against a real model.

Usage: ``python benchmarks/throughput.py [--records 200] [--latency 0.1] [--concurrency 1 4 8 16 32]
[--two-servers --judge-latency 0.05]``. A measuring tool, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from fake_openai_server import FakeOpenAIServer, reply_for  # noqa: E402
from judge_fakes import SEP, deterministic_answer, parse_prompt, write_templates  # noqa: E402
from scale import write_task  # noqa: E402


def judge_reply(prompt: str) -> str:
    """Judge prompts (tagged templates) get the deterministic judge's answer; anything else a rewrite."""
    if SEP in prompt:
        return deterministic_answer(*parse_prompt(prompt))
    return reply_for(prompt)


def _serve(delay: float, count, ready) -> None:  # noqa: ANN001 - multiprocessing objects
    """Child process: a fake server that counts the requests it answers."""
    def reply(prompt: str) -> str:
        with count.get_lock():
            count.value += 1
        return judge_reply(prompt)

    with FakeOpenAIServer(delay=delay, reply=reply, keep_alive=True) as server:
        ready.put(server.base_url)
        threading.Event().wait()


class ServerProcess:
    """A fixed-latency fake server running in a child process (so it does not share this process's CPU)."""

    def __init__(self, delay: float) -> None:
        ctx = multiprocessing.get_context("fork")
        self.count, self._ready = ctx.Value("l", 0), ctx.Queue()
        self._proc = ctx.Process(target=_serve, args=(delay, self.count, self._ready), daemon=True)
        self.base_url = ""

    def __enter__(self) -> "ServerProcess":
        self._proc.start()
        self.base_url = self._ready.get(timeout=60)
        return self

    def __exit__(self, *exc: object) -> None:
        self._proc.terminate()
        self._proc.join(10)

    @property
    def requests(self) -> int:
        """Requests answered so far."""
        return int(self.count.value)


async def load_generator(base_url: str, requests: int, concurrency: int) -> float:
    """Seconds to push ``requests`` distinct chat requests through the server at ``concurrency``."""
    semaphore = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=concurrency)) as client:
        async def one(i: int) -> None:
            async with semaphore:
                response = await client.post(f"{base_url}/chat/completions", json={
                    "model": "ceiling", "messages": [{"role": "user", "content": f"ceiling request {i}"}]})
                response.raise_for_status()

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(requests)))
        return time.perf_counter() - start


def harness_run(task: Path, prompts: Path | None, model_url: str, judge_url: str, concurrency: int, tmp: Path,
                model: str = "fake", judge: str = "judge", extra: tuple[str, ...] = ()) -> float:
    """Seconds for one ``privasis-bench run`` (fresh cache and output) in this process."""
    from privasis_bench.cli import main

    out = tmp / f"run_c{concurrency}_{time.monotonic_ns()}"
    sys.argv = ["privasis-bench", "run", "-m", f"openai:{model},base_url={model_url}", "-t", str(task), "-o", str(out),
                "--judge", f"openai:{judge},base_url={judge_url}", "--cache-dir", str(out / "cache"), "--no-progress",
                "--bootstrap-samples", "100", "--concurrency", str(concurrency), "--judge-concurrency", str(concurrency),
                *(["--judge-prompts", str(prompts)] if prompts else []), *extra]
    start = time.perf_counter()
    try:
        main()
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise
    return time.perf_counter() - start


def records_for(concurrency: int, records: int) -> int:
    """Low concurrency levels run on a share of the records (same request-seconds per level, a bounded script)."""
    return records if concurrency >= 8 else max(20, records * concurrency // 8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per model request")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8, 16, 32])
    parser.add_argument("--two-servers", action="store_true", help="judge on its own server")
    parser.add_argument("--judge-latency", type=float, default=0.05)
    args = parser.parse_args()
    import contextlib
    import io

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        prompts = write_templates(tmp / "prompts")
        model = ServerProcess(args.latency)
        judge = ServerProcess(args.judge_latency) if args.two_servers else model
        with model, (judge if args.two_servers else contextlib.nullcontext()):
            print(f"synthetic task, model latency {args.latency}s"
                  + (f", judge on a second server with latency {args.judge_latency}s" if args.two_servers else
                     ", judge on the same server") + "; --concurrency and --judge-concurrency both set to conc")
            print(f"{'conc':>5} {'records':>8} {'requests':>9} {'harness s':>10} {'ceiling s':>10} {'fraction':>9}"
                  + (f" {'ideal s':>8} {'x ideal':>8}" if args.two_servers else ""))
            (tmp / "warm").mkdir()
            warm = write_task(tmp / "warm", 3)  # the first run in a process pays for imports: not measured
            with contextlib.redirect_stdout(io.StringIO()):
                harness_run(warm, prompts, model.base_url, judge.base_url, 4, tmp)
            for conc in args.concurrency:
                n = args.records if args.two_servers else records_for(conc, args.records)
                task_dir = tmp / f"task_{n}"
                task_dir.mkdir(exist_ok=True)
                task = write_task(task_dir, n)
                before_m, before_j = model.requests, judge.requests
                with contextlib.redirect_stdout(io.StringIO()):
                    seconds = harness_run(task, prompts, model.base_url, judge.base_url, conc, tmp)
                model_n = model.requests - before_m
                judge_n = judge.requests - before_j if args.two_servers else 0
                requests = model_n + judge_n
                if args.two_servers:
                    ideal = max(model_n * args.latency, judge_n * args.judge_latency) / conc
                    print(f"{conc:>5} {n:>8} {requests:>9} {seconds:>10.1f} {'':>10} {'':>9} {ideal:>8.1f} "
                          f"{seconds / ideal:>8.2f}", flush=True)
                else:
                    before = model.requests
                    ceiling = asyncio.run(load_generator(model.base_url, requests, conc))
                    assert model.requests - before == requests
                    print(f"{conc:>5} {n:>8} {requests:>9} {seconds:>10.1f} {ceiling:>10.1f} {ceiling / seconds:>9.0%}",
                          flush=True)


if __name__ == "__main__":
    main()
