"""Publishing results: ``submit`` a run, ``verify`` submissions trusting nothing, ``build`` the board, ``view`` a run.

It reads finished runs and submissions (results.json, samples.jsonl, submission.json) and the shipped
tasks, and writes static files; it never calls a model, except ``verify --rejudge``, which re-asks the judge
through the engine. May import: results, protocol, data, tasks, adapters, engine, tab, replacement and spia (their
families' recompute).
"""
