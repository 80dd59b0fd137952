"""An example privasis-bench plugin: provider ``echo-upper`` returns the last user message in upper case.

Install it (``pip install tests/plugins/example_adapter``) and ``privasis-bench models list`` shows it;
``--model echo-upper:any`` runs it. A real plugin would call its own model here.
"""

from __future__ import annotations

from privasis_bench.adapters.base import Adapter, ChatRequest, ChatResult, Usage


class EchoUpperAdapter(Adapter):
    """Echoes the last user message in upper case (a plugin example, not a sanitizer)."""

    provider = "echo-upper"
    cacheable = False

    async def agenerate(self, request: ChatRequest) -> ChatResult:
        text = next((c for role, c in reversed(request.messages) if role == "user"), "")
        out = text.upper() + str(self.args.get("suffix", ""))
        return ChatResult(text=out, finish_reason="stop", usage=Usage(len(text.split()), len(out.split())))
