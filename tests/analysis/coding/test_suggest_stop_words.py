"""Stop words are left out of "Suggest groups" per language: checked against the lists
themselves (scikit-learn's English list, the `stop-words` package's Japanese one)."""

from __future__ import annotations

import pandas as pd
import pytest
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
from stop_words import get_stop_words

from analysis.coding.suggest import suggest_groups, tokens_of


def test_english_stop_words_never_weigh_in() -> None:
    answers = pd.Series({
        "1:acceptance_why": "the cost of the degree is too high for me",
        "2:acceptance_why": "it is the cost and the money that I do not have",
        "3:acceptance_why": "moving house would take years of effort",
        "4:acceptance_why": "the effort and the years are too much for my family",
    })  # fmt: skip
    groups = suggest_groups(answers, k=2)
    words = {w for ws in groups["group_words"] for pair in ws.split(", ") for w in pair.split()}
    assert words and not words & ENGLISH_STOP_WORDS
    assert tokens_of("The cost is too high", "en") == ["cost", "high"]


def test_japanese_particles_are_removed() -> None:
    stop = set(get_stop_words("ja"))
    assert {"が", "の", "です"} <= stop
    tokens = tokens_of("費用が高いのです", "ja")
    assert "費用" in tokens and not set(tokens) & stop


def test_an_unknown_language_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="no stop-word list for language 'xx'"):
        suggest_groups(pd.Series({"a": "one answer", "b": "another answer"}), language="xx")
