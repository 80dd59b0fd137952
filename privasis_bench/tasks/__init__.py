"""Task definitions: the task YAML schema (:mod:`config`) and discovery, ``include:``, groups and tags (:mod:`registry`),
and the scorers a task may name (:mod:`scorers`: span scorers are named by module path and imported only on use).

The YAML files themselves live in the top-level ``tasks/`` folder (shipped in the wheel as ``privasis_bench/_tasks``).

May import: ``privasis_bench.errors`` only.
"""
