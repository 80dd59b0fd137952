"""Task definitions: the task YAML schema (:mod:`config`) and discovery, ``include:``, groups and tags (:mod:`registry`),
the task families (:mod:`family`) and the one interface between the runner and a family's scorer (:mod:`scoring`).

The YAML files themselves live in the top-level ``tasks/`` folder (shipped in the wheel as ``privasis_bench/_tasks``).

May import: ``privasis_bench.errors`` only.
"""
