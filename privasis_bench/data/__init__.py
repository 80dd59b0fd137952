"""Benchmark records: typed records, row normalization (protocol §1), loading from the hub or local files, stats.

Flow: a task's ``dataset`` section -> :func:`loading.load_records` -> :class:`records.Record` objects (targets,
keep attributes, exclusions) that every later stage reads.

May import: ``privasis_bench.errors`` and ``privasis_bench.tasks`` (the dataset section of a task).
"""
