"""A pilot study as the generator of simulated studies: its export is read
(``analysis.export.load_export``; the seed analysis set, no impossible items), the registered
model — by default the seed GAMM ``outcome ~ s(distance) + s(participant, bs = "re") +
s(participant, distance, bs = "re")`` — is fitted with the project's GAMM, and the fit becomes
a ``PilotModel`` (``analysis.power.simulate``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analysis.export import ExportError, load_export
from analysis.gamm import GammInputError, fit_gamm, parse_formula
from analysis.gamm.fit import GammFit
from analysis.power.simulate import ROUNDING_CUTS, PilotModel, RandomPart
from analysis.power.spec import PowerInputError

PARTICIPANT = "participant"  # the export's participant column


def seed_formula(outcome: str, distance: str, participant: str = PARTICIPANT) -> str:
    """The seed study's GAMM in mgcv's syntax."""
    return (
        f"{outcome} ~ s({distance}) + s({participant}, bs = 're') "
        f"+ s({participant}, {distance}, bs = 're')"
    )


def model_columns(formula: str) -> tuple[str, list[str]]:
    """(outcome, the covariate columns) of a formula, each covariate once, in term order."""
    spec = parse_formula(formula)
    cols: list[str] = []
    for _term, columns in spec.term_columns:
        cols += columns
    return spec.outcome, [c for c in dict.fromkeys(cols) if c != spec.outcome]


def pilot_from_data(
    data: pd.DataFrame, formula: str, participant: str
) -> tuple[PilotModel, GammFit]:
    """Fit ``formula`` to the pilot's ratings and return the generator resampling them."""
    outcome, covariates = model_columns(formula)
    if participant not in covariates:
        raise PowerInputError(
            f"--formula: the model has no term of the participant column {participant!r}"
        )
    fit = fit_gamm(formula, data)
    rows = data[covariates].reset_index(drop=True)
    random_labels = [t.label for t in fit.design.terms if t.kind == "random"]
    mean = np.asarray(fit.predict_se(rows, exclude=random_labels)["fit"], dtype=float)
    parts = []
    for t in fit.design.terms:
        if t.kind == "random":
            sd = float(np.sqrt(fit.scale / fit.sp[t.label]))
            parts.append(RandomPart(t.spec.group, t.spec.covariate, sd))
    y = pd.to_numeric(data[outcome], errors="coerce").to_numpy(float)
    ratings = bool(np.all(np.isin(y, np.arange(1, 8))))
    codes, _ = pd.factorize(rows[participant])
    members = tuple(np.flatnonzero(codes == i) for i in range(codes.max() + 1))
    model = PilotModel(
        rows=rows,
        mean=mean,
        members=members,
        participant=participant,
        outcome=outcome,
        random=tuple(parts),
        residual_sd=float(np.sqrt(fit.scale)),
        cut_points=ROUNDING_CUTS if ratings else None,
    )
    return model, fit


def load_pilot(
    path: str | Path,
    *,
    outcome: str | None,
    distance: str | None,
    formula: str | None,
    participant: str = PARTICIPANT,
) -> tuple[PilotModel, GammFit, str]:
    """(generator, the pilot's fit, the formula) from a study export (folder or ZIP)."""
    if formula is None:
        if outcome is None or distance is None:
            raise PowerInputError("--pilot: give --outcome and --distance, or --formula")
        formula = seed_formula(outcome, distance, participant)
    elif outcome is not None or distance is not None:
        raise PowerInputError("--formula replaces --outcome/--distance; give one or the other")
    try:
        model_columns(formula)
    except GammInputError as exc:
        raise PowerInputError(f"--formula: {exc}") from None
    try:
        export = load_export(path)
    except ExportError as exc:
        raise PowerInputError(f"--pilot {exc}") from None
    try:
        model, fit = pilot_from_data(export.kept_evaluations(), formula, participant)
    except GammInputError as exc:
        raise PowerInputError(
            f"--pilot {path}: the registered model cannot be fitted: {exc}"
        ) from None
    return model, fit, formula
