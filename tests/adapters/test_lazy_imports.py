"""Importing the package, the registry and the CLI must not import heavy back-ends."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("vllm", "torch", "llama_cpp", "xllamacpp", "lm_eval", "transformers", "trl", "peft", "accelerate")


def test_package_registry_and_cli_import_no_heavy_backend():
    code = (
        "import json, sys\n"
        "import privasis_bench, privasis_bench.adapters.registry, privasis_bench.cli\n"
        "import privasis_bench.training.card, privasis_bench.training.recipe, privasis_bench.training.trainer\n"
        "import privasis_bench.training.sft_export, privasis_bench.cli.training_cmds\n"
        "from privasis_bench.adapters.registry import list_providers, load_adapter_class\n"
        "list_providers()\n"
        "for name in ('vllm', 'llamacpp', 'lmeval', 'hf', 'openai', 'anthropic'):\n"
        "    load_adapter_class(name)\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
