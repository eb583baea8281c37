"""The index settings each change what they should, checked against direct formulas: the
authors' own (pairwise distance matrices, np.quantile, `<`, their zip) written out here."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import KMeans

from analysis.segregation.indices import atkinson, segregation_indices
from analysis.segregation.inputs import SegregationInputError
from analysis.segregation.settings_indices import IndexSettings, indices_under, threshold


def _dist(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))


def authors_centralization(sens: np.ndarray, x: np.ndarray, radius=None, q=0.4):
    """utils_recourse.centralization of ruijiang81/Balanced-Recourse, written out."""
    sensid = 1 if (sens == 0).sum() > (sens == 1).sum() else 0
    d_in = _dist(x[sens == sensid], x[sens == sensid])
    d_cross = _dist(x[sens == sensid], x[sens == 1 - sensid])
    if radius is None:
        radius = np.quantile(d_in, q)
    n_in, n_cross = (d_in < radius).sum(1), (d_cross < radius).sum(1)
    with np.errstate(invalid="ignore"):
        central = (n_in / (n_cross + n_in)) > 0.5
    num = sum(i == sensid and j for i, j in zip(sens, central, strict=False))
    return num / (sens == sensid).sum(), radius, central


def direct_centralization(sens, x, radius, strict):
    """The intended index: the central share of the minority (no zip)."""
    sensid = 1 if (sens == 0).sum() > (sens == 1).sum() else 0
    mn, mj = x[sens == sensid], x[sens == 1 - sensid]
    cmp = np.less if strict else np.less_equal
    n_in, n_cross = cmp(_dist(mn, mn), radius).sum(1), cmp(_dist(mn, mj), radius).sum(1)
    return float(np.mean(n_in > n_cross))


def hand_population():
    """14 people on a grid (exact distance ties), minority (group 1, 5 people) not first."""
    x = np.array(
        [[0, 0], [1, 0], [0, 1], [5, 5], [6, 5], [5, 6], [2, 2], [3, 3], [9, 0],
         [0, 9], [1, 1], [6, 6], [2, 3], [8, 8]],
        dtype=float,
    )  # fmt: skip
    g = np.array([0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1, 0])
    return x, g


#: the authors' settings but q = 0.4 (0.1 gives ε = 0 on 5 minority members)
AUTHORS = IndexSettings(
    eps_quantile=0.4, eps_pairs="ordered_with_self", eps_comparison="<", clusters=3
)


def test_published_centralization_defect_equals_the_authors_formula():
    x, g = hand_population()
    want, radius, central = authors_centralization(g, x)
    got = indices_under(
        x, g, IndexSettings(**{**AUTHORS.to_json(), "published_centralization": True})
    )
    assert got.eps == pytest.approx(radius, abs=1e-12)
    assert got.centralization == pytest.approx(want, abs=1e-12)
    # the sound formula under the same ε and comparison is the central share of the minority
    sound = indices_under(x, g, AUTHORS)
    assert sound.centralization == pytest.approx(central.mean(), abs=1e-12)
    assert sound.centralization == pytest.approx(direct_centralization(g, x, radius, True))
    assert 0 < sound.centralization != pytest.approx(got.centralization)  # the defect shows


def test_the_defect_is_off_by_default_and_leaves_the_index_alone():
    x, g = hand_population()
    default = IndexSettings(clusters=3)
    assert IndexSettings().published_centralization is False
    base = segregation_indices(x, g, kmeans=indices_under(x, g, default).kmeans)
    got = indices_under(x, g, default)
    assert got.centralization == base.centralization
    assert got.eps == base.eps


def test_eps_pairs_and_comparison_each_change_the_index():
    x, g = hand_population()
    mn = x[g == 1]
    d = _dist(mn, mn)
    distinct = np.quantile(d[np.triu_indices(len(mn), 1)], 0.2)
    with_self = np.quantile(d, 0.2)
    s_distinct = IndexSettings(eps_quantile=0.2, clusters=3)
    s_self = IndexSettings(eps_quantile=0.2, eps_pairs="ordered_with_self", clusters=3)
    assert indices_under(x, g, s_distinct).eps == pytest.approx(distinct)
    assert indices_under(x, g, s_self).eps == pytest.approx(with_self)
    assert distinct != with_self
    # q = 0.25 with self-pairs gives ε = 1 exactly: pairs at 1 count with <= and not with <
    s_le = IndexSettings(eps_quantile=0.25, eps_pairs="ordered_with_self", clusters=3)
    s_lt = IndexSettings(**{**s_le.to_json(), "eps_comparison": "<"})
    le, lt = indices_under(x, g, s_le), indices_under(x, g, s_lt)
    assert le.eps == lt.eps == 1.0
    assert le.centralization == pytest.approx(direct_centralization(g, x, 1.0, False))
    assert lt.centralization == pytest.approx(direct_centralization(g, x, 1.0, True))
    assert le.centralization != lt.centralization


def test_after_recourse_reuses_the_origin_eps_and_comparison():
    x, g = hand_population()
    origin = indices_under(x, g, AUTHORS)
    moved = x.copy()
    moved[g == 1] += 0.5
    after = indices_under(moved, g, AUTHORS, origin=origin)
    assert after.eps == origin.eps
    assert after.centralization == pytest.approx(direct_centralization(g, moved, origin.eps, True))


def test_kmeans_starts_and_seed_reach_the_atkinson_index():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(300, 3))
    g = (rng.random(300) < 0.3).astype(int)
    for inits in (1, 10):
        s = IndexSettings(clusters=8, kmeans_inits=inits, kmeans_seed=0)
        got = indices_under(x, g, s, seed=99)
        assert got.kmeans.n_init == inits and got.kmeans.random_state == 0
        ref = KMeans(n_clusters=8, random_state=0, n_init=inits).fit(x)
        assert got.atkinson == pytest.approx(atkinson(g == 1, ref.predict(x)), abs=1e-12)
    one = indices_under(x, g, IndexSettings(clusters=8, kmeans_inits=1, kmeans_seed=0))
    ten = indices_under(x, g, IndexSettings(clusters=8, kmeans_inits=10, kmeans_seed=0))
    assert ten.kmeans.inertia_ <= one.kmeans.inertia_
    assert one.atkinson != ten.atkinson


def test_zero_eps_with_strict_comparison_has_nobody_central():
    assert threshold(0.0, "<") is None
    x = np.array([[0.0], [0.0], [0.0], [1.0], [2.0], [3.0], [4.0]])
    g = np.array([1, 1, 1, 0, 0, 0, 0])
    s = IndexSettings(
        eps_quantile=0.1, eps_pairs="ordered_with_self", eps_comparison="<", clusters=2
    )
    got = indices_under(x, g, s)
    assert got.eps == 0.0 and got.centralization == 0.0
    assert authors_centralization(g, x, q=0.1)[0] == 0.0


@pytest.mark.parametrize(
    "kw",
    [{"eps_pairs": "all"}, {"eps_comparison": "=="}, {"eps_quantile": 2.0}, {"kmeans_inits": 0}],
)
def test_bad_settings_are_refused(kw):
    with pytest.raises(SegregationInputError):
        IndexSettings(**kw)
