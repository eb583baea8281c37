"""The blocked, exact indices against the slow direct formulas, plus invariances."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import KMeans

import analysis.segregation.indices as ind
from analysis.segregation import (
    SegregationInputError,
    atkinson,
    backends,
    epsilon,
    geometry,
    segregation_indices,
)
from analysis.segregation import passes as pair_passes

from . import slow_reference as ref

TOL = 1e-9


def _population(seed: int, n: int, d: int, kind: str, share: float = 0.35):
    rng = np.random.default_rng(seed)
    if kind == "normal":
        X = rng.normal(size=(n, d)) * rng.uniform(0.2, 2.0, size=d)
    else:  # coded items on the normalised scale: many exact ties
        levels = rng.integers(2, 6, size=d)
        X = rng.integers(0, levels, size=(n, d)) / (levels - 1)
    g = np.where(rng.random(n) < share, "f", "m")
    g[:2] = "f"
    return X, g


CASES = [
    (s, n, d, k)
    for s, (n, d, k) in enumerate(
        [
            (40, 1, "normal"),
            (90, 3, "normal"),
            (120, 10, "normal"),
            (70, 16, "normal"),
            (80, 4, "coded"),
            (130, 10, "coded"),
            (60, 2, "coded"),
        ]
    )
]


@pytest.mark.parametrize("torch_kernels", [False, True], ids=["numpy-kernels", "torch-kernels"])
@pytest.mark.parametrize("seed,n,d,kind", CASES)
def test_indices_equal_slow_formulas(monkeypatch, seed, n, d, kind, torch_kernels):
    # small blocks normally use numpy's kernels; force torch's CPU kernels too
    monkeypatch.setattr(backends, "_TORCH_MIN_BLOCK", 1 if torch_kernels else 1 << 62)
    X, g = _population(seed, n, d, kind)
    is_min = ref.minority_mask(g)
    units = np.random.default_rng(seed).integers(0, 7, size=n)
    r = segregation_indices(X, g, units=units)
    e = ref.eps(X, is_min)
    assert r.minority == "f" and r.n == n and r.n_minority == is_min.sum()
    assert r.eps == pytest.approx(e, abs=TOL)
    assert r.centralization == pytest.approx(ref.centralization(X, is_min, e), abs=TOL)
    assert r.avg_proximity == pytest.approx(ref.avg_proximity(X, is_min), abs=TOL)
    assert r.atkinson == pytest.approx(ref.atkinson(is_min, units), abs=TOL)
    if kind == "normal":  # a second, independent distance formula agrees too
        e2 = ref.eps(X, is_min, metric=ref.dist_norm)
        assert r.eps == pytest.approx(e2, abs=TOL)
        assert r.avg_proximity == pytest.approx(
            ref.avg_proximity(X, is_min, ref.dist_norm), abs=TOL
        )


@pytest.mark.parametrize("q", [0.0, 0.1, 0.2, 0.37, 1.0])
def test_eps_quantiles_and_the_authors_variant(q):
    X, g = _population(3, 70, 5, "coded")
    is_min = ref.minority_mask(g)
    assert ind.minority_eps(X, is_min, q) == pytest.approx(ref.eps(X, is_min, q), abs=TOL)
    got = ind.minority_eps(X, is_min, q, "ordered_with_self")
    assert got == pytest.approx(ref.eps(X, is_min, q, with_self=True), abs=TOL)


@pytest.mark.parametrize("kind", ["normal", "coded"])
@pytest.mark.parametrize("eps_pairs", ["distinct", "ordered_with_self"])
@pytest.mark.parametrize("budget", [10**9, 200])
@pytest.mark.parametrize("passes", ["values", "values-chunked", "pairs", "values-overflow"])
def test_sampled_bracket_path_is_exact(monkeypatch, kind, eps_pairs, budget, passes):
    """Force the large-n path (sampled bracket + one exact pass, and with a small
    candidate budget the histogram pass that narrows the bracket) on small data: the
    value-counting pass (also counting one value at a time), the pair-keeping pass, and
    the first giving way to the second when the bracket holds more distinct distances
    than it may count."""
    monkeypatch.setattr(epsilon, "_FULL_PAIRS", 100)
    monkeypatch.setattr(epsilon, "_SAMPLE_PAIRS", 300)
    monkeypatch.setattr(epsilon, "_CANDIDATE_BUDGET", budget)
    if passes == "pairs":
        monkeypatch.setattr(epsilon, "_MAX_CLASSES_ON", False)
    elif passes == "values-chunked":  # one distance value per bincount
        monkeypatch.setattr(pair_passes, "_CLASS_CHUNK", 1)
    elif passes == "values-overflow":
        monkeypatch.setattr(pair_passes, "_max_classes", lambda m: 1)
    X, g = _population(11, 150, 6, kind, share=0.45)
    is_min = ref.minority_mask(g)
    for q in (0.0, 0.05, 0.2, 0.9, 1.0):
        got = ind.minority_eps(X, is_min, q, eps_pairs, n_jobs=2)
        want = ref.eps(X, is_min, q, with_self=eps_pairs != "distinct")
        assert got == pytest.approx(want, abs=TOL)
        # centralization then counts minority neighbours from the same bracket pass
        r = segregation_indices(
            X, g, eps_quantile=q, eps_pairs=eps_pairs, want=("centralization",), n_jobs=2
        )
        assert r.eps == got
        assert r.centralization == pytest.approx(ref.centralization(X, is_min, want), abs=TOL)


@pytest.mark.parametrize("kind", ["normal", "coded"])
def test_sampled_bracket_path_on_the_torch_backend(monkeypatch, kind):
    """The GPU code path (torch blocks), run on the CPU: the same exact ε and counts."""
    pytest.importorskip("torch")
    monkeypatch.setattr(epsilon, "_FULL_PAIRS", 100)
    monkeypatch.setattr(epsilon, "_SAMPLE_PAIRS", 500)
    X, g = _population(17, 200, 5, kind, share=0.4)
    is_min = ref.minority_mask(g)
    r = segregation_indices(X, g, backend="torch", device="cpu", want=("centralization",))
    e = ref.eps(X, is_min)
    assert r.eps == pytest.approx(e, abs=TOL)
    assert r.centralization == pytest.approx(ref.centralization(X, is_min, e), abs=TOL)


def test_coded_data_are_resolved_by_counting_distance_values(monkeypatch):
    """On coded profiles the ε bracket holds whole tie classes: the pass keeps a few
    distance values with per-member counts, never the pairs themselves."""
    monkeypatch.setattr(epsilon, "_FULL_PAIRS", 100)
    monkeypatch.setattr(epsilon, "_SAMPLE_PAIRS", 2000)
    X, g = _population(21, 400, 6, "coded", share=0.45)
    is_min = ref.minority_mask(g)
    geo = geometry.make_geometry(ind.as_population(X))
    e, bracket = epsilon.find_eps(ind.make_ops(), geo, np.flatnonzero(is_min), 0.2, "distinct", 0)
    assert isinstance(bracket, pair_passes.Classes)
    assert 0 < len(bracket.values) <= 256
    m = int(is_min.sum())
    assert bracket.counts.shape == (len(bracket.values), m)
    assert e == pytest.approx(ref.eps(X, is_min), abs=TOL)


def test_given_eps_on_an_exact_tie_counts_the_boundary():
    X, g = _population(5, 90, 3, "coded")
    is_min = ref.minority_mask(g)
    mi = np.flatnonzero(is_min)
    e = ref.dist(X[mi[0]], X[mi[1]])  # a distance that many coded pairs share exactly
    r = segregation_indices(X, g, eps=e, want=("centralization",))
    assert r.eps == e
    assert r.centralization == pytest.approx(ref.centralization(X, is_min, e), abs=TOL)


def test_backends_and_thread_counts_agree():
    X, g = _population(8, 160, 7, "normal")
    base = segregation_indices(X, g, n_jobs=1, clusters=5).to_json()
    for kw in ({"n_jobs": 2}, {"backend": "torch", "device": "cpu"}):
        other = segregation_indices(X, g, clusters=5, **kw).to_json()
        for key in ("eps", "centralization", "atkinson"):
            assert other[key] == base[key]
        assert other["avg_proximity"] == pytest.approx(base["avg_proximity"], abs=1e-12)


def test_pure_numpy_kernels_agree(monkeypatch):
    """Without torch the numpy backend uses numpy's own product and exp chain."""
    X, g = _population(10, 150, 5, "normal")
    is_min = ref.minority_mask(g)
    orig = backends.NumpyOps.__init__

    def no_torch(self, block_rows=16, block_cols=64, n_jobs=2):
        orig(self, block_rows, block_cols, n_jobs)
        self._torch = None

    monkeypatch.setattr(backends.NumpyOps, "__init__", no_torch)
    r = segregation_indices(X, g, want=("centralization", "avg_proximity"))
    e = ref.eps(X, is_min)
    assert r.eps == pytest.approx(e, abs=TOL)
    assert r.centralization == pytest.approx(ref.centralization(X, is_min, e), abs=TOL)
    assert r.avg_proximity == pytest.approx(ref.avg_proximity(X, is_min), abs=TOL)


def test_small_blocks_cover_every_pair(monkeypatch):
    """Odd block sizes exercise ragged edges and the triangle masks."""
    X, g = _population(9, 101, 4, "coded", share=0.5)
    is_min = ref.minority_mask(g)
    orig = backends.NumpyOps.__init__

    def small(self, block_rows=7, block_cols=13, n_jobs=None):
        orig(self, block_rows, block_cols, n_jobs)

    monkeypatch.setattr(backends.NumpyOps, "__init__", small)
    monkeypatch.setattr(backends, "_TORCH_MIN_BLOCK", 1)  # torch's kernels in threads, buffers
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    r = segregation_indices(X, g, want=("centralization", "avg_proximity"))
    assert torch.get_num_threads() == threads  # the one-thread setting is restored
    e = ref.eps(X, is_min)
    assert r.eps == pytest.approx(e, abs=TOL)
    assert r.centralization == pytest.approx(ref.centralization(X, is_min, e), abs=TOL)
    assert r.avg_proximity == pytest.approx(ref.avg_proximity(X, is_min), abs=TOL)


def test_relabelling_groups_and_permuting_rows_change_nothing():
    X, g = _population(13, 140, 5, "normal", share=0.3)
    base = segregation_indices(X, g, clusters=6)
    relabelled = np.where(g == "f", 1, 0)  # the minority now carries the larger label
    swapped = segregation_indices(X, relabelled, clusters=6)
    assert swapped.minority == 1
    perm = np.random.default_rng(0).permutation(len(X))
    units = base.kmeans.predict(X)
    a = segregation_indices(X, g, units=units)
    b = segregation_indices(X[perm], g[perm], units=units[perm])
    for r in (swapped, b):
        assert r.eps == base.eps
        assert r.centralization == base.centralization
        assert r.avg_proximity == pytest.approx(base.avg_proximity, abs=1e-12)
    assert swapped.atkinson == base.atkinson
    assert a.atkinson == pytest.approx(b.atkinson, abs=1e-15)


def test_named_minority_overrides_size():
    X, g = _population(14, 60, 3, "normal")
    is_maj = ~ref.minority_mask(g)
    r = segregation_indices(X, g, minority="m", want=("avg_proximity", "centralization"))
    assert r.minority == "m" and r.n_minority == is_maj.sum()
    e = ref.eps(X, is_maj)
    assert r.centralization == pytest.approx(ref.centralization(X, is_maj, e), abs=TOL)


def test_atkinson_extremes_and_kmeans_units():
    is_min = np.array([1, 0, 1, 0, 1, 0, 1, 0], dtype=bool)
    assert atkinson(is_min, [0, 0, 1, 1, 2, 2, 3, 3]) == pytest.approx(0.0, abs=1e-15)
    assert atkinson(is_min, is_min.astype(int)) == pytest.approx(1.0, abs=1e-15)
    X, g = _population(15, 200, 4, "normal")
    r = segregation_indices(X, g, clusters=30, seed=3, want=("atkinson",))
    km = KMeans(n_clusters=30, random_state=3, n_init=1).fit(X)
    units = km.predict(X)
    assert r.atkinson == pytest.approx(ref.atkinson(ref.minority_mask(g), units), abs=TOL)


def test_after_recourse_reuses_eps_and_neighbourhoods():
    X, g = _population(16, 120, 4, "normal")
    before = segregation_indices(X, g, clusters=8)
    X2 = X + np.random.default_rng(1).normal(scale=0.3, size=X.shape)
    after = segregation_indices(
        X2, g, eps=before.eps, kmeans=before.kmeans, minority=before.minority
    )
    is_min = ref.minority_mask(g)
    assert after.eps == before.eps
    assert after.centralization == pytest.approx(
        ref.centralization(X2, is_min, before.eps), abs=TOL
    )
    units = before.kmeans.predict(X2)
    assert after.atkinson == pytest.approx(ref.atkinson(is_min, units), abs=TOL)


@pytest.mark.parametrize(
    "X,g,kw,message",
    [
        (np.array([[0.0], [np.nan], [1.0]]), ["a", "b", "a"], {}, "row 2, feature 1"),
        (np.zeros((3, 2)), ["a", "a", "a"], {}, "exactly two groups"),
        (np.zeros((4, 2)), ["a", "b", "b", "b"], {}, "at least 2"),
        (np.zeros((4, 2)), ["a", "b", "a", "b", "b"], {}, "5 group labels"),
        (np.zeros((4, 2)), ["a", "b", "a", "b"], {"minority": "c"}, "not one of the groups"),
        (np.zeros((4, 2)), ["a", "b", "a", None], {}, "row 4: group is missing"),
        (np.zeros((4, 2)), ["a", "b", "a", "b"], {"clusters": 2}, "distinct profiles"),
        (np.zeros((4, 2)), ["a", "b", "a", "b"], {"eps": -1.0}, "eps must be"),
        (np.zeros((4, 2)), ["a", "b", "a", "b"], {"eps_quantile": 1.5}, "quantile"),
        (np.zeros(4), ["a", "b", "a", "b"], {}, "(n, d)"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(X, g, kw, message):
    with pytest.raises(
        SegregationInputError, match=message.replace("(", r"\(").replace(")", r"\)")
    ):
        segregation_indices(X, g, **kw)
