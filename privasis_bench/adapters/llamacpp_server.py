"""Serve a GGUF model over HTTP (OpenAI-compatible) with llama.cpp's own server, from the xllamacpp wheel.

Nothing is compiled: xllamacpp ships llama.cpp's server built in. The process serves ``/v1/models``,
``/v1/chat/completions`` and the rest of llama.cpp's routes until it is stopped (SIGTERM or Ctrl-C).
Weight-repacking buffers are off on CPUs that list Intel AMX (whose ggml kernels crash in some VMs), as in the
``llamacpp`` adapter.

Usage: ``python -m privasis_bench.adapters.llamacpp_server --model X.gguf --port N [--host 127.0.0.1]
[--n_ctx 4096] [--n_threads T] [--n_parallel S]`` (``pip install 'privasis-bench[llamacpp-server]'``).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from privasis_bench.adapters.llamacpp_adapter import cpu_has_amx, default_threads


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The server's command line."""
    parser = argparse.ArgumentParser(prog="python -m privasis_bench.adapters.llamacpp_server",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="path to a .gguf file")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n_ctx", type=int, default=4096, help="context window of each slot")
    parser.add_argument("--n_threads", type=int, default=0, help="CPU threads (default: 1, so answers do not depend on the machine)")
    parser.add_argument("--n_parallel", type=int, default=1, help="parallel slots (continuous batching)")
    parser.add_argument("--verbose", action="store_true")
    return parser.parse_args(argv)


def serve(args: argparse.Namespace) -> None:
    """Start llama.cpp's server on ``args.host:args.port`` and block until SIGTERM/SIGINT."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_parallel = args.n_parallel
    params.n_ctx = args.n_ctx * args.n_parallel
    params.kv_unified = False
    threads = args.n_threads or default_threads()
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.hostnames = [args.host]
    params.port = args.port
    params.no_extra_bufts = cpu_has_amx()
    params.verbosity = 1 if args.verbose else 0
    server = xllamacpp.Server(params)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):  # after the server starts: llama.cpp installs handlers of its own
        signal.signal(sig, lambda *_: stop.set())
    print(f"llama.cpp server (xllamacpp {xllamacpp.__version__}) on {server.listening_address}", flush=True)
    while not stop.wait(0.5):
        pass
    del server


if __name__ == "__main__":
    serve(parse_args(sys.argv[1:]))
