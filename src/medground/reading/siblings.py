"""A patient's compound that names a different thing of the same kind as a record's item.

The reader matches the patient's short phrases, single words included, to the items of a record.
A word the patient said as the head of a compound can then meet an item with the same head and
another modifier: "cranberry juice" gives the phrase "juice", which MiniLM puts at 0.70 from
warfarin's "Grapefruit juice"; "chest pain" gives "pain", near atorvastatin's "myalgia" through its
plain name "muscle pain". The patient named something else of one kind. English puts a compound's
head last, so the test is grammar, not a word list: a pair of adjacent content words of the
patient's (no stop word between) whose last word is the last word of the item or of one of the
item's plain names, while the modifiers differ and are of one kind ("cranberry" / "grapefruit", "chest" / "muscle":
near in meaning, where a verb or degree word before the head — "got glaucoma", "deep muscle" —
is not).
A pair that is a kind of the item ("dry cough" → "Cough": the item has no modifier) or the same
words ("muscle pain") is no sibling; a near-synonym ("stomach ulcer" ↔ "Gastric ulcer", 0.88) is
kept by the reader's similarity cap (``ConsultReplySettings.sibling_until``), not here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from medground.reading.consult_text import WORD, clause_words, stop_words

MAX_ITEM_WORDS = 4  # a named thing ("Grapefruit juice", "Orthostatic hypotension"), not a sentence


def _norm(word: str) -> str:
    w = word.lower().strip("'-")
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def _content(words: Iterable[str]) -> list[str]:
    stop = stop_words()
    return [_norm(w) for w in words if len(w) > 2 and w.lower() not in stop]


def compounds(turn: str, exclude: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(modifier, head), lower-cased, of adjacent content words of the patient's turn, within one
    clause and with no stop word between; ``exclude``: the named drugs' names (no modifier or head)."""
    stop = stop_words()
    drop = {_norm(w) for name in exclude for w in WORD.findall(name)}
    out: list[tuple[str, str]] = []
    for words in clause_words(turn):
        for a, b in zip(words, words[1:]):
            if any(len(w) <= 2 or w.lower() in stop or _norm(w) in drop for w in (a, b)):
                continue
            out.append((a.lower(), b.lower()))
    return list(dict.fromkeys(out))


# Adverb particles of English phrasal verbs: "coughing up blood" is no cough, "throwing up bile"
# no vomiting of the ordinary kind — grammar, like the auxiliaries of consult_text.py.
PARTICLES = frozenset({"up", "out", "down", "off"})


# Determiners and quantifiers between a verb and its object ("drinks a lot of coffee", "eat some
# grapefruit"): closed-class grammar words.
DETERMINERS = frozenset({"a", "an", "the", "some", "any", "lot", "lots", "of", "my", "his", "her", "their",
                         "your", "our", "this", "that", "these", "those", "much", "many", "little", "bit"})


# Nouns of one who takes something in, or of the taking: the word before them is what is taken.
TAKERS = frozenset("drinker drinkers eater eaters user users smoker smokers consumer consumers lover lovers "
                   "addict addicts intake consumption habit".split())


def modifiers_only(turn: str, exclude: Sequence[str] = ()) -> set[str]:
    """Words of the turn (lower-cased) said only before another content word (a compound's
    modifier, or a phrasal verb's verb before its object: "coughing up blood"), never as a head or
    alone: "drink" and "orange" in "drink orange juice". Alone, such a word names no thing the
    patient asked about ("drink" is near "Alcohol", but the patient drinks orange juice)."""
    stop = stop_words()
    drop = {_norm(w) for name in exclude for w in WORD.findall(name)}
    modifier, head = set(), set()
    for words in clause_words(turn):
        content = [len(w) > 2 and w.lower() not in stop and _norm(w) not in drop for w in words]
        for i, w in enumerate(words):
            if not content[i]:
                continue
            then = i + 1
            if then < len(words) and words[then].lower() in PARTICLES:
                then += 1
            while then < len(words) and words[then].lower() in DETERMINERS:
                then += 1  # "drinks a lot of coffee": the verb's object, past its determiners
            # "a big coffee drinker", "my salt intake": the word before one who takes something
            # in (or the taking) names what is taken, as its object would
            takes = then < len(words) and words[then].lower() in TAKERS
            (modifier if then < len(words) and content[then] and not takes else head).add(w.lower())
    return modifier - head


def item_heads(name: str) -> tuple[str, frozenset[str]] | None:
    """(head, modifiers) of a short item or plain name that is a compound: "Grapefruit juice
    (large amounts)" → ("juice", {"grapefruit"}). None when it has no modifier, is not short, or
    holds a stop word ("weakness of the skeletal muscles": its head is not its last word)."""
    words = WORD.findall(name.split(" (", 1)[0])
    content = _content(words)
    if not 2 <= len(content) <= MAX_ITEM_WORDS or len(content) != len(words):
        return None
    return content[-1], frozenset(content[:-1])


def sibling_candidates(pairs: Sequence[tuple[str, str]], names: Sequence[str]) -> list[tuple[str, str, frozenset[str]]]:
    """(the patient's compound, its modifier, the name's modifiers) for each compound that shares
    its head with one of an item's ``names`` (the item and its plain names) under another
    modifier. None when a compound's words are all in one of the names: it is that name. Whether
    the two modifiers are of one kind ("cranberry"/"grapefruit", not "got"/"uncontrolled") is the
    reader's test, in meaning."""
    parsed = [(set(_content(WORD.findall(n))), item_heads(n)) for n in names]
    normed = [(_norm(m), _norm(h), f"{m} {h}") for m, h in pairs]
    if any({m, h} <= words for m, h, _ in normed for words, _ in parsed):
        return []
    out = []
    for modifier, head, said in normed:
        for _, heads in parsed:
            if heads is not None and heads[0] == head and modifier not in heads[1]:
                out.append((said, modifier, heads[1]))
    return out


def sibling(pairs: Sequence[tuple[str, str]], names: Sequence[str], embedder, kin: float) -> str:
    """The patient's compound naming another thing of the kind of the item ``names`` name, or "":
    a :func:`sibling_candidates` whose two modifiers ``embedder`` puts at least ``kin`` apart in
    meaning (of one kind: "cranberry" / "grapefruit", not "got" / "uncontrolled")."""
    for said, modifier, theirs in sibling_candidates(pairs, names):
        vecs = embedder.encode_queries([modifier, *sorted(theirs)])
        if float((vecs[1:] @ vecs[0]).max()) >= kin:
            return said
    return ""
