"""The resumable stages of a run and their checkpoints: sanitize -> judge -> score.

:mod:`sanitize` (the model under test, ``sanitized.jsonl``), :mod:`judging` (the judge stage, ``judged.jsonl`` via
:mod:`checkpoint`), :mod:`run` (scoring and writing results), :mod:`predictions` (importing outputs made
elsewhere: our JSONL, lm-eval samples).

May import every lower layer (data, tasks, adapters, engine, protocol, results, interop); never the CLI.
"""
