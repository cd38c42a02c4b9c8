"""The patient's last question reframed for the attribute typer when it only points back at what
the turn said before it. The typer learned from questions that say what they ask; "Is that the
lisinopril?" or "Does that rule it out?" say it only through "that". No model: text in, text out."""

from __future__ import annotations

import re
from collections.abc import Sequence

from medground.corpus.sentences import questions, sentences_of
from medground.reading.consult_settings import ConsultReplySettings
from medground.reading.consult_text import (AUXILIARIES, REFERENTS, WORD, medicine_mentions, name_words, stop_words,
                                            without_purpose)

# What may stand in a question that only ties what the patient described to the medicine as its
# cause ("Is that from the pill?", "Could the medicine be causing that?", "Is it the Norvasc?"):
# pronouns, determiners, the verbs and prepositions of causing, a few hedges. Grammar, not a
# list fitted to any set; a content word left over ("Is that the same as amlodipine?", "Is that
# ok with it?") means the question asks something of its own.
_POINTERS = frozenset("that this it these those".split())
_DEFINITE = frozenset("the my your his her their our this that these those".split())
_TIES = frozenset("the a my your his her their our from because of due to down caused by cause causes causing "
                  "doing making something be being been just maybe possibly really actually all "
                  "side effect effects".split())


def _names_its_kind(word: str, kinds: Sequence[str]) -> bool:
    """"steroid" of Corticosteroid, "statin" of atorvastatin: the end of a word of the drug's
    class or generic name, five letters at least (a patient's "Is it the steroid?")."""
    return len(word) >= 5 and any(k.endswith(word) or k.endswith(word.rstrip("s"))
                                  for kind in kinds for k in WORD.findall(kind.lower()))


# "which one is doing this?", "Which of these would do that?", "could one of my tablets be doing
# it?": the patient asks which of their medicines is behind what they described — the medicine
# named by a choice among them rather than by a name. Grammar, no list fitted to a set.
_OWNERS = _DEFINITE - _POINTERS  # the, my, your, … ("which of these" is a group, not an owner)
_GROUP = frozenset("these them those".split())
_COUNTS = frozenset("two three both".split())


def which_medicine(clause: str) -> set[str]:
    """The words of ``clause`` that name a medicine by a choice among the patient's ("which one",
    "which of these", "one of my (blood pressure) pills", "which of the two"); empty when it names
    none so ("one of my friends", "which of the doctors")."""
    words = [w.lower() for w in WORD.findall(clause)]
    found: set[str] = set()
    for k, w in enumerate(words):
        if w not in ("which", "one"):
            continue
        nxt = words[k + 1] if k + 1 < len(words) else ""
        if w == "which" and (nxt in ("one", "ones") or nxt in REFERENTS):
            found.update(words[k:k + 2])
        elif nxt == "of" and k + 2 < len(words):
            after = words[k + 2]
            if after in _GROUP:
                found.update(words[k:k + 3])
            elif after in _OWNERS:
                # the run after the owner ends at its word for a medicine, or a count ("the two")
                run = words[k + 3:k + 6]
                end = next((j for j in range(len(run) - 1, -1, -1) if run[j] in REFERENTS
                            or (j == 0 and run[j] in _COUNTS)), None)
                if end is not None:
                    found.update(words[k:k + 4 + end])
    return found


def last_question(turn: str) -> tuple[str, str] | None:
    """(what the turn says before its last question, that question's last clause), or None when
    the turn asks nothing or says nothing before it. Not a sentence after it: "Is that the
    metoprolol? The bottle says Toprol XL …" asks which drug it is (a helper's case; "Is it the
    statin? My muscles hurt …" was the gain, and lost)."""
    sentences = sentences_of(turn)
    asked = [k for k, x in enumerate(sentences) if x.endswith("?")]
    if not asked and sentences and (first := WORD.findall(sentences[-1])[:1]) \
            and (first[0].lower() in AUXILIARIES or which_medicine(sentences[-1])):
        # a question without its mark: "… could it be the meds", "which one is doing this"
        asked = [len(sentences) - 1]
    elif asked and asked[-1] < len(sentences) - 1 and which_medicine(sentences[-1]) \
            and WORD.findall(sentences[-1])[0].lower() in AUXILIARIES | {"which"}:
        asked.append(len(sentences) - 1)  # "… came out stained?? which one is doing this"
    if not asked:
        return None
    k = asked[-1]
    clauses = [c for c in re.split(r"[,;:\u2014]|\s-\s", sentences[k]) if WORD.search(c)]
    before = " ".join(sentences[:k] + ([", ".join(clauses[:-1])] if len(clauses) > 1 else [])).strip()
    if not before or not clauses:
        return None
    return before, clauses[-1]


def attribution_question(turn: str, names: Sequence[str] = (), kinds: Sequence[str] = ()) -> str | None:
    """When the turn's question only asks whether the medicine is behind what the turn said
    before it, that question in full: "My ankles are swollen. Is that the lisinopril?" →
    "Can this medicine cause this: My ankles are swollen?". The typer learned from questions
    that say what they ask and reads the bare "Is that the lisinopril?" as one about the drug's
    class, "everything looks blue. Is that from the pill?" as one about the pill's colour.
    ``names``: the named drugs' names; ``kinds``: the subject's class and generic name, whose word
    ends may name it ("Is it the steroid?"). A medicine named by what it is for ("Is it the
    cholesterol pill?") is named too. None when the question says something of its own."""
    split = last_question(turn)
    if split is None:
        return None
    before, asking = split
    named = name_words(names)
    every = WORD.findall(asking)
    describing = {j for _, before in medicine_mentions(every, stop_words()) for j in before}
    words = [w.lower() for j, w in enumerate(every) if j not in describing]
    # "Is it the steroid?" names the medicine; "Is that a statin?" asks its class
    medicine = named | REFERENTS | which_medicine(asking) | {
        w for j, w in enumerate(words) if j and words[j - 1] in _DEFINITE and _names_its_kind(w, kinds)}
    if not (_POINTERS & set(words)) or not (medicine & set(words)):
        return None
    if any(w not in _POINTERS | _TIES | AUXILIARIES | medicine for w in words):
        return None
    described = sentences_of(before)[-1].rstrip(" .!?,;")
    return f"Can this medicine cause this: {described}?"


# What may stand in a question that only asks whether what the patient said before it bears on
# taking the medicine ("I had a fit ten years ago. Does that matter?", "… Does that rule it out?",
# "Would that stop me using it?"): the pointer, the predicates of consequence and their fillers.
# Grammar, not a list fitted to any set. "ok", "fine", "safe" are left out: after a dose ("I take
# two at night. Is that ok?") they ask about the dose, and the typer reads the turn whole then; so are
# "a problem", "a concern", "an issue": after a new symptom or a dose they ask whether it is the
# medicine's doing or too much ("My hands have been shaking since last week. Is that a concern?";
# "I took 8 of them yesterday. Is that a problem?" — a helper's adversarial probes, session 33).
_BEARING = frozenset("matter matters rule rules out stop stops prevent prevents mean means difference affect "
                     "affects change changes".split())
_BEARING_FILLERS = frozenset("a an any anything me i you him her them us my his their still from to with "
                             "use using take taking have having on the at all can't cannot won't don't "
                             "doesn't shouldn't not".split())


def bearing_question(turn: str, names: Sequence[str] = ()) -> str | None:
    """When the turn's question only asks whether what it said before bears on the medicine, the
    question in full: "I had one fit years ago. Does that matter?" → "Is this medicine safe with
    this: I had one fit years ago?" — which the typer reads as a condition (contraindications) or a
    substance (interactions) by what was said. The bare "Does that matter?" reads as anything.
    None when the question names something of its own ("Does that matter with the antibiotic?")."""
    split = last_question(turn)
    if split is None:
        return None
    before, asking = split
    words = [w.lower() for w in WORD.findall(asking)]
    medicine = name_words(names) | REFERENTS
    if not ({"that", "this", "those"} & set(words)) or not (_BEARING & set(words)):
        return None
    if any(w not in _POINTERS | _BEARING | _BEARING_FILLERS | AUXILIARIES | medicine for w in words):
        return None
    # "that" is what was said of something else: "… a spinal anaesthetic. I take Xarelto for my AF.
    # Does that matter?" points past the sentence naming a medicine. With nothing else said, "that"
    # is the medicine ("My GP wants me to take ibuprofen. Does that matter?" on lithium): a question
    # about two medicines, left to the typer and the two-drug reading.
    named = name_words(names)
    about = [x for x in sentences_of(before) if not named & {w.lower() for w in WORD.findall(x)}]
    if not about:
        return None
    return f"Is this medicine safe with this: {about[-1].rstrip(' .!?,;')}?"


# Words that judge what was said without saying anything of their own ("Is that ok?", "Is that a
# problem?"): for what the question is about, they point back as "that" does.
_JUDGING = frozenset("ok okay fine alright safe problem problems concern issue worry worried bad normal "
                     "wrong right good".split())


_SAYS_NOTHING = _POINTERS | _TIES | AUXILIARIES | _BEARING | _BEARING_FILLERS | _JUDGING | REFERENTS


def asking_part(turn: str, names: Sequence[str] = ()) -> str:
    """What the turn's question is about, in its words: its question sentences; where they say
    nothing of their own ("I'm a big coffee drinker. Could that be it?"), the sentence before them
    too. "I had some cheese at lunch. What's the most Nardil I can take?" asks about the dose."""
    sentences = sentences_of(turn)
    asked = questions(turn)
    named = name_words(names)
    if any((w := x.lower()) not in _SAYS_NOTHING and w not in named and w not in stop_words()
           for q in asked for x in WORD.findall(q)):
        return " ".join(asked)
    first = sentences.index(asked[0]) if asked and asked[0] in sentences else len(sentences)
    return " ".join(sentences[max(0, first - 1):])


def typer_texts(turn: str, names: Sequence[str], kinds: Sequence[str], s: ConsultReplySettings) -> list[str]:
    """What the typer reads of the last turn, as the settings say: a reframed question when the
    turn only points back at what it said, else the turn, its question sentences, or both (whose
    readings are averaged)."""
    if s.typer_skips_purpose:
        turn = without_purpose(turn, names)
    if s.typer_attribution and (full := attribution_question(turn, names, kinds)) is not None:
        return [full]
    if s.typer_bearing and (full := bearing_question(turn, names)) is not None:
        return [full]
    asked = " ".join(questions(turn))
    if s.typer_reads == "turn" or not asked or asked == turn.strip():
        return [turn]
    return [asked] if s.typer_reads == "question" else [turn, asked]


# A question about taking two medicines at once says so in words of its own ("Should I be worried
# taking both?", "Is it OK to have them together?"): a drug of the earlier turns is then its second
# drug, whatever kind of entry the typer reads. Grammar of co-administration, no drug or item word.
_TAKING = r"(?:take|takes|taking|took|taken|have|having|use|using|on|with|mix|mixing|combine|combining)"
_MEDICINE_NOUN = r"(?:of\b|together\b|at\b|medicines?\b|meds\b|drugs?\b|tablets\b|pills\b|[?.!,]|$)"
_BOTH = re.compile(
    # "taking both??", "on both", "take both of them" — not "take both doses", "get both", "both knees"
    rf"\b{_TAKING}\s+(?:them\s+|these\s+|those\s+)?both\s*{_MEDICINE_NOUN}"
    # "have them together" — not "taken together with food"
    rf"|\b{_TAKING}\s+(?:\w+\s+){{0,2}}together\b(?!\s+with\s+(?:food|a\s+meal|meals|milk|water|juice|breakfast|"
    rf"lunch|dinner|tea|coffee))"
    # "at the same time" — not "at the same time of day / every day"
    r"|\bat\s+the\s+same\s+time\b(?!\s+(?:of|each|every)\b)"
    r"|\balongside\b|\bwith\s+each\s+other\b|\bon\s+top\s+of\s+(?:it|that|them|this)\b"
    r"|\b(?:mix|mixing|combine|combining)\s+(?:them|these|those|the\s+two)\b",
    re.IGNORECASE)


def asks_about_both(turn: str) -> bool:
    """The turn's question asks about taking two medicines at once ("… taking both??")."""
    # two doses of one medicine are no two medicines ("take both doses together")
    return any("dose" not in m.group(0).lower() for q in questions(turn) for m in _BOTH.finditer(q))
