from medground.index.text import BM25Settings, MedicalTokenizer, build_vocab


def test_hyphenated_terms_kept_whole_and_split():
    tok = MedicalTokenizer(BM25Settings(stemmer=None, stopwords=None))
    assert tok.tokenize("Beta-blocker") == ["beta-blocker", "beta", "blocker"]


def test_hyphen_split_can_be_turned_off():
    tok = MedicalTokenizer(BM25Settings(stemmer=None, stopwords=None, split_hyphens=False))
    assert tok.tokenize("beta-blocker") == ["beta-blocker"]


def test_numbers_with_units():
    tok = MedicalTokenizer(BM25Settings(stemmer=None, stopwords=None))
    assert tok.tokenize("2.5 mg") == ["2.5", "mg"]
    assert tok.tokenize("10mg") == ["10mg", "10", "mg"]
    assert tok.tokenize("1,000 units") == ["1000", "units"]


def test_stemming_and_stopwords():
    tok = MedicalTokenizer(BM25Settings())
    assert tok.tokenize("The beta-blockers are lowering rates") == [
        "beta-blocker", "beta", "blocker", "lower", "rate"]
    # stems the parts of a hyphenated term alike, so query and document forms meet
    assert set(tok.tokenize("beta-blocker")) == set(tok.tokenize("beta-blockers"))


def test_stopword_parts_of_hyphenated_terms_dropped():
    tok = MedicalTokenizer(BM25Settings(stemmer=None))
    assert tok.tokenize("follow-up") == ["follow-up", "follow", "up"]
    assert tok.tokenize("state-of-the-art") == ["state-of-the-art", "state", "art"]


def test_cjk_characters_become_tokens():
    tok = MedicalTokenizer(BM25Settings())
    assert tok.tokenize("高血压") == ["高", "血", "压"]


def test_build_vocab_assigns_ids_in_first_seen_order():
    ids, vocab = build_vocab([["a", "b", "a"], ["c", "b"]])
    assert vocab == {"a": 0, "b": 1, "c": 2}
    assert ids == [[0, 1, 0], [2, 1]]
