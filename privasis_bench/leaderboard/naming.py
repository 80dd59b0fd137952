"""Entry names: the one-to-one, reversible name <-> folder mapping, and the folded form names are compared in.

* ``ORG/MODEL`` lives in ``ORG__MODEL`` (``:`` and ``+`` of the model part written ``%3A``, ``%2B``; a part may not
  contain ``__`` nor start or end with ``_``), so no two names share a folder and :func:`name_of_folder` inverts it.
* Two names are one entry when their :func:`folded` forms are equal: NFKC, punctuation removed within each part, case
  folded, then UTS #39's confusable skeleton restricted to ASCII (names are ASCII by their pattern; wider look-alikes
  cannot pass it, and NFKC folds fullwidth forms first), so ``Org/Model-1``, ``org/model_1`` and ``org/model-l`` are
  one name. A library for the full confusables table was not worth a dependency here.
"""

from __future__ import annotations

import re
import unicodedata

from privasis_bench.errors import PrivasisError

_NAME = re.compile(r"^[A-Za-z0-9._-]+/[A-Za-z0-9._:+-]+$")
_ESCAPES = ((":", "%3A"), ("+", "%2B"))
_OWNER = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")


class SubmissionError(PrivasisError):
    """A run cannot be submitted as it is."""


class EntryNameError(SubmissionError):
    """An entry name that cannot be used (bad characters, or an ambiguous folder)."""


def check_name(name: str) -> tuple[str, str]:
    """(org, model) of a valid ``ORG/MODEL`` name; raises with one line saying what is allowed."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise EntryNameError(f"--name {str(name)[:80]!r}: expected ORG/MODEL (letters, digits, . _ - ; the model part may "
                         "also use : +)")
    org, model = name.split("/")
    for part in (org, model):
        if "__" in part or part.startswith("_") or part.endswith("_"):
            raise EntryNameError(f"--name {name!r}: a part may not contain '__' nor start or end with '_' (the folder "
                             "joins the parts with '__')")
    return org, model


def submission_dir_name(name: str) -> str:
    """``org/model`` -> ``org__model`` (``:`` -> ``%3A``, ``+`` -> ``%2B``): the folder under ``submissions/``."""
    org, model = check_name(name)
    for char, escaped in _ESCAPES:
        model = model.replace(char, escaped)
    return f"{org}__{model}"


def name_of_folder(folder: str) -> str | None:
    """The name whose folder is ``folder`` (the inverse of :func:`submission_dir_name`), or None."""
    if folder.count("__") < 1:
        return None
    org, _, model = folder.partition("__")
    for char, escaped in _ESCAPES:
        model = model.replace(escaped, char)
    name = f"{org}/{model}"
    try:
        return name if submission_dir_name(name) == folder else None
    except PrivasisError:
        return None


#: UTS #39 confusables within ASCII, on case-folded text (multi-letter look-alikes first). Case folding first
#: makes ``I`` an ``i``, so ``i``, ``l``, ``1`` (and ``I``, ``L``) all fold to ``l``; likewise ``8``/``B`` and
#: ``6``/``b`` fold to ``b``, ``5``/``S`` to ``s``, ``2``/``Z`` to ``z`` (digits that pass for letters in a name).
_SKELETON = (("rn", "m"), ("vv", "w"), ("cl", "d"), ("0", "o"), ("1", "l"), ("i", "l"),
             ("8", "b"), ("6", "b"), ("5", "s"), ("2", "z"))


def skeleton(text: str) -> str:
    """``text`` with every ASCII look-alike replaced by its prototype (see the module docstring)."""
    for confusable, prototype in _SKELETON:
        text = text.replace(confusable, prototype)
    return text


def _fold(part: str) -> str:
    text = unicodedata.normalize("NFKC", part)
    text = "".join(c for c in text if not unicodedata.category(c).startswith(("P", "S", "Z")))
    return skeleton(text.casefold())


def folded(name: str) -> str:
    """The form two names are compared in: NFKC, punctuation removed within each part, confusable skeleton, case
    folded (see the module docstring)."""
    org, _, model = str(name).partition("/")
    return f"{_fold(org)}/{_fold(model)}"


def owner_of(submission: dict) -> str | None:
    """The owner a submission.json states (``owner``; the name's organisation for entries that predate it)."""
    owner = submission.get("owner")
    if owner is None:
        return str(submission.get("name") or "").split("/")[0] or None
    return owner if isinstance(owner, str) else None


def check_owner(owner: str | None) -> None:
    """Refuse an owner that is not a plain handle (letters, digits, hyphens; 1-39 characters, as GitHub's)."""
    if owner is not None and not _OWNER.match(owner):
        raise EntryNameError(f"--owner {str(owner)[:80]!r}: expected a handle of letters, digits and '-' (1-39 "
                             "characters, starting with a letter or digit)")
