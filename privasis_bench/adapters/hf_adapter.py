"""``hf:<model>``: a Hugging Face transformers model run in-process (a local directory or a hub id).

The natural way to evaluate a freshly trained cleaner (``privasis-bench train`` output) or a downloaded
Privasis-Cleaner checkpoint on a CPU or one GPU without starting a server. Install with
``pip install 'privasis-bench[hf]'`` (on CPU, install ``torch==2.13.0`` first so pip keeps the CPU wheel).

Prompts are rendered with the tokenizer's chat template (``add_generation_prompt``); temperature 0 is
greedy decoding. Requests are batched (left padding) ``batch_size`` at a time.

Arguments: ``device`` (``auto``: CUDA when available, else CPU; or ``cpu``, ``cuda``, ``cuda:1``),
``dtype`` (``auto``: bfloat16 on a GPU that supports it, else float32; or ``float32``, ``bfloat16``,
``float16``), ``batch_size`` (default 4), ``max_length`` (context window; default the model's
``max_position_embeddings``), ``chat_template`` (a Jinja file or the template text, for a model without
one), ``revision``, ``trust_remote_code``, ``n_threads`` (CPU threads), ``seed`` (default 0), ``top_p``.

A prompt that does not fit the context window fails that request alone (recorded, never an empty
success). Local directories are not cached by the harness (the weights behind a path can change with the
next ``train``); hub ids are. A hub id that is neither in the local Hugging Face cache nor downloadable
fails at once with what to do.
"""

from __future__ import annotations

import threading
from itertools import groupby
from pathlib import Path
from typing import Any

from privasis_bench.adapters.base import Adapter, AdapterError, ChatRequest, ChatResult, Usage
from privasis_bench.adapters.registry import require_module
from privasis_bench.errors import ModelSpecError

_ARGS = ("device", "dtype", "batch_size", "max_length", "chat_template", "revision", "trust_remote_code",
         "n_threads", "seed", "top_p")
_DTYPES = ("auto", "float32", "bfloat16", "float16")


def _hub_help(model: str) -> str:
    return (
        f"hf: {model!r} is not a local directory and not in the Hugging Face cache, and the hub cannot be reached: "
        f"download it on a connected machine (`huggingface-cli download {model}`) and copy HF_HOME here, "
        f"or pass the model's local directory (hf:/path/to/model)"
    )


def check_hub_model(model: str, revision: str | None = None) -> bool:
    """Whether a hub id must be read from the local cache only (the hub is unreachable, the model is cached).

    Fails fast (one line) when the model can be neither read from the cache nor downloaded.
    """
    from huggingface_hub import try_to_load_from_cache

    from privasis_bench.data.loading import hub_reachable

    if hub_reachable():
        return False
    if isinstance(try_to_load_from_cache(model, "config.json", revision=revision), str):
        return True
    raise ModelSpecError(_hub_help(model))


class HFAdapter(Adapter):
    """In-process transformers generation with the model's chat template (batched)."""

    provider = "hf"
    batched = True
    extra = "hf"

    def __init__(self, model: str, **args: Any) -> None:
        super().__init__(model, **args)
        unknown = sorted(k for k in args if k not in _ARGS)
        if unknown:
            raise ModelSpecError(f"hf: unknown model argument(s) {', '.join(unknown)}; accepted: {', '.join(_ARGS)}")
        if not model:
            raise ModelSpecError("hf: name a model: a local model directory or a Hugging Face id")
        if str(args.get("dtype", "auto")) not in _DTYPES:
            raise ModelSpecError(f"hf: dtype must be one of {', '.join(_DTYPES)}, not {args['dtype']!r}")
        self.batch_size = int(args.get("batch_size", 4))
        if self.batch_size < 1:
            raise ModelSpecError("hf: batch_size must be at least 1")
        require_module("transformers", provider="hf", extra="hf")
        require_module("torch", provider="hf", extra="hf", hint="pip install torch (CPU: pip install 'torch==2.13.0')")
        self.local = Path(model).expanduser().is_dir()
        self.cache_only = False  # read a hub model from the local cache without asking the hub
        if not self.local:
            if Path(model).expanduser().exists() or model.startswith((".", "/", "~")):
                raise ModelSpecError(f"hf: {model!r} is not a model directory")
            self.cache_only = check_hub_model(model, args.get("revision"))
        self.cacheable = not self.local  # type: ignore[misc]  # a local directory's weights may change
        self._lock = threading.Lock()
        self._model: Any = None
        self._tokenizer: Any = None
        self.context: int | None = None
        self.device = "cpu"

    def _build(self) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if self.args.get("n_threads"):
            torch.set_num_threads(int(self.args["n_threads"]))
        device = str(self.args.get("device", "auto"))
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype = str(self.args.get("dtype", "auto"))
        if dtype == "auto":
            dtype = "bfloat16" if device.startswith("cuda") and torch.cuda.is_bf16_supported() else "float32"
        where = str(Path(self.model).expanduser()) if self.local else self.model
        common = {"revision": self.args.get("revision"), "trust_remote_code": bool(self.args.get("trust_remote_code", False)),
                  "local_files_only": self.cache_only}
        tokenizer = AutoTokenizer.from_pretrained(where, **common)
        model = AutoModelForCausalLM.from_pretrained(where, dtype=getattr(torch, dtype), **common).to(device)
        model.eval()
        template = self.args.get("chat_template")
        if template:
            text = str(template)
            path = Path(text).expanduser()
            tokenizer.chat_template = path.read_text(encoding="utf-8") if "{%" not in text and path.is_file() else text
        if not tokenizer.chat_template:
            raise AdapterError(f"hf: {self.model} has no chat template; pass chat_template=FILE.jinja", retryable=False)
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        tokenizer.padding_side = "left"
        self.context = int(self.args.get("max_length") or getattr(model.config, "max_position_embeddings", 0) or 4096)
        self._tokenizer, self._model, self.device = tokenizer, model, device

    def _load(self) -> None:
        if self._model is None:
            try:
                self._build()
            except AdapterError:
                raise
            except Exception as exc:  # noqa: BLE001 - a model that cannot load will not load on a retry either
                first = str(exc).splitlines()[0] if str(exc) else ""
                raise AdapterError(f"hf: cannot load {self.model}: {type(exc).__name__}: {first}", retryable=False) from exc

    def _eos_ids(self) -> set[int]:
        ids = self._model.generation_config.eos_token_id
        ids = set(ids if isinstance(ids, list) else [ids] if ids is not None else [])
        if self._tokenizer.eos_token_id is not None:
            ids.add(self._tokenizer.eos_token_id)
        return ids

    def _run_group(self, requests: list[ChatRequest], prompts: list[list[int]]) -> list[ChatResult]:
        """Generate for requests sharing sampling settings; each keeps its own token budget."""
        import torch

        tok, model = self._tokenizer, self._model
        assert self.context is not None
        budgets = [min(r.max_tokens, self.context - len(p)) for r, p in zip(requests, prompts)]
        batch = tok.pad({"input_ids": prompts}, padding=True, return_tensors="pt").to(self.device)
        first = requests[0]
        sampling: dict[str, Any] = {"do_sample": False}
        if first.temperature > 0:
            sampling = {"do_sample": True, "temperature": first.temperature, "top_p": float(self.args.get("top_p", 1.0))}
        torch.manual_seed(first.seed if first.seed is not None else int(self.args.get("seed", 0)))
        with torch.inference_mode():
            out = model.generate(**batch, max_new_tokens=max(budgets), pad_token_id=tok.pad_token_id, **sampling)
        width = batch["input_ids"].shape[1]
        eos = self._eos_ids()
        results = []
        for row, request, prompt, budget in zip(out, requests, prompts, budgets):
            new = row[width:].tolist()[:budget]
            end = next((i for i, t in enumerate(new) if t in eos), None)
            tokens = new if end is None else new[:end]
            text = tok.decode(tokens, skip_special_tokens=True)
            reason = "length" if end is None else "stop"
            for stop in request.stop:
                if stop and stop in text:
                    text, reason = text[: text.index(stop)], "stop"
            used = len(new) if end is None else end + 1
            results.append(ChatResult(text=text, finish_reason=reason, usage=Usage(len(prompt), used)))
        return results

    def generate_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Run requests ``batch_size`` at a time; a request that cannot run fails alone."""
        with self._lock:
            self._load()
            results: list[ChatResult | None] = [None] * len(requests)
            runnable: list[tuple[int, list[int]]] = []
            for i, request in enumerate(requests):
                text = self._tokenizer.apply_chat_template(request.as_openai_messages(), tokenize=False, add_generation_prompt=True)
                ids = self._tokenizer(text, add_special_tokens=False)["input_ids"]
                if len(ids) >= (self.context or 0):
                    results[i] = ChatResult(text=None, error=f"hf: the prompt ({len(ids)} tokens) does not fit the context window ({self.context})")
                else:
                    runnable.append((i, ids))
            # a seeded draw (recipe sampling) runs in its own group, so its seed is the one the generator uses
            key = lambda item: (requests[item[0]].temperature, requests[item[0]].stop,  # noqa: E731
                                -1 if requests[item[0]].seed is None else requests[item[0]].seed)
            for _, group in groupby(sorted(runnable, key=key), key=key):
                group = list(group)
                for start in range(0, len(group), self.batch_size):
                    chunk = group[start : start + self.batch_size]
                    for (i, _), result in zip(chunk, self._run_chunk([requests[i] for i, _ in chunk], [ids for _, ids in chunk])):
                        results[i] = result
            return [r for r in results if r is not None]

    def _run_chunk(self, requests: list[ChatRequest], prompts: list[list[int]]) -> list[ChatResult]:
        try:
            return self._run_group(requests, prompts)
        except Exception as exc:  # noqa: BLE001 - e.g. out of memory: isolate the request(s) that fail
            if len(requests) > 1:
                return [self._run_chunk([r], [p])[0] for r, p in zip(requests, prompts)]
            return [ChatResult(text=None, error=f"hf: generation failed: {type(exc).__name__}: {exc}")]

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        """Single-request form (runs in a worker thread)."""
        import asyncio

        return (await asyncio.to_thread(self.generate_batch, [request]))[0]

    async def aclose(self) -> None:
        """Free the model."""
        with self._lock:
            self._model = self._tokenizer = None
