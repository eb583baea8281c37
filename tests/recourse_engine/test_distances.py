import numpy as np
import pytest

from recourse_engine import (
    carloan_schema,
    get_distance,
    l2,
    linf,
    mad_l1,
    proximity,
    sparsity,
    weighted,
)

from .reference import slow_l2, slow_linf, slow_proximity, slow_sparsity


@pytest.fixture(scope="module")
def data():
    s = carloan_schema()
    rng = np.random.default_rng(3)
    codes = np.column_stack([rng.integers(1, it.n_options + 1, size=200) for it in s.items]).astype(
        float
    )
    return s, codes[0], codes[1:]


def test_vectorised_distances_equal_direct_formulas(data):
    s, x, pool = data
    for fast, slow in [
        (sparsity, slow_sparsity),
        (proximity, slow_proximity),
        (l2, slow_l2),
        (linf, slow_linf),
    ]:
        got = fast(s, x, pool)
        want = np.array([slow(s, list(x), list(c)) for c in pool])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_paper_examples_of_proximity():
    # Tominaga et al.: teleworking 0-2h -> 2-4h is sparsity 1, proximity 1/6 (0.167)
    s = carloan_schema()
    x = np.ones(s.d)
    c = x.copy()
    c[s.index("teleworking_hours")] = 2
    assert sparsity(s, x, c[None])[0] == 1
    assert proximity(s, x, c[None])[0] == pytest.approx(1 / 6)
    # junior college -> university: 1/4 of the education range... plus a categorical change costs 1
    c2 = x.copy()
    c2[s.index("education")] = 3
    c2[s.index("workplace")] = 2
    assert proximity(s, x, c2[None])[0] == pytest.approx(2 / 4 + 1)


def test_mad_l1_and_weighted_combination(data):
    s, x, pool = data
    mad = np.median(np.abs(pool - np.median(pool, axis=0)), axis=0)
    got = mad_l1(s, x, pool, mad)
    want = []
    for c in pool:
        total = 0.0
        for j, it in enumerate(s.items):
            if c[j] == x[j]:
                continue
            if it.type in ("ordinal", "numeric"):
                total += abs(c[j] - x[j]) / (mad[j] if mad[j] > 0 else it.span)
            else:
                total += 1.0
        want.append(total)
    np.testing.assert_allclose(got, want, atol=1e-12)
    a, b, g, z = 0.3, 1.7, 2.0, 0.5
    combo = weighted(s, x, pool, a, b, g, z)
    direct = [
        a * slow_sparsity(s, list(x), list(c))
        + b * slow_proximity(s, list(x), list(c))
        + g * slow_l2(s, list(x), list(c))
        + z * slow_linf(s, list(x), list(c))
        for c in pool
    ]
    np.testing.assert_allclose(combo, direct, atol=1e-12)


def test_distance_lookup_rejects_unknown_names_and_bad_weights():
    assert get_distance("l1").name == "proximity"
    with pytest.raises(ValueError, match="unknown distance 'l3'"):
        get_distance("l3")
    with pytest.raises(ValueError, match="four weights"):
        get_distance("weighted", (1.0, 2.0))
    with pytest.raises(ValueError, match="takes no parameters"):
        get_distance("l2", (1.0,))
