"""Abbreviations read from the books' own definitions: the long form found, the pharmacology
book's sense preferred, and an item spelled out only where it abbreviates."""

from medground.corpus.abbreviations import expand, mine, singular

TEXTS = [
    ("pharmacology-for-nurses/m1", "Do not give it before coronary artery bypass graft (CABG) surgery. "
                                   "Tricyclic antidepressants (TCAs) raise the risk."),
    ("anatomy-physiology-2e/m2", "The tricarboxylic acid cycle (TCA) runs in mitochondria. "
                                 "The tricarboxylic acid cycle (TCA) is also called the Krebs cycle."),
    ("microbiology/m3", "Acetylcholinesterase (AChE) breaks down acetylcholine. Nonsteroidal "
                        "anti-inflammatory drugs (NSAIDs) and the (WHO) list."),
]


def test_mined_long_forms():
    lexicon = mine(TEXTS)
    assert lexicon["CABG"] == "coronary artery bypass graft"
    assert lexicon["AChE"] == "acetylcholinesterase"
    assert lexicon["NSAID"] == "nonsteroidal anti-inflammatory drug"  # the plural's long form, singular
    # defined twice in anatomy, once in pharmacology: the medicine database reads the pharmacology book
    assert lexicon["TCA"] == "tricyclic antidepressant"
    assert "WHO" not in lexicon  # no words before it spell it


def test_expand_spells_out_only_what_it_knows_and_what_is_not_spelled_already():
    lexicon = mine(TEXTS)
    assert expand("CABG surgery", lexicon) == "CABG (coronary artery bypass graft) surgery"
    assert expand("NSAIDs", lexicon) == "NSAIDs (nonsteroidal anti-inflammatory drug)"
    assert expand("Nonsteroidal anti-inflammatory drugs (NSAIDs)", lexicon) is None
    assert expand("Hypertension", lexicon) is None and expand("ACE inhibitors", lexicon) is None
    assert singular("NSAIDs") == "NSAID" and singular("AChE") == "AChE" and singular("Os") == "Os"
