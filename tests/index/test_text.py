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


def test_greek_noun_and_adjective_stems_conflate_only_when_asked():
    from medground.index.text import BM25Settings

    on = MedicalTokenizer(BM25Settings(conflate_greek=True))
    for noun, adjective in [("anaphylaxis", "anaphylactic"), ("thrombosis", "thrombotic"), ("diuresis", "diuretics"),
                            ("hypokalemia", "hypokalemic"), ("epilepsy", "epileptic"), ("tachycardia", "tachycardic")]:
        assert on.tokenize(noun) == on.tokenize(adjective), noun
    # names ending in -ia, "-sy" adjectives and short stems keep their Snowball stems
    assert on.tokenize("Virginia greasy basis") == MedicalTokenizer().tokenize("Virginia greasy basis")
    assert MedicalTokenizer().tokenize("anaphylaxis") != MedicalTokenizer().tokenize("anaphylactic")  # default off


def test_conflation_off_leaves_the_index_fingerprint_fields_as_before():
    from medground.index.text import BM25Settings

    assert "conflate_greek" not in BM25Settings().index_fields()
    assert BM25Settings(conflate_greek=True).index_fields()["conflate_greek"] is True


def test_tokenize_words_groups_a_hyphenated_words_terms():
    assert MedicalTokenizer().tokenize_words("First-line drug") == [["first-line", "first", "line"], ["drug"]]
