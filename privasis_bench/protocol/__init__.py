"""The Privasis-Sanitization rules as pure functions (``shared/spec/protocol.md``).

:mod:`testee` (the request to the model under test and its post-processing, §2), :mod:`matching` (``value_in``,
§3), :mod:`judge_prompts` (judge templates and answer parsing), :mod:`judge` (the three leak tiers and retention,
§3-4, asked through a batch callable), :mod:`verdicts` (what was decided per attribute), :mod:`presets` (the
empty-output and inclusion-text rules, and the ``paper`` preset of every comparability setting) and
:mod:`metrics` (the Table-4 metrics and bootstrap CIs, §5). Beyond Table 4 (never folded into its metrics):
:mod:`near_verbatim` (values carried in a slightly altered form) and :mod:`linkage` (re-identification of sanitized outputs) with
:mod:`linkage_support` (what a linked output still tells about the targets). The protocol as the family's scorer:
:mod:`scorer` (``PrivasisScorer.evaluate``, on the runner's record flow), :mod:`judging` (which judge, and the judge
step with its checkpoint ``judged.jsonl``, :mod:`checkpoint`) and :mod:`sink` (samples rows and metric tallies).

May import: ``privasis_bench.errors``, ``data``, ``tasks`` and the adapter contract (``adapters.base``).
Never the engine, the pipeline, results or the CLI: the runner's services reach the scorer through the job it is given.
"""
