"""The real local model fixtures of tests/integration (llama.cpp server, SmolLM2 GGUF, tiny vLLM model), for the
doc-block tests that run a catalogue line on a real local model."""

from integration.conftest import (  # noqa: F401 (fixtures)
    hf_home,
    integration_dir,
    llama_server_url,
    smollm2_gguf_path,
    tiny_vllm_model_dir,
)
