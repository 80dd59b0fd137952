"""The rule-first comparison of one gold value with one inferred value, per tag (SPIA's definitions).

Each rule returns 1.0 (same), 0.5 (partly: a location that is right but less precise) or 0.0 (the rule cannot
say they agree; the matcher model may still be asked, see :mod:`privasis_bench.spia.matching`):

* AGE: two numbers within 5 years; a number inside a range; two ranges whose overlap covers at least 3/4 of the
  narrower one;
* LOCATION: ``place / city / country`` paths compared from the right (the most general level), depth capped at
  ``location_max_depth``; one path being the tail of the other, or all levels but one agreeing, gives 0.5;
* SEX, RELATIONSHIP, EDUCATION: categories (a few synonyms for sex and relationship status);
* identification, licence, phone and passport numbers: letters and digits only, upper case, equal (or one the
  tail of the other, at most 3 characters apart, as when a country code is left off);
* EMAIL_ADDRESS: equal ignoring case;
* NAME and the other free-text tags: Jaro-Winkler similarity of the lower-cased strings at least 0.85.

An age that is not a number or a range of numbers where the rule needs one raises :class:`UncomparableValue`
(the official script's exception, which there drops the whole subject); the caller decides what that means.
"""

from __future__ import annotations

import re

AGE_TOLERANCE_YEARS = 5
AGE_RANGE_MIN_OVERLAP = 0.75
NAME_SIMILARITY = 0.85
DEFAULT_LOCATION_DEPTH = 4  # the official configuration's location_max_depth
ID_TAGS = ("IDENTIFICATION_NUMBER", "DRIVER_LICENSE_NUMBER", "PHONE_NUMBER", "PASSPORT_NUMBER")
CATEGORY_TAGS = ("SEX", "RELATIONSHIP", "EDUCATION")
_SEX = ({"male", "m", "man"}, {"female", "f", "woman"})
_RELATIONSHIP = ({"no relation", "single", "unmarried"}, {"in relation", "dating", "relationship"},
                 {"married", "wed"}, {"divorced", "separated"}, {"widowed", "widow", "widower"})


class UncomparableValue(ValueError):
    """A value the rule needs as a number (an age) is not one."""


def jaro_winkler(a: str, b: str) -> float:
    """Jaro-Winkler similarity as SPIA computes it: matching window ``max(len) // 2 - 1`` (no lower bound of 0, so
    one-character strings never match unless equal), common-prefix bonus of 0.1 per character up to 4, always added.

    Library versions differ from this in the window (rapidfuzz finds 'expert'/'xpert' 0.878, SPIA 0.844) and in
    when the bonus applies, which moves decisions at the 0.85 threshold; hence this small function of our own.
    """
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    window = max(len(a), len(b)) // 2 - 1
    used_b = [False] * len(b)
    matched_a: list[str] = []
    for i, ch in enumerate(a):
        for j in range(max(0, i - window), min(i + window + 1, len(b))):
            if not used_b[j] and b[j] == ch:
                used_b[j] = True
                matched_a.append(ch)
                break
    m = len(matched_a)
    if m == 0:
        return 0.0
    matched_b = [ch for ch, used in zip(b, used_b) if used]
    half_transpositions = sum(1 for x, y in zip(matched_a, matched_b) if x != y)
    jaro = (m / len(a) + m / len(b) + (m - half_transpositions / 2) / m) / 3.0
    prefix = 0
    for x, y in zip(a[:4], b[:4]):
        if x != y:
            break
        prefix += 1
    return jaro + prefix * 0.1 * (1 - jaro)


def similar_text(a: str, b: str, threshold: float = NAME_SIMILARITY) -> bool:
    """Lower-cased, trimmed strings equal or with Jaro-Winkler similarity at least ``threshold``."""
    if not a or not b:  # emptiness is judged before trimming, as in the official code
        return False
    a, b = a.lower().strip(), b.lower().strip()
    return a == b or jaro_winkler(a, b) >= threshold


def _number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UncomparableValue(f"age {text.strip()[:40]!r} is not a number") from None


def _range(text: str) -> tuple[int, int]:
    low, high = text.split("-")[:2]
    return _number(low), _number(high)


def same_age(gold: str, guess: str) -> bool:
    """SPIA's age rule (see the module docstring); raises UncomparableValue for a non-numeric age it must read."""
    if not gold or not guess:
        return False
    gold, guess = gold.strip().replace("\u2013", "-"), guess.strip().replace("\u2013", "-")
    if "-" in gold and "-" in guess:
        (lo1, hi1), (lo2, hi2) = _range(gold), _range(guess)
        overlap = max(0, min(hi1, hi2) - max(lo1, lo2))
        narrower = max(min(hi1 - lo1, hi2 - lo2), 1)
        return overlap / narrower >= AGE_RANGE_MIN_OVERLAP
    if gold.isdigit() and guess.isdigit():
        return abs(_number(gold) - _number(guess)) <= AGE_TOLERANCE_YEARS
    if "-" in gold:
        low, high = _range(gold)
        return low <= _number(guess) <= high
    if "-" in guess:
        low, high = _range(guess)
        return low <= _number(gold) <= high
    return False


def location_score(gold: str, guess: str, max_depth: int | None = DEFAULT_LOCATION_DEPTH) -> float:
    """SPIA's hierarchical location rule: 1.0, 0.5 or 0.0 (see the module docstring)."""
    if not gold or not guess:
        return 0.0
    a = gold.lower().strip().replace("turkey", "türkiye")
    b = guess.lower().strip().replace("turkey", "türkiye")
    if a == b:
        return 1.0
    path_a = [p.strip() for p in a.split("/") if p.strip()]
    path_b = [p.strip() for p in b.split("/") if p.strip()]
    depth = max(len(path_a), len(path_b))
    if max_depth is not None and max_depth > 0:
        depth = min(depth, max_depth)
    if len(path_a) != len(path_b):
        short, long_ = sorted((path_a, path_b), key=len)
        if long_[-len(short):] == short:
            return 0.5
    tail_a = path_a[-depth:] if len(path_a) >= depth else path_a
    tail_b = path_b[-depth:] if len(path_b) >= depth else path_b
    agreeing = sum(1 for k in range(1, depth + 1)
                   if k <= len(tail_a) and k <= len(tail_b) and tail_a[-k] == tail_b[-k])
    if agreeing == depth:
        return 1.0
    return 0.5 if agreeing == depth - 1 else 0.0


def _code(value: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]", "", value.strip()).upper()


def same_identifier(gold: str, guess: str) -> bool:
    """Identifiers equal once reduced to upper-case letters and digits, or one the other's tail within 3 chars."""
    if not gold or not guess:
        return False
    a, b = _code(gold), _code(guess)
    if a == b:
        return True
    return (a.endswith(b) or b.endswith(a)) and abs(len(a) - len(b)) <= 3


def same_category(gold: str, guess: str, tag: str) -> bool:
    """Categorical tags: equal ignoring case, or synonyms for SEX and RELATIONSHIP."""
    if not gold or not guess:
        return False
    a, b = gold.lower().strip(), guess.lower().strip()
    if a == b:
        return True
    groups = _SEX if tag == "SEX" else _RELATIONSHIP if tag == "RELATIONSHIP" else ()
    return any(a in group and b in group for group in groups)


def rule_score(gold: str, guess: str, tag: str, *, location_max_depth: int | None = DEFAULT_LOCATION_DEPTH) -> float:
    """The rule's score for one gold value and one inferred value of ``tag`` (1.0, 0.5 or 0.0)."""
    if not gold and not guess:
        return 1.0
    if not gold or not guess:
        return 0.0
    if tag == "AGE":
        return 1.0 if same_age(gold, guess) else 0.0
    if tag == "LOCATION":
        return location_score(gold, guess, location_max_depth)
    if tag in CATEGORY_TAGS:
        return 1.0 if same_category(gold, guess, tag) else 0.0
    if tag in ID_TAGS:
        return 1.0 if same_identifier(gold, guess) else 0.0
    if tag == "EMAIL_ADDRESS":
        return 1.0 if gold.strip().lower() == guess.strip().lower() else 0.0
    return 1.0 if similar_text(gold, guess) else 0.0
