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


def test_one_singular_for_names_and_words():
    from lakeplanner.question.words import is_plural, singular

    assert [singular(w) for w in ("loans", "libraries", "addresses", "status", "class", "analysis", "bus")] == [
        "loan",
        "library",
        "address",
        "status",
        "class",
        "analysis",
        "bus",
    ]
    assert is_plural("exhibits") and not is_plural("campus")


def test_a_mention_is_whole_words_and_a_hyphenated_code_is_one_word():
    from lakeplanner.question.words import mention_pattern, mentions, word_ends, word_position

    assert mentions("Was loan LN-1 renewed?", "ln-1") and not mentions("Was loan LN-12 renewed?", "LN-1")
    assert not mentions("the ward-B rota", "ward")
    assert mention_pattern("LN-1").sub("the loan", "LN-1 and LN-10") == "the loan and LN-10"
    assert word_position("Fees for 1-90 days late", "1-90") == 9 and word_position("no fee", "fees") is None
    assert word_ends("From May to June, from the desk", "from") == [4, 22]


def test_names_split_into_words_where_case_or_punctuation_changes():
    from lakeplanner.question.words import alnum_runs, identifier_words, marked_tokens, named_words

    assert identifier_words("loanEvents.v2") == ["loan", "events", "v2"]
    assert alnum_runs("Loan-Event v2") == ["Loan", "Event", "v2"]
    assert marked_tokens("Mail desk@museum.org, 12.5% off") == ["mail", "desk@museum.org", "12.5%", "off"]
    assert named_words("which exhibit did Halden lend in Q3") == ["Halden", "Q3"]


def test_one_rule_for_years_in_text_cells_and_numbers():
    from lakeplanner.question.years import is_year_number, is_year_text, names_a_year, years_in

    assert years_in("from 2019 to 2021, not 2019.5, 2020% or ISO-2022") == [2019, 2021]
    assert is_year_text(" 2024 ") and not is_year_text("2024-05")
    assert is_year_number(2024) and is_year_number(2024.0) and not is_year_number(2024.5)
    assert not is_year_number(True) and not is_year_number(1850) and not is_year_number(2150)
    assert names_a_year("Dec. 31, 2019") and not names_a_year("FY19")


def test_a_step_text_is_read_for_its_references_and_clauses():
    from lakeplanner.question.steps import (
        identifiers_in,
        is_clause_of,
        matched_columns_in,
        referenced_labels,
        with_matched_column,
        without_column_lead,
        without_reference_clauses,
    )

    step = "title of the exhibit whose exhibit_id in $var_2.linked_keys"
    assert referenced_labels(step) == {"$var_2"}
    assert matched_columns_in(step) == [("", "exhibit_id", "$var_2.linked_keys")]
    assert identifiers_in(step, references=False) >= {"exhibit_id", "title"}
    assert "linked_keys" not in identifiers_in(step, references=False)
    assert without_reference_clauses("opening hours in documents with document_id in $var_1.x") == "opening hours"
    assert without_column_lead("loan_id of the loan written off") == "the loan written off"
    assert is_clause_of("which member borrowed it", "Which member borrowed it, and when?")
    renamed = with_matched_column(step, "exhibit_id", "$var_2.linked_keys", "title", "$var_2.answer")
    assert renamed == "title of the exhibit whose title in $var_2.answer"
