"""Simulated studies: from stated effects (``StatedModel``, an ``EffectSpec``) or from a pilot
study's fitted GAMM (``PilotModel``). Each draws one data set of ``n`` participants from the
generator it is handed, so a data set depends only on that generator's seed.

A pilot is resampled by participant: ``n`` pilot participants drawn with replacement keep
their rows' covariates (distance, strategy, ...) and the model's population mean there (the
fit without its random-effect terms); each drawn participant then gets new random effects from
the fitted variance components (sd = sqrt(scale / sp), as gam.vcomp) and new normal residuals
(sd = sqrt(scale)); ratings on the 1..7 scale are the latent value rounded (cut points 1.5 ..
6.5) — the Gaussian GAMM's own reading of a rating.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.power.spec import BETWEEN, EffectSpec

#: the pilot's latent values are rounded to the 1..7 scale at these cut points
ROUNDING_CUTS = (1.5, 2.5, 3.5, 4.5, 5.5, 6.5)


def ids(n: int) -> np.ndarray:
    """Participant ids p00001..: zero-padded, so that text order is draw order."""
    return np.array([f"p{i:05d}" for i in range(1, n + 1)])


def to_ratings(latent: np.ndarray, cuts: tuple[float, ...]) -> np.ndarray:
    """1 + the number of cut points below each latent value."""
    return 1 + np.searchsorted(np.asarray(cuts), latent, side="left")


def default_formula(spec: EffectSpec) -> str:
    """The model a stated study is analysed with: its factors, the distance smooth, the
    participant intercept and (where slopes vary) the participant slope."""
    terms = list(spec.contrasts)
    if spec.smooth is not None and spec.distance is not None:
        terms.append(f"s({spec.distance.name}, bs = '{spec.basis}', k = {spec.k})")
    terms.append(f"s({spec.participant}, bs = 're')")
    if spec.distance is not None and spec.slope_sd > 0:
        terms.append(f"s({spec.participant}, {spec.distance.name}, bs = 're')")
    return f"{spec.outcome} ~ " + " + ".join(terms)


@dataclass(frozen=True)
class StatedModel:
    """Studies drawn from stated effects (see ``analysis.power.spec``)."""

    spec: EffectSpec

    @property
    def participant(self) -> str:
        return self.spec.participant

    @property
    def outcome(self) -> str:
        return self.spec.outcome

    @property
    def cut_points(self) -> tuple[float, ...] | None:
        return self.spec.cut_points

    @property
    def columns(self) -> list[str]:
        s = self.spec
        return [s.participant, *([s.distance.name] if s.distance else []), *s.contrasts, s.outcome]

    def factor_levels(self) -> dict[str, tuple[str, ...]]:
        return {f: tuple(sorted(levels)) for f, levels in self.spec.contrasts.items()}

    def simulate(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        s = self.spec
        r = s.ratings
        who = np.repeat(np.arange(n), r)
        out: dict[str, np.ndarray] = {s.participant: np.repeat(ids(n), r)}
        latent = np.full(n * r, s.intercept)
        x = None
        if s.distance is not None:
            x = s.distance.draw(rng, n * r)
            out[s.distance.name] = x
            if s.smooth is not None:
                latent += s.smooth(x, s.distance.low, s.distance.high)
        for factor, effects in s.contrasts.items():
            levels = list(effects)
            plan = s.allocation.get(factor)
            if plan == BETWEEN:
                idx = np.repeat(np.arange(n) % len(levels), r)
            elif isinstance(plan, dict):
                one = np.repeat(np.arange(len(levels)), [plan[lv] for lv in levels])
                idx = np.tile(one, n)
            else:  # each rating's level drawn at random
                idx = rng.integers(len(levels), size=n * r)
            out[factor] = np.array(levels, dtype=object)[idx]
            latent += np.array([effects[lv] for lv in levels])[idx]
        b0 = rng.normal(0.0, s.intercept_sd, size=n)
        b1 = rng.normal(0.0, s.slope_sd, size=n)
        latent += b0[who]
        if x is not None:
            latent += b1[who] * x
        latent += rng.normal(0.0, s.residual_sd, size=n * r)
        out[s.outcome] = latent if s.cut_points is None else to_ratings(latent, s.cut_points)
        return pd.DataFrame(out)


@dataclass(frozen=True)
class RandomPart:
    """One random-effect term of the pilot's fit: its grouping column, covariate and sd."""

    group: str
    covariate: str | None
    sd: float


@dataclass(frozen=True)
class PilotModel:
    """Studies resampled from a pilot study and its fitted model (module docstring)."""

    rows: pd.DataFrame  # the pilot's covariates, one row per rating
    mean: np.ndarray  # the fit's population mean at each row
    members: tuple[np.ndarray, ...]  # row indices of each pilot participant
    participant: str
    outcome: str
    random: tuple[RandomPart, ...]
    residual_sd: float
    cut_points: tuple[float, ...] | None

    @property
    def columns(self) -> list[str]:
        return [*self.rows.columns, self.outcome]

    def factor_levels(self) -> dict[str, tuple[str, ...]]:
        return {
            c: tuple(sorted(self.rows[c].astype(str).unique()))
            for c in self.rows.columns
            if c != self.participant and not pd.api.types.is_numeric_dtype(self.rows[c])
        }

    def simulate(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        drawn = rng.integers(len(self.members), size=n)
        take = np.concatenate([self.members[i] for i in drawn])
        sizes = np.array([self.members[i].size for i in drawn])
        data = self.rows.iloc[take].reset_index(drop=True)
        data[self.participant] = np.repeat(ids(n), sizes)
        latent = self.mean[take].copy()
        for part in self.random:
            codes, uniques = pd.factorize(data[part.group])
            b = rng.normal(0.0, part.sd, size=len(uniques))[codes]
            latent += b if part.covariate is None else b * data[part.covariate].to_numpy(float)
        latent += rng.normal(0.0, self.residual_sd, size=latent.size)
        data[self.outcome] = (
            latent if self.cut_points is None else to_ratings(latent, self.cut_points)
        )
        return data
