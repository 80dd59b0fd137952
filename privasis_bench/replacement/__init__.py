"""Replacement quality: the evaluation of the inference-attack-guided sanitization paper (Pilán, Manzanares-Salor,
Sánchez, Lison), beside TAB's detection measures (``scorer: tab_replacement``).

One module per quantity, each function one of the paper's equations: :mod:`information` (IC, TIC, RIC, Eqs. 3-5,
with the corpus-frequency estimator), :mod:`mlm` (IC from a masked language model, alternating masks),
:mod:`similarity` (Eq. 6 and the sentence-embedding models), :mod:`terms` (the text spans of a document),
:mod:`pairs` (span <-> replacement pairs, from the sanitizer's spans or from TAB's alignment), :mod:`tps` (Eq. 7),
:mod:`background` (background knowledge: reading it, and building it from TAB-schema files), :mod:`trir`
(TRIR and the retrieval attacker), :mod:`classifier` (the fine-tuned re-identification classifier),
:mod:`nmi` (clustering agreement), :mod:`scorer` (the span scorer), :mod:`published` (the paper's own numbers,
as published) and :mod:`chart` (the privacy-utility scatter). The board's family (verified recompute, row, scatter)
is :mod:`privasis_bench.leaderboard.families.replacement`, on the shared submit/verify/build path.

May import data, tasks, protocol (the linkage retrieval and its bootstrap) and tab (documents, alignment,
detection measures); nothing below it imports it.
"""
