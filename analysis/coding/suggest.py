"""An optional first pass before coding: answers grouped by word use (TF-IDF and k-means,
scikit-learn), to let a coder read similar answers together. A group is a suggestion, never a
code: its label says so, and it is never written where codes are.

Stop words ("the", "and"; "の", "です") are removed per language before the words are weighed,
so the groups and their words are about content: English by scikit-learn's list (the
Glasgow Information Retrieval Group's, 318 words; the `stop-words` package's English list of
1,333 also drops content words such as "high" and "new"), every other language by the
maintained lists of the `stop-words` package (python-stop-words, BSD licence). Japanese has no spaces between words: its
text is cut where the script changes (kanji, katakana, hiragana, Latin runs), which leaves
particles and endings as hiragana runs for the list to remove.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import pandas as pd

WORD = re.compile(r"(?u)\b\w\w+\b")
JAPANESE = re.compile(
    r"[\u4e00-\u9fff\u3005]+|[\u30a0-\u30ff\u30fc]+|[\u3041-\u309f]+|[^\W\d_]+|\d+"
)


@functools.lru_cache(maxsize=8)
def stop_words_of(language: str) -> frozenset[str]:
    """The stop words of a language (an ISO code such as 'en', 'ja'); ValueError naming the
    languages there are for one without a list."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
    from stop_words import AVAILABLE_LANGUAGES, LANGUAGE_MAPPING, StopWordError, get_stop_words

    if language in ("en", "english"):
        return frozenset(ENGLISH_STOP_WORDS)
    try:
        return frozenset(w.lower() for w in get_stop_words(language))
    except StopWordError:
        known = sorted(set(LANGUAGE_MAPPING) | set(AVAILABLE_LANGUAGES))
        raise ValueError(
            f"no stop-word list for language {language!r}; known: {', '.join(known)}"
        ) from None


def tokens_of(text: str, language: str = "en") -> list[str]:
    """The words of an answer, lower-cased, stop words removed."""
    stop = stop_words_of(language)
    pattern = JAPANESE if language == "ja" else WORD
    return [t for t in pattern.findall(text.lower()) if t not in stop]


def _analyzer(language: str) -> Callable[[str], list[str]]:
    def words_and_pairs(text: str) -> list[str]:
        words = tokens_of(text, language)
        return words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]

    return words_and_pairs


def suggest_groups(
    answers: pd.Series, k: int = 8, seed: int = 0, language: str = "en"
) -> pd.DataFrame:
    """unit (the answers' index), suggested_group (`suggestion-<n>`), and the group's most
    characteristic words. Fewer distinct answers than k gives fewer groups."""
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import TfidfVectorizer

    if k < 2:
        raise ValueError(f"k must be at least 2, got {k}")
    stop_words_of(language)  # an unknown language is refused before any work
    text = answers.fillna("").astype(str).str.strip()
    text = text[text != ""]
    if text.nunique() < 2:
        raise ValueError("fewer than two distinct answers: nothing to group")
    vec = TfidfVectorizer(analyzer=_analyzer(language), min_df=1, sublinear_tf=True)
    try:
        x = vec.fit_transform(text)
    except ValueError:  # every word a stop word
        raise ValueError("the answers hold only stop words: nothing to group") from None
    k = min(k, text.nunique())
    km = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(x)
    words = vec.get_feature_names_out()
    top = {
        g: ", ".join(words[i] for i in km.cluster_centers_[g].argsort()[::-1][:5]) for g in range(k)
    }
    return pd.DataFrame(
        {
            "unit": text.index,
            "suggested_group": [f"suggestion-{g + 1}" for g in km.labels_],
            "group_words": [top[g] for g in km.labels_],
        }
    )
