"""The Text Anonymization Benchmark (TAB) as a second scorer, beside the Privasis protocol (``protocol/``).

:mod:`records` (typed documents, annotators and entity mentions in TAB's JSON schema), :mod:`loading` (reading
and validating a TAB JSON file), :mod:`instructions` (the per-document instruction built from the task line),
:mod:`alignment` (a free-form rewrite aligned back to masked character spans of the original), :mod:`spans`
(span lists: merging, TAB's masked-output files), :mod:`tokens` (what the official scorer ignores in a mention),
:mod:`metrics` (TAB's recall and precision measures, per document then pooled), :mod:`bootstrap` (seeded
intervals over documents) and :mod:`scorer` (documents + system spans -> metrics and sample rows).

May import data, tasks and adapters (types only); never ``protocol/`` (the Privasis scorer), and ``protocol/``
never imports it.
"""
