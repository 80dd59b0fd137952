"""The instruction a model receives for one TAB document, built from its task line and a template file.

TAB's task line names the person the document is to be anonymised for ("... anonymise the following person:
NAME"). The harness words the instruction itself in a template file with a ``{person}`` placeholder (the task's
``scorer_args.instruction_template``); results record the file's sha256 like every other template.
"""

from __future__ import annotations

from privasis_bench.errors import TaskConfigError
from privasis_bench.fsutil import read_text
from privasis_bench.tab.records import TabDocument


def read_instruction_template(path: str, where: str) -> str:
    """The instruction template at ``path``, checked for its ``{person}`` placeholder."""
    template = read_text(path, f"TAB instruction template (scorer_args.instruction_template of {where})")
    if "{person}" not in template:
        raise TaskConfigError(where, "scorer_args.instruction_template", f"template {path} lacks the {{person}} placeholder")
    return template


def instruction_for(doc: TabDocument, template: str) -> str:
    """The filled instruction for ``doc`` (the person from its task line; 'the applicant' when it names none)."""
    return template.replace("{person}", doc.person or "the applicant").strip()
