"""Segregation results as pandas data frames, for notebooks and for R.

* ``IndexResult.to_frame()``: one row (n, minority, eps and the indices), so that the
  results of several populations concatenate into one table;
* ``EffectsResult`` — what ``compute_effects`` returns: still the JSON-ready dict the
  report and ``effects.json`` are written from, plus ``to_frame()`` (one row per arm and
  index: before, after, change with its bootstrap interval, p-values and verdicts, partial
  compliance),
  ``curves()`` (the compliance curves, long) and a notebook view.

Views of the numbers already computed: nothing is recomputed here.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .catalogue import names

EFFECT_COLUMNS = [
    "grouping",
    "arm",
    "index",
    "before",
    "after",
    "difference",
    "ci_low",
    "ci_high",
    "bootstrap_mean",
    "p",
    "p_holm",
    "verdict",
    "verdict_95",
    "n_shown",
    "partial_mean",
    "partial_q025",
    "partial_q975",
]


def index_frame(result: Any) -> pd.DataFrame:
    """One row: n, n_minority, minority, eps and each catalogue index."""
    row = result.to_json()
    row["n_minority"] = int(result.n_minority)
    order = ["n", "n_minority", "minority", "eps", *names()]
    return pd.DataFrame([{k: row[k] for k in order}])


def _arms(effects: dict[str, Any]):
    yield from (("strategy", name, arm) for name, arm in effects["strategies"].items())
    for grouping, table in sorted(effects.get("by", {}).items()):
        yield from ((grouping, name, arm) for name, arm in table.items())


def effects_frame(effects: dict[str, Any]) -> pd.DataFrame:
    """One row per (grouping, arm, index) of a ``compute_effects`` result."""
    rows = []
    for grouping, name, arm in _arms(effects):
        for i in names():
            d = arm["difference"][i]
            ci = d["ci95"] or [float("nan"), float("nan")]
            part = arm["partial"][i]
            rows.append(
                [
                    grouping,
                    name,
                    i,
                    effects["before"][i],
                    arm["after"][i],
                    d["estimate"],
                    ci[0],
                    ci[1],
                    d["bootstrap_mean"],
                    d.get("p"),
                    d.get("p_holm"),
                    d["verdict"],
                    d.get("verdict_95"),
                    arm["n_shown"],
                    part["mean"],
                    part["q025"],
                    part["q975"],
                ]
            )
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS)


def curves_frame(effects: dict[str, Any]) -> pd.DataFrame:
    """The compliance curves, long: grouping, arm, pi, index, value (mean over draws)."""
    rows = []
    for grouping, name, arm in _arms(effects):
        curve = arm["curve"]
        for j, pi in enumerate(curve["pi"]):
            rows += [[grouping, name, pi, i, curve[i][j]] for i in names()]
    return pd.DataFrame(rows, columns=["grouping", "arm", "pi", "index", "value"])


class EffectsResult(dict):
    """The effects as the JSON-ready dict (``json.dumps`` works as before) with frames."""

    def to_frame(self) -> pd.DataFrame:
        return effects_frame(self)

    def curves(self) -> pd.DataFrame:
        return curves_frame(self)

    def _repr_html_(self) -> str:
        head = (
            f"<p><b>Segregation effects</b>: {self['n_participants']} participants, minority "
            f"{self['minority']!s} ({self['n_minority']}), {self['bootstrap']} bootstrap draws; "
            "worse/better only where the 95% interval excludes 0 and the Holm-adjusted p "
            "across the table is below 0.05</p>"
        )
        table = self.to_frame()[
            ["grouping", "arm", "index", "before", "after", "difference", "ci_low", "ci_high"]
            + ["p_holm", "verdict"]
        ]
        return head + table.to_html(index=False, float_format=lambda v: f"{v:.4f}")
