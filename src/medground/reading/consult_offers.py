"""What an abstention for want of an entry offers instead: the textbook's sentence on the drug
(reading/book_mentions.py) and what the book's prototype of its class lists
(reading/class_prototype.py), each cited as what it is, never as the drug's entry."""

from __future__ import annotations

from collections.abc import Sequence

from medground.drug_schema import AttributeType, Drug
from medground.reading.book_mentions import book_reply
from medground.reading.class_prototype import prototype_reply
from medground.reading.consult_sentences import NO_ENTRY_TAIL
from medground.schema import Citation


def offered_instead(reader, turns: Sequence[str], asked_of: Sequence[Drug], asked: AttributeType,
                    text: str) -> tuple[str, list[Citation]]:
    """``text`` (the abstention) with what the textbook and the class prototype say of the drugs
    asked about (``asked_of``, the subject first), before the closing line; their citations."""
    s = reader.settings
    offers: list[tuple[str, Citation]] = []
    if s.book_sentences and reader.book_mentions is not None:
        found = book_reply(reader.book_mentions(), reader.embedder, reader.book_check,
                           turns[-1][: s.item_check_chars] if turns else "", asked_of,
                           candidates=s.book_candidates, answers_min=s.book_answers_min, floor=s.item_floor,
                           near=s.hedge_at)
        offers += [found] if found else []
    if s.class_prototype and (found := prototype_reply(reader, turns, asked_of, asked, len(offers) + 1)):
        offers.append(found)
    if not offers:
        return text, []
    said = " ".join(sentence for sentence, _ in offers)
    return f"{text.removesuffix(NO_ENTRY_TAIL)} {said}{NO_ENTRY_TAIL}", [c for _, c in offers]
