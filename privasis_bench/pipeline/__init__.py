"""The record flow of a run and its resumable steps: sanitize -> judge -> write, one record at a time.

:mod:`flow` (records move on as soon as their previous step is done, handed on in record order), :mod:`sanitize`
(the model under test's output journal, ``sanitized.jsonl``), :mod:`judging` (the judge step, ``judged.jsonl`` via
:mod:`checkpoint`), :mod:`sink` (samples rows and compact metric tallies), :mod:`run` (scoring and writing
results), :mod:`predictions` (importing outputs made elsewhere: our JSONL, lm-eval samples); around them,
:mod:`lock` (one writer per task directory, shared locks for the commands that read it), :mod:`tempfiles` (the
temporary files killed writers left, removed by the next writer) and :mod:`spend` (the spend ledger, ``usage.json``).
Tasks scored by a span scorer (``scorer: tab``) go through :mod:`scored` instead, with the interface of
:mod:`scorers` (no judge).

May import every lower layer (data, tasks, adapters, engine, protocol, results, interop); never the CLI.
"""
