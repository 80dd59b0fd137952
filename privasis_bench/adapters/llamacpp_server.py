"""Run ``python -m llama_cpp.server`` with weight-repacking buffers off on CPUs that list Intel AMX.

On virtual machines whose CPU advertises AMX but whose kernel does not grant its register state,
ggml's AMX kernels crash the process (SIGSEGV) on the first generation. llama-cpp-python has no
switch for that model parameter, so its default-params factory is wrapped before the server loads
the model (the same workaround the ``llamacpp`` adapter applies in-process). On other CPUs this is
exactly ``python -m llama_cpp.server``.

Usage: ``python -m privasis_bench.adapters.llamacpp_server --model X.gguf --port N ...`` (same arguments as
``python -m llama_cpp.server``).
"""

from __future__ import annotations

import runpy
import sys

from privasis_bench.adapters.llamacpp_adapter import cpu_has_amx


def disable_extra_bufts() -> None:
    """Make every model load in this process skip the extra (repacking) buffer types."""
    from llama_cpp import llama_cpp as lib

    original = lib.llama_model_default_params

    def without_extra_bufts():  # type: ignore[no-untyped-def]
        params = original()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params

    lib.llama_model_default_params = without_extra_bufts


if __name__ == "__main__":
    if cpu_has_amx():
        disable_extra_bufts()
    sys.argv[0] = "llama_cpp.server"
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
