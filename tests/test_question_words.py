"""The one tokeniser and stem every stage reads words by."""

from lakeplanner.question.words import content_words, stem, tokens, word_set


def test_tokens_are_lower_case_words_and_numbers_split_at_anything_else():
    assert tokens("Total_weight of INV-1042, in 2024?") == ["total", "weight", "of", "inv", "1042", "in", "2024"]


def test_a_one_letter_prefix_joins_its_word_as_a_column_name_writes_it():
    assert tokens("the e-mail and X-ray of A-1 in a well-known re-run") == [
        "the", "email", "and", "xray", "of", "a", "1", "in", "a", "well", "known", "re", "run"
    ]  # fmt: skip


def test_a_stem_merges_plurals_participles_and_synonyms():
    assert [stem(w) for w in ("invoices", "companies", "disputed", "class")] == [
        "invoice",
        "company",
        "dispute",
        "class",
    ]
    assert stem("largest") == stem("highest") == "max"
    assert stem("total") == stem("sum") == "sum"


def test_content_words_fold_accents_and_leave_out_function_words():
    assert content_words("The café of Zoë and the 2 sites") == {"cafe", "zoe", "sites"}
    assert (
        "not" in word_set("function_words") and "please" in word_set("filler") and "total" in word_set("not_concepts")
    )
