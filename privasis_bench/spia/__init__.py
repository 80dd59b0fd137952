"""SPIA: subject-level inference of personal attributes (Oh et al., ACL 2026), the next task family's scorer.

An anonymizer rewrites a document; an adversary model infers, for every person in it, 15 personal attributes; a
matcher compares what was inferred with the gold annotation (rules first, a model where the rules say no). The
protection rates CPR and IPR say how much of what the annotators could infer the adversary can no longer infer.

:mod:`records` (documents, subjects, the 15 tag slots), :mod:`loading` (SPIA's JSON Lines, read strictly),
:mod:`rules` (the rule-first comparison per tag), :mod:`matching` (one subject's tags: best pair, matcher
fallback), :mod:`metrics` (CPR, IPR, per-tag CPR, seeded intervals over documents), :mod:`source` (the pinned data file, fetched
and cached, or the user's), :mod:`spans` (TAB-style span recall where SPIA ships span annotations).

May import data, tasks and adapters (request types only), and ``tab/``'s alignment of a rewrite to masked spans (as
``replacement/`` does); never ``protocol/`` or ``replacement/``.
"""
