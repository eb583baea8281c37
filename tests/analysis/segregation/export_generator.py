"""A small synthetic study export following docs/export.md (for the effects tests).

`participants.csv` and `evaluations.csv` of a car-loan study: each participant
sees `sparsest:1, proximate:1, random:2` (plus any `extra` strategies) in a random
display order. Recourses differ by gender on purpose — the sparsest plan raises
education for women and position for men — so that implementing them moves the
groups apart, as in the seed paper's argument. `recourse_columns` adds the
recourse's `origin`, `method` and ranks (docs/export.md), so that effects by
method can be tested on exports with and without them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from recourse_engine import FeatureSchema, carloan_schema

POOL_STRATEGIES = ("sparsest", "proximate", "random", "identity", "lowest_cost", "diverse")


def _proximity(schema: FeatureSchema, x: np.ndarray, cf: np.ndarray) -> float:
    total = 0.0
    for j, it in enumerate(schema.items):
        if x[j] != cf[j]:
            total += abs(cf[j] - x[j]) / it.span if it.is_graded else 1.0
    return total


def _raise(schema: FeatureSchema, x: np.ndarray, key: str, steps: int = 1) -> np.ndarray:
    cf = x.copy()
    j = schema.index(key)
    cf[j] = min(cf[j] + steps, schema.items[j].max_value)
    if cf[j] == x[j]:  # already at the top: lower it instead, still a change
        cf[j] = x[j] - 1
    return cf


def _random_change(schema: FeatureSchema, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    cf = x.copy()
    for j in rng.choice(schema.d, size=int(rng.integers(1, 4)), replace=False):
        it = schema.items[j]
        options = [v for v in range(1, it.n_options + 1) if v != x[j]]
        cf[j] = rng.choice(options)
    return cf


def make_export(
    directory: Path,
    n: int = 60,
    seed: int = 0,
    extra: tuple[str, ...] = (),
    action: int | None = None,
    impossible_share: float = 0.15,
    genders: tuple[str, ...] = ("female", "male"),
    gender_p: tuple[float, ...] = (0.4, 0.6),
    no_profile: int = 2,
    recourse_columns: bool = False,
) -> Path:
    """Write an export folder; `extra` strategies: 'identity' (cf = x), 'ebr' (everyone
    to one middle profile), 'apart' (women to every item's top, men to its bottom),
    any other name a random change of 1–3 items.

    `action` fixes every action rating (else random 1..7); `no_profile` participants
    are screened out before the profile (empty x_ columns, no evaluations).
    `recourse_columns`: add origin/method/sparsity_rank/proximity_rank; the pool
    strategies have origin "pool" and no method, the others origin "generated" and
    the method named before any '@' or '#' of the strategy (so 'wachter' and
    'wachter#2' share one method).
    """
    schema = carloan_schema()
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    parts, evals = [], []
    for k in range(n + no_profile):
        pid = f"p{k:04d}"
        gender = str(rng.choice(genders, p=gender_p))
        row = {
            "study": "carloan-demo",
            "participant": pid,
            "condition": "A",
            "state": "completed" if k < n else "screened_out",
            "gender": gender,
            "age": int(rng.integers(20, 65)),
            "income": int(rng.integers(3, 12)) * 1_000_000,
            "consent_version": "v1",
            "consent_at": "2026-01-05T10:00:00Z",
        }
        x = np.array([rng.integers(1, it.n_options + 1) for it in schema.items], dtype=float)
        for j, key in enumerate(schema.keys):
            row[f"x_{key}"] = int(x[j]) if k < n else None
        row |= {
            "started_at": "2026-01-05T10:00:00Z",
            "finished_at": "2026-01-05T10:20:00Z",
            "completion": "C0DE" if k < n else "",
        }
        parts.append(row)
        if k >= n:
            continue
        plan = [("sparsest", _raise(schema, x, "education" if gender == "female" else "position"))]
        plan.append(("proximate", _raise(schema, x, str(rng.choice(["service_years", "toeic"])))))
        plan += [("random", _random_change(schema, x, rng)) for _ in range(2)]
        for s in extra:
            if s == "identity":
                plan.append(("identity", x.copy()))
            elif s == "apart":
                top = [it.max_value if gender == "female" else 1 for it in schema.items]
                plan.append(("apart", np.array(top, dtype=float)))
            elif s == "ebr":  # everyone towards the same middle profile
                plan.append(
                    (
                        "ebr",
                        np.array(
                            [max(1, (it.n_options + 1) // 2) for it in schema.items], dtype=float
                        ),
                    )
                )
            else:
                plan.append((s, _random_change(schema, x, rng)))
        order = rng.permutation(len(plan)) + 1
        for (strategy, cf), position in zip(plan, order, strict=True):
            changed = [key for j, key in enumerate(schema.keys) if cf[j] != x[j]]
            impossible = [c for c in changed if rng.random() < impossible_share]
            ev = {
                "study": "carloan-demo",
                "participant": pid,
                "condition": "A",
                "gender": gender,
                "age": row["age"],
                "income": row["income"],
                "recourse": f"r{k:04d}-{position}",
                "strategy": strategy,
                "position": int(position),
                "sparsity": len(changed),
                "proximity": round(_proximity(schema, x, cf), 6),
                "changed": ";".join(changed),
                "impossible": ";".join(impossible),
                "any_impossible": int(bool(impossible)),
                "acceptance": int(rng.integers(1, 8)),
                "action": int(action) if action is not None else int(rng.integers(1, 8)),
                "seconds_on_page": round(float(rng.uniform(5, 90)), 1),
                "submitted_at": "2026-01-05T10:10:00Z",
            }
            for j, key in enumerate(schema.keys):
                ev[f"x_{key}"] = int(x[j])
            for j, key in enumerate(schema.keys):
                ev[f"cf_{key}"] = int(cf[j])
            if recourse_columns:
                pool = strategy.split("@")[0] in POOL_STRATEGIES
                ev["origin"] = "pool" if pool else "generated"
                ev["method"] = "" if pool else strategy.split("@")[0].split("#")[0]
                ev["sparsity_rank"] = int(rng.integers(1, 20))
                ev["proximity_rank"] = int(rng.integers(1, 20))
            evals.append(ev)
    pd.DataFrame(parts).to_csv(directory / "participants.csv", index=False)
    pd.DataFrame(evals).to_csv(directory / "evaluations.csv", index=False)
    return directory
