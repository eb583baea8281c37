"""An optional first pass before coding: answers grouped by word use (TF-IDF and k-means,
scikit-learn), to let a coder read similar answers together. A group is a suggestion, never a
code: its label says so, and it is never written where codes are."""

from __future__ import annotations

import pandas as pd


def suggest_groups(answers: pd.Series, k: int = 8, seed: int = 0) -> pd.DataFrame:
    """unit (the answers' index), suggested_group (`suggestion-<n>`), and the group's most
    characteristic words. Fewer distinct answers than k gives fewer groups."""
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import TfidfVectorizer

    if k < 2:
        raise ValueError(f"k must be at least 2, got {k}")
    text = answers.fillna("").astype(str).str.strip()
    text = text[text != ""]
    if text.nunique() < 2:
        raise ValueError("fewer than two distinct answers: nothing to group")
    vec = TfidfVectorizer(min_df=1, ngram_range=(1, 2), sublinear_tf=True)
    x = vec.fit_transform(text)
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
