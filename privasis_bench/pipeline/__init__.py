"""The runner: one record flow and one entry point for every family, with resumable steps.

:mod:`run` (``evaluate_task``: the family's scorer does its part through ``scorer.evaluate(job)``, the runner writes
the run record), :mod:`job` (the ``TaskJob`` a scorer receives, with the runner's services), :mod:`flow` (records move
on as soon as their previous step is done, handed on in record order), :mod:`sanitize` (the model under test's output
journal, ``sanitized.jsonl``), :mod:`scorers` (which scorer a task names), :mod:`predictions` (importing outputs made
elsewhere: our JSONL, lm-eval samples), :mod:`plan` + :mod:`prices` (``run --plan``); around them, :mod:`lock` (one
writer per task directory, shared locks for the commands that read it), :mod:`tempfiles` (the temporary files killed
writers left, removed by the next writer) and :mod:`spend` (the spend ledger, ``usage.json``).

May import every lower layer (data, tasks, adapters, engine, protocol, results, interop); never the CLI.
"""
