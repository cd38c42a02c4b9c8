"""The lay ↔ clinical vocabulary mined from consumer-health text: pairs cut by grammar, endings
that point at the term, plain-language words never expanded, the cache keyed by its sources."""

import json

from medground.corpus.lay_vocabulary import LayVocabulary, load_vocabulary, mine, parenthetical_pairs

PAGES = [
    "People with this condition have recurrent episodes of severe swelling (angioedema).",
    "Some people have ringing in the ears (tinnitus). Others have low blood pressure (hypotension).",
    "Alcoholic beverages contain ethanol (pure alcohol).",
    "Symptoms include yellowing of the eyes and skin (jaundice).",  # "skin" alone is not jaundice
    "The gene is called ABC (ATP-binding cassette).",
]
SUMMARIES = ["Swelling of the skin can come with a rash.", "A rash is a change of the skin.",
             "Alcohol and skin: low blood pressure."]


def test_pairs_are_cut_at_the_clause_boundary():
    pairs = set(parenthetical_pairs(" ".join(PAGES)))
    assert ("swelling", "angioedema") in pairs  # "recurrent episodes of severe" dropped as degree words
    assert ("ringing in the ears", "tinnitus") in pairs
    assert ("low blood pressure", "hypotension") in pairs
    assert not any(term == "jaundice" for _, term in pairs)  # one coordinated word is not the term
    assert not any("atp" in a or "atp" in b for a, b in pairs)


def test_synonyms_both_ways_and_endings_point_at_the_term():
    vocab = mine(PAGES, [("Hives", ["Urticaria"])], SUMMARIES)
    assert vocab.synonyms("Angioedema") == ["swelling"]
    assert vocab.synonyms("Hypotension") == ["low blood pressure"]
    assert vocab.synonyms("Urticaria") == ["hives"] and vocab.synonyms("Hives") == ["urticaria"]
    assert vocab.synonyms("Ethanol") == ["alcohol"]  # the last word of "beverages contain ethanol"
    assert vocab.synonyms("Orthostatic hypotension") == []  # a part is not what the item names
    assert vocab.synonyms("Headache") == []


def test_only_words_plain_pages_seldom_use_are_clinical():
    vocab = mine(PAGES, [], SUMMARIES)
    assert vocab.is_clinical("Angioedema") and vocab.is_clinical("Peripheral edema")
    assert not vocab.is_clinical("Skin rash")  # every summary page's words
    assert LayVocabulary().is_clinical("Rash")  # no plain pages: nothing known, all may be expanded


def test_load_builds_once_and_rebuilds_when_the_sources_change(tmp_path):
    data = tmp_path / "data"
    (data / "corpora" / "medlineplus-topics").mkdir(parents=True)
    csv_path = data / "corpora" / "medlineplus-topics" / "topics.csv"
    csv_path.write_text('id,title,also_called,summary,url\n1,Hives,Urticaria,"Hives are itchy bumps (wheals).",u\n')
    cache = tmp_path / "vocab.json"
    vocab = load_vocabulary(data, cache=cache)
    assert vocab.synonyms("Urticaria") == ["hives"] and vocab.synonyms("wheals") == ["itchy bumps"]
    stored = json.loads(cache.read_text())
    stored["pairs"]["marker"] = {"kept": 1}
    cache.write_text(json.dumps(stored))
    assert load_vocabulary(data, cache=cache).synonyms("marker") == ["kept"]  # read from the cache
    csv_path.write_text(csv_path.read_text() + '2,Edema,Dropsy,"Edema means swelling.",u\n')
    rebuilt = load_vocabulary(data, cache=cache)
    assert rebuilt.synonyms("marker") == [] and rebuilt.synonyms("Dropsy") == ["edema"]


def test_no_data_gives_an_empty_vocabulary(tmp_path):
    assert load_vocabulary(tmp_path / "none", cache=tmp_path / "v.json").pairs == {}


def test_an_equivalent_is_each_others_most_frequent_partner():
    v = LayVocabulary()
    v.add("salt", "sodium", 7)
    v.add("blood", "hypokalemia", 11)  # "low potassium in the blood (hypokalemia)": a piece, not a name
    v.add("hypokalemia", "low potassium", 20)
    v.add("high blood pressure", "hypertension", 44)
    v.add("shingles", "herpes zoster", 1)  # one vote: not enough
    assert v.equivalent("Salt") == "sodium" and v.equivalent("sodium") == "salt"
    assert v.equivalent("blood") is None and v.equivalent("shingles") is None
    # the longest phrase that has one wins over its words
    assert v.equivalents("Is salt bad with high blood pressure?") == {"salt": "sodium",
                                                                      "high blood pressure": "hypertension"}


def test_book_words_only_for_a_phrase_the_corpus_hardly_uses():
    v = LayVocabulary()
    v.add("pee", "urinate", 3)
    v.add("child", "childhood interstitial lung disease", 5)  # a mined pair the corpus must not follow
    v.add("salt", "sodium", 7)
    chunks = {"pee": 0, "urinate": 502, "child": 354, "childhood interstitial lung disease": 80,
              "salt": 195, "sodium": 452}
    found = v.book_words("Why does my child pee so much after salt?", chunks.get, 15_000)
    assert found == {"pee": "urinate"}  # "child" and "salt" are the books' own words already
    # an equivalent the corpus uses no more than the phrase itself finds nothing new
    assert v.book_words("pee", {"pee": 0, "urinate": 5}.get, 15_000) == {}
