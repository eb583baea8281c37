"""A seeded generator of realistic synthetic pools for the car-loan schema.

The seed study's pool of 3,683 real profiles is not public. This generator
draws i.i.d. profiles (same items, income in JPY, gender and age) from a small
structural model a reader will recognise; every row depends only on the seed
and its own draws, so a pool of any size is reproducible. Codes follow the
schema's option order (binary items: 1 = No, 2 = Yes).

The model, in the order it is drawn:

1. gender: Male 56 %, Female 43 %, Other 1 %; age 22..69 ~ rounded N(43, 11).
2. education (HS, junior college, BA, MA, PhD): women more often junior
   college, men more often BA/MA/PhD; people over 55 one level lower with
   probability 0.2 (older cohorts).
3. career years = age − graduation age (18/20/22/24/27); a job change becomes
   likelier with age (logit −1.2 + 0.05 (age − 30)); service years = career
   years without a job change, a uniform 10–90 % of them with one.
4. position (10 levels) from a latent 0.09 career + 0.04 tenure
   + 0.45 (education − 3) + 0.5 male − 0.2 public + N(0, 1), cut at fixed
   thresholds (≈ 40 % employees, < 1 % presidents): **position rises with age
   and service years**.
5. management career: none below section chief; above it a share of the
   career that grows with the position.
6. Tokyo residence likelier with education and private employers; home
   ownership rises with age and position and falls in Tokyo.
7. working hours mostly 6–10 h, longer for higher positions, shorter (part
   time) for 15 % of women; teleworking likelier in Tokyo, with education and in
   private firms, never above working hours.
8. side jobs mostly none (younger people more); overseas work and study rare
   and likelier with education (work also with position); TOEIC taken and
   higher with education and time abroad; Facebook use falls with age;
   LinkedIn use rises with education and time abroad.
9. income (JPY): log income = log 3.0 M + 0.11 (position − 1)
   + 0.10 (education − 3) + 0.05 (management band − 1) + 0.15 Tokyo
   + 0.12 male + 0.012 min(career, 30) − 0.35 part-time hours
   + 0.03 side jobs + N(0, 0.28), rounded to 10,000 JPY, at least 800,000:
   **income rises with position, education, management career and Tokyo
   residence**.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .schema import FeatureSchema, carloan_schema

GRAD_AGE = np.array([18, 20, 22, 24, 27])
# thresholds on the position latent, calibrated once so that about 40 % are employees
POSITION_CUTS = np.array([4.76, 5.61, 6.16, 6.65, 7.15, 7.65, 8.32, 8.93, 9.55])
SERVICE_EDGES = np.array([1, 3, 5, 10, 20])
MANAGEMENT_EDGES = np.array([1, 3, 5, 10, 20])


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _bern(rng: np.random.Generator, p: np.ndarray) -> np.ndarray:
    return rng.random(p.shape) < p


def _categorical_rows(rng: np.random.Generator, probs: np.ndarray) -> np.ndarray:
    """One draw per row from row-wise probabilities; returns codes 1..k."""
    cum = np.cumsum(probs, axis=1)
    cum[:, -1] = 1.0
    return (rng.random((probs.shape[0], 1)) > cum).sum(axis=1) + 1


def synth_pool(schema: FeatureSchema | None = None, n: int = 3683, seed: int = 0) -> pd.DataFrame:
    """Draw n car-loan profiles: columns id, income (JPY), gender, age, then the items."""
    schema = schema or carloan_schema()
    expected = carloan_schema().keys
    if schema.keys != expected:
        raise ValueError(
            "synth_pool models the car-loan schema; this schema's items differ "
            f"({', '.join(sorted(set(schema.keys) ^ set(expected))) or 'order'})"
        )
    if not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    rng = np.random.default_rng(seed)

    u = rng.random(n)
    gender = np.where(u < 0.56, "Male", np.where(u < 0.99, "Female", "Other"))
    male = (gender == "Male").astype(float)
    female = gender == "Female"
    age = np.clip(np.round(rng.normal(43, 11, n)), 22, 69).astype(int)

    edu_f = np.array([0.28, 0.22, 0.42, 0.06, 0.02])
    edu_m = np.array([0.30, 0.05, 0.50, 0.11, 0.04])
    edu = _categorical_rows(rng, np.where(male[:, None] == 1, edu_m, edu_f))
    older = (age > 55) & _bern(rng, np.full(n, 0.2))
    edu = np.where(older, np.maximum(edu - 1, 1), edu)

    public = _bern(rng, np.full(n, 0.12) + 0.02 * (edu >= 3))
    career = np.maximum(age - GRAD_AGE[edu - 1], 0).astype(float)
    job_change = _bern(rng, _sigmoid(-1.2 + 0.05 * (age - 30)))
    tenure = np.where(job_change, career * rng.uniform(0.1, 0.9, n), career)
    service = np.searchsorted(SERVICE_EDGES, tenure, side="right") + 1

    latent = (
        0.09 * career
        + 0.04 * tenure
        + 0.45 * (edu - 3)
        + 0.5 * male
        - 0.2 * public
        + rng.normal(0, 1, n)
        + 2.5
    )
    position = np.searchsorted(POSITION_CUTS, latent) + 1

    manager = position >= 4
    m_years = career * rng.uniform(0.05, 0.5, n) * np.clip((position - 3) / 4, 0, 1.5)
    m_years = np.minimum(m_years, career)
    management = np.where(manager, np.searchsorted(MANAGEMENT_EDGES, m_years, side="right") + 2, 1)
    management = np.clip(management, 1, 7)

    tokyo = _bern(rng, _sigmoid(-1.3 + 0.3 * (edu - 3) + 0.2 * (~public)))
    owned = _bern(rng, _sigmoid(-2.5 + 0.08 * (age - 22) + 0.25 * (position - 1) - 0.6 * tokyo))

    hours_base = np.array([0.01, 0.03, 0.08, 0.40, 0.35, 0.10, 0.03])
    hours = _categorical_rows(rng, np.tile(hours_base, (n, 1)))
    hours = np.minimum(hours + (position >= 5) * _bern(rng, np.full(n, 0.4)), 7)
    part_time = female & _bern(rng, np.full(n, 0.15))
    hours = np.where(part_time, rng.integers(2, 4, n), hours)
    teleworks = _bern(rng, _sigmoid(-1.5 + 1.0 * tokyo + 0.4 * (edu - 3) - 0.8 * public))
    tele_hi = np.minimum(hours, 5)
    tele = np.where(teleworks & (tele_hi >= 2), rng.integers(2, 6, n), 1)
    tele = np.minimum(tele, tele_hi)

    side_base = np.array([0.85, 0.10, 0.03, 0.01, 0.005, 0.005])
    side = _categorical_rows(rng, np.tile(side_base, (n, 1)))
    young_extra = (age < 35) & _bern(rng, np.full(n, 0.08))
    side = np.where(young_extra & (side == 1), 2, side)

    overseas_work = _bern(
        rng, _sigmoid(-3.5 + 0.5 * (edu - 3) + 0.12 * (position - 1) + 0.02 * career)
    )
    overseas_study = _bern(rng, _sigmoid(-3.2 + 0.7 * (edu - 3)))
    took_toeic = _bern(
        rng, _sigmoid(-0.6 + 0.6 * (edu - 3) + 1.5 * overseas_study + 1.0 * overseas_work)
    )
    toeic_latent = (
        0.6 * (edu - 3) + 1.5 * overseas_study + 1.2 * overseas_work + rng.normal(0, 1, n)
    )
    toeic_band = np.searchsorted(np.array([-1.6, -0.9, -0.3, 0.3, 0.9, 1.6]), toeic_latent) + 2
    toeic = np.where(took_toeic, toeic_band, 1)
    facebook = _bern(rng, _sigmoid(-0.4 - 0.04 * (age - 40) + 0.3 * (edu - 3)))
    linkedin = _bern(
        rng, _sigmoid(-2.5 + 0.5 * (edu - 3) + 1.2 * overseas_work + 0.8 * overseas_study)
    )

    log_income = (
        np.log(3.0e6)
        + 0.11 * (position - 1)
        + 0.10 * (edu - 3)
        + 0.05 * (management - 1)
        + 0.15 * tokyo
        + 0.12 * male
        + 0.012 * np.minimum(career, 30)
        - 0.35 * (hours <= 3)
        + 0.03 * (side - 1)
        + rng.normal(0, 0.28, n)
    )
    income = np.maximum(np.round(np.exp(log_income), -4), 800_000).astype(np.int64)

    width = len(str(n))
    frame = pd.DataFrame(
        {
            "id": [f"P{i:0{width}d}" for i in range(1, n + 1)],
            "income": income,
            "gender": gender,
            "age": age,
            "residence_prefecture": np.where(tokyo, 1, 2),
            "residence_type": np.where(owned, 1, 2),
            "education": edu,
            "workplace": np.where(public, 2, 1),
            "position": position,
            "service_years": service,
            "management_career": management,
            "working_hours": hours,
            "teleworking_hours": tele,
            "side_jobs": side,
            "job_change": job_change + 1,
            "overseas_work": overseas_work + 1,
            "overseas_study": overseas_study + 1,
            "toeic": toeic,
            "facebook": facebook + 1,
            "linkedin": linkedin + 1,
        }
    )
    for key in schema.keys:
        frame[key] = frame[key].astype(np.int64)
    return frame
