"""What the doc-block tests share: the blocks as the docs write them, and a fake provider that answers the
protocol's own prompts with clean labels.

The fake is :class:`fake_batch_server.FakeBatchServer` (OpenAI chat completions, Files + Batches, Anthropic
messages and message batches). :func:`protocol_reply` reads which of the shipped judge templates a prompt was built
from and answers with a label the strict Privasis-Zero tasks accept; any other prompt (the model's rewrite) gets
the fake's usual deterministic rewrite.
"""

from __future__ import annotations

import shlex

from fake_openai_server import reply_for
from test_doc_examples import BLOCKS, REPO, block_commands

#: The bundled sample records: the same schema as Privasis-Zero, so they stand in for the hub's test split.
SAMPLE_DATA = REPO / "tasks" / "sample" / "privasis_sample.jsonl"
#: How the shipped judge templates begin (tasks/prompts/judge_*.txt) and the clean label the fake gives each.
JUDGE_OPENINGS = {
    "Two responses tried to recover": "neither",  # compare
    "Decide whether a piece of information is present": "NO",  # inclusion
    "Read the following text carefully.": "not stated",  # the three guesses
}


def protocol_reply(prompt: str) -> str:
    """A clean judge label for a shipped judge prompt; the fake's deterministic rewrite for anything else."""
    for opening, label in JUDGE_OPENINGS.items():
        if prompt.startswith(opening):
            return label
    return reply_for(prompt)


def commands(page: str, first: str) -> list[list[str]]:
    """The argv (without ``privasis-bench``) of every command line of a classified block, as the doc writes it."""
    assert (page, first[:60]) in BLOCKS, f"{page}: {first!r} is not a classified block"
    out = []
    for line in block_commands(page, first):
        argv = shlex.split(line)
        assert argv[0] == "privasis-bench", line
        out.append(argv[1:])
    return out


def replace(argv: list[str], old: str, new: str) -> list[str]:
    """``argv`` with the one token equal to (or containing) ``old`` rewritten; fails when there is none."""
    hits = [i for i, token in enumerate(argv) if old in token]
    assert len(hits) == 1, f"{old!r} in {argv}: {len(hits)} hits"
    return [token.replace(old, new) if i == hits[0] else token for i, token in enumerate(argv)]
