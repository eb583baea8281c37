"""Verdicts, the compliance curve's full-compliance point, effects by method and origin,
and figures that fit, on generated exports (docs/export.md).

The bootstrap interval is recomputed here directly — the same resamples, every
index by the slow formulas — so a wrong interval cannot hide behind a right rule.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.cluster import KMeans
from statsmodels.stats.multitest import multipletests

from analysis.__main__ import main
from analysis.export import load_export
from analysis.segregation.catalogue import names
from analysis.segregation.effects import (
    compute_effects,
    groupings_present,
    study_population,
    verdict,
)
from analysis.segregation.report import CURVE_NOTE, curves_figure, html_page, scatter_figure
from recourse_engine import carloan_schema

from . import slow_reference as ref
from .export_generator import make_export
from .hand_built import populations, slow_indices

SEVEN = ("lowest_cost@weighted[1,0.5,0,0]", "wachter", "ebr", "ibr", "cchvae", "cruds", "causal")


def _load(directory, by=("strategy",)):
    ex = load_export(directory)
    pops = {
        col: study_population(ex.evaluations, ex.participants, carloan_schema(), "gender", by=col)
        for col in by
    }
    return ex, pops


def _effects(directory, by=("strategy",), **kw):
    ex, pops = _load(directory, by)
    main_pop = pops.pop("strategy")
    return compute_effects(main_pop, by=pops, **kw), main_pop


@pytest.mark.parametrize(
    "index,ci,want",
    [
        ("centralization", [0.01, 0.2], "worse"),
        ("centralization", [-0.2, -0.01], "better"),
        ("centralization", [-0.01, 0.2], "no clear change"),
        ("centralization", [0.0, 0.2], "no clear change"),
        ("atkinson", [0.0, 0.0], "no clear change"),
        ("avg_proximity", [0.01, 0.2], "better"),
        ("avg_proximity", [-0.2, -0.01], "worse"),
        ("avg_proximity", [-0.2, 0.0], "no clear change"),
        ("avg_proximity", None, "no clear change"),
    ],
)
def test_verdict_rule(index, ci, want):
    assert verdict(index, ci) == want


def test_bootstrap_interval_matches_a_direct_slow_computation(tmp_path):
    d = make_export(tmp_path / "e", n=30, seed=4, extra=("apart",))
    B, seed, k = 12, 3, 4
    eff, _ = _effects(d, clusters=k, bootstrap=B, draws=2, curve_draws=1, seed=seed)
    X0, _, is_min = populations(d, "strategy", "sparsest")
    n = len(X0)
    eps = ref.eps(X0, is_min)
    km = KMeans(n_clusters=k, random_state=seed, n_init=1).fit(X0)
    rng = np.random.default_rng(seed)
    boots = [rng.integers(0, n, size=n) for _ in range(B)]
    pvalues, cells = [], []
    for s in eff["strategies"]:
        _, X1, _ = populations(d, "strategy", s)
        diffs = {i: [] for i in names()}
        for b in boots:
            if is_min[b].sum() < 2 or (~is_min[b]).sum() < 1:
                continue
            before = slow_indices(X0[b], is_min[b], eps, km.predict(X0[b]))
            after = slow_indices(X1[b], is_min[b], eps, km.predict(X1[b]))
            for i in names():
                diffs[i].append(after[i] - before[i])
        st = eff["strategies"][s]
        assert st["bootstrap_used"] == len(diffs["centralization"]) > 0
        for i in names():
            v = np.array(diffs[i])
            want = [np.percentile(v, 2.5), np.percentile(v, 97.5)]
            got = st["difference"][i]
            assert got["ci95"] == pytest.approx(want, abs=1e-9), (s, i)
            assert got["bootstrap_mean"] == pytest.approx(v.mean(), abs=1e-9), (s, i)
            assert got["verdict_95"] == verdict(i, want)
            low, high = (np.sum(v <= 0) + 1) / (len(v) + 1), (np.sum(v >= 0) + 1) / (len(v) + 1)
            assert got["p"] == pytest.approx(min(1.0, 2 * min(low, high))), (s, i)
            pvalues.append(got["p"])
            cells.append((got, verdict(i, want)))
    # Holm across the table (every strategy × index), by statsmodels
    adjusted = multipletests(pvalues, alpha=0.05, method="holm")[1]
    for (got, unadjusted), q in zip(cells, adjusted, strict=True):
        assert got["p_holm"] == pytest.approx(q)
        assert got["verdict"] == (unadjusted if q < 0.05 else "no clear change")


@pytest.fixture(scope="module")
def clear_and_unclear(tmp_path_factory):
    d = make_export(tmp_path_factory.mktemp("v") / "x", n=60, seed=1, extra=("apart", "ebr"))
    eff, _ = _effects(d, clusters=5, bootstrap=2000, draws=2, curve_draws=1)
    return eff


def test_a_clear_change_gets_worse_or_better(clear_and_unclear):
    apart = clear_and_unclear["strategies"]["apart"]
    together = clear_and_unclear["strategies"]["ebr"]
    # the groups pushed to opposite corners: proximity falls, its interval well below 0
    assert apart["difference"]["avg_proximity"]["ci95"][1] < 0
    assert apart["difference"]["avg_proximity"]["verdict"] == "worse"
    assert "avg_proximity" in apart["worse"] and apart["n_worse"] == len(apart["worse"])
    # everyone to one profile: proximity rises to 1, interval well above 0
    assert together["difference"]["avg_proximity"]["ci95"][0] > 0
    assert together["difference"]["avg_proximity"]["verdict"] == "better"
    assert "avg_proximity" in together["better"] and together["n_better"] >= 1


def test_too_few_resamples_for_holm_give_no_verdict_and_say_so(tmp_path):
    """60 resamples: p is never below 2/61, so no cell of a 12-interval table can pass Holm,
    even where the interval lies far from 0; effects.json names the table and the count."""
    d = make_export(tmp_path / "x", n=60, seed=1, extra=("apart", "ebr"))
    eff, _ = _effects(d, clusters=5, bootstrap=60, draws=2, curve_draws=1)
    apart = eff["strategies"]["apart"]["difference"]["avg_proximity"]
    assert apart["ci95"][1] < 0 and apart["verdict_95"] == "worse"
    assert apart["p"] == pytest.approx(2 / 61) and apart["verdict"] == "no clear change"
    family = 3 * len(eff["strategies"])
    assert eff["multiplicity"]["families"] == {"strategy": family}
    assert eff["multiplicity"]["too_few_resamples"] == ["strategy"]
    needed = eff["multiplicity"]["needed"]["strategy"]
    assert 2 * family / (needed + 1) < 0.05 <= 2 * family / needed  # the fewest that can pass
    page = html_page(eff)
    assert f"Holm-adjusted across the {family} intervals" in page
    assert f"Rerun with --bootstrap {needed} or more" in page


def test_enough_resamples_leave_no_warning(clear_and_unclear):
    assert clear_and_unclear["multiplicity"]["too_few_resamples"] == []
    assert "Rerun with --bootstrap" not in html_page(clear_and_unclear)


def test_a_point_estimate_inside_a_zero_spanning_interval_is_no_clear_change(
    clear_and_unclear,
):
    unclear = [
        (s, i)
        for s, st in clear_and_unclear["strategies"].items()
        for i in names()
        if i in st["worse_point_estimate"]
        and st["difference"][i]["ci95"][0] <= 0 <= st["difference"][i]["ci95"][1]
    ]
    assert unclear, "the export should hold a worse-looking estimate with a zero-spanning CI"
    for s, i in unclear:
        st = clear_and_unclear["strategies"][s]
        assert st["difference"][i]["verdict"] == "no clear change", (s, i)
        assert i not in st["worse"] and i in st["no_clear_change"]


def test_curve_at_full_compliance_is_the_table_after(tmp_path):
    d = make_export(
        tmp_path / "c",
        n=50,
        seed=6,
        extra=("wachter", "ebr"),
        impossible_share=0.4,
        recourse_columns=True,
    )
    eff, _ = _effects(d, by=("strategy", "method", "origin"), clusters=4, bootstrap=3, draws=3)
    tables = [eff["strategies"], *eff["by"].values()]
    assert sum(st["n_impossible"] for t in tables for st in t.values()) > 0
    for table in tables:
        for name, st in table.items():
            for i in names():
                assert st["curve"]["pi"][-1] == 1.0 and st["curve"]["pi"][0] == 0.0
                assert st["curve"][i][-1] == st["after"][i], (name, i)
                assert st["curve"][i][0] == eff["before"][i], (name, i)
    page = html_page(eff)
    assert CURVE_NOTE in page and "after (= curve at π = 1)" in page


def test_effects_by_method_and_origin(tmp_path, capsys):
    d = make_export(
        tmp_path / "m", n=40, seed=2, extra=("wachter", "wachter#2", "ebr"), recourse_columns=True
    )
    ex = load_export(d)
    assert groupings_present(ex.evaluations) == ["strategy", "method", "origin"]
    out = tmp_path / "report"
    argv = ["effects", "--export", str(d), "--group", "gender", "--out", str(out)]
    assert main([*argv, "--bootstrap", "5", "--draws", "3", "--clusters", "4"]) == 0
    printed = capsys.readouterr().out
    assert "method wachter:" in printed and "origin pool:" in printed
    got = json.loads((out / "effects.json").read_text())
    assert set(got["by"]) == {"method", "origin"}
    assert set(got["by"]["method"]) == {"wachter", "ebr"}
    assert set(got["by"]["origin"]) == {"pool", "generated"}
    pool_rows = int((ex.evaluations["origin"] == "pool").sum())
    assert got["rows_without_value"]["method"] == pool_rows
    for name in ("compliance.png", "compliance_method.png", "compliance_origin.png"):
        assert (out / name).stat().st_size > 0
    X0, _, is_min = populations(d, "strategy", "sparsest")
    eps = ref.eps(X0, is_min)
    km = KMeans(n_clusters=4, random_state=0, n_init=1).fit(X0)
    for column, value in (("method", "wachter"), ("origin", "generated"), ("origin", "pool")):
        _, X1, _ = populations(d, column, value)
        want = slow_indices(X1, is_min, eps, km.predict(X1))
        arm = got["by"][column][value]
        for i in names():
            assert arm["after"][i] == pytest.approx(want[i], abs=1e-9), (column, value, i)
    html = (out / "report.html").read_text()
    assert "By recourse method" in html and "compliance_method.png" in html
    # an export without the columns has the strategies only
    plain = make_export(tmp_path / "p", n=20, seed=2)
    assert groupings_present(load_export(plain).evaluations) == ["strategy"]


def _clipped(fig) -> list[str]:
    """What is drawn outside the figure: an axes with its ticks, labels, title and
    legend (its tight box counts only what is drawn), a figure legend, the title."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    parts = [(f"axes {a.get_title()!r}", a) for a in fig.axes if a.get_visible() and a.axison]
    parts += [("figure legend", leg) for leg in fig.legends]
    if fig._suptitle is not None:
        parts.append(("title", fig._suptitle))
    bad = []
    for name, artist in parts:
        e = artist.get_tightbbox(renderer)
        if e.x0 < box.x0 - 1 or e.y0 < box.y0 - 1 or e.x1 > box.x1 + 1 or e.y1 > box.y1 + 1:
            bad.append(name)
    return bad


def test_figures_fit_with_seven_long_named_strategies(tmp_path):
    import matplotlib.pyplot as plt

    d = make_export(tmp_path / "f", n=40, seed=3, extra=SEVEN)
    eff, pop = _effects(d, clusters=4, bootstrap=2, draws=2, curve_draws=1)
    assert len(eff["strategies"]) == 10
    for fig in (curves_figure(eff), scatter_figure(pop, eff["minority"])):
        try:
            assert _clipped(fig) == []
        finally:
            plt.close(fig)
    # every verdict is in the curves' legends
    fig = curves_figure(eff)
    legends = [t.get_text() for a in fig.axes for t in a.get_legend().get_texts()]
    plt.close(fig)
    for s, st in eff["strategies"].items():
        for k, i in enumerate(names()):
            want = f"{s}: {st['difference'][i]['verdict']}"
            assert want in [x.replace("\n", "") for x in legends[k * 11 : (k + 1) * 11]]
