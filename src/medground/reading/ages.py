"""A child's age the patient gives, against an age limit a record's item states: "my 9 year old"
is one of "Children under age 12 (extended-release preparations)"; "she's 6 months" is not one of
"Infants younger than 2 months of age". An embedding cannot compare numbers; this reads them."""

from __future__ import annotations

import re

_UNIT = r"(?P<unit>years?|yrs?|months?|mos?|weeks?|wks?)"
# "9 year old", "9-year-old", "18 months old", "a 6 yr old", "aged 4", "age 10"
_AGED = re.compile(rf"\b(?P<n>\d{{1,2}})(?:\s*|-){_UNIT}(?:\s*|-)old\b|\bage(?:d)?\s+(?P<m>\d{{1,2}})\b",
                   re.IGNORECASE)
# "my daughter is 6", "he's 4", "she just turned 10": a child word in the same sentence says whose age
_IS = re.compile(r"(?:\bis|'s|\bturned)\s+(?P<n>\d{1,2})(?!\s*(?:mg|mcg|ml|g|kg|lb|lbs|%|"
                 r"tablets?|pills?|capsules?|times?|hours?|hrs?|days?|doses?|puffs?|drops?|units?|pm|am|o'clock)\b)"
                 rf"(?:\s*{_UNIT})?", re.IGNORECASE)
_CHILD = re.compile(r"\b(?:son|daughter|child|children|kid|kids|boy|girl|baby|toddler|infant|grandson|"
                    r"granddaughter|little one|niece|nephew)\b", re.IGNORECASE)
# "Children under age 12", "Children <12 years", "younger than 2 months of age", "below the age of 6 months"
_LIMIT = re.compile(r"(?:under|younger than|less than|below|<)\s*(?:the\s+)?(?:age\s+(?:of\s+)?)?(?P<n>\d{1,2})"
                    rf"(?:\s*{_UNIT})?", re.IGNORECASE)
_WHO = re.compile(r"child|pediatric|paediatric|infant|age|year|client|patient", re.IGNORECASE)


def _years(n: str, unit: str | None) -> float:
    u = (unit or "y").lower()
    return int(n) / (12 if u.startswith("mo") else 52 if u.startswith("w") else 1)


def _said(n: str, unit: str | None) -> str:
    u = (unit or "y").lower()
    article = "an" if n.startswith("8") or int(n) in (11, 18) else "a"
    return f"{article} {int(n)}-{'month' if u.startswith('mo') else 'week' if u.startswith('w') else 'year'}-old"


def child_age(text: str) -> tuple[float, str] | None:
    """(the age in years of the child the text speaks of, the words that give it), or None."""
    if m := _AGED.search(text):
        n = m.group("n") or m.group("m")
        return _years(n, m.group("unit")), _said(n, m.group("unit"))
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        if _CHILD.search(sentence) and (m := _IS.search(sentence)):
            return _years(m.group("n"), m.group("unit")), _said(m.group("n"), m.group("unit"))
    return None


def age_limit(item: str) -> float | None:
    """The age in years under which the item applies ("Children under age 12 …"), or None."""
    m = _LIMIT.search(item)
    if m is None or not _WHO.search(item):
        return None
    return _years(m.group("n"), m.group("unit"))


def names_the_childs_age(item: str, age: float) -> bool:
    """The item's age limit takes in the child's age."""
    limit = age_limit(item)
    return limit is not None and age < limit
