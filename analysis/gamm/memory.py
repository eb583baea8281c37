"""How much memory a GAMM fit will take, known before anything of that size is built, and the
limit it is held to: a fit that would need more is refused with the figure instead of running
the machine out of memory halfway through.

The limit is, in order: the ``memory_limit`` argument of the fit (or the ``gamm`` command's
``--memory-limit``), the environment variable ``RECOURSE_GAMM_MEMORY_LIMIT``, else 80% of the
machine's physical memory. Sizes are written as ``6GB``, ``1.5G``, ``800MB`` or ``800M``
(powers of 1024; a bare number is bytes).

The estimate models the fit's own arrays (what ``tracemalloc`` sees at the fit's peak; not the
data frame passed in nor the Python process itself): linear in the rows (the model matrix of
the dense block) and in the levels of the blocked factor (its per-level blocks and the
random-effect tests' q x p_f factors), plus the dense matrices where they exist: the fixed
block's p_f x p_f algebra, the random-effect tests with at most ``DENSE_MAX_LEVELS`` levels,
the AIC's Cholesky-derivative term (p <= 1,600), and, when a grouping factor other than the
blocked one has random effects, the full p x p inverse of H. Its coefficients were set from
measured peaks and err on the high side (by up to about two times).
"""

from __future__ import annotations

import os
import re

import pandas as pd

from analysis.gamm.design import Parametric, RandomEffect, Smooth
from analysis.gamm.validate import GammInputError

ENV_VAR = "RECOURSE_GAMM_MEMORY_LIMIT"
#: share of physical memory a fit may use when no limit is set
DEFAULT_SHARE = 0.8
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
# the random-effect tests and the AIC term that switch to dense algebra below these sizes
_DENSE_RE_LEVELS = 1000
_DENSE_AIC_P = 1600


class GammMemoryError(GammInputError):
    """The fit would need more memory than the limit allows; the message gives both."""


def parse_size(text: str | int | float) -> int:
    """Bytes of a size written as 6GB, 1.5G, 800MB, 800M, 800KiB or a bare number of bytes."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        if text <= 0:
            raise GammInputError(f"memory limit must be positive, got {text!r}")
        return int(text)
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]?)(?:I?B)?\s*", str(text).upper())
    if not match or float(match.group(1)) <= 0:
        raise GammInputError(f"memory limit {text!r} is not a size such as 6GB, 1.5G or 800MB")
    return int(float(match.group(1)) * _UNITS[match.group(2)])


def physical_memory() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def memory_limit(explicit: str | int | float | None = None) -> tuple[int, str]:
    """(limit in bytes, where it came from)."""
    if explicit is not None:
        return parse_size(explicit), "memory_limit / --memory-limit"
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return parse_size(env), ENV_VAR
    total = physical_memory()
    if total is None:
        return 2**62, "no limit"
    return int(DEFAULT_SHARE * total), f"{int(DEFAULT_SHARE * 100)}% of physical memory"


def estimate_fit_bytes(
    n: int,
    p_fixed: int,
    n_groups: int,
    n_blocked_terms: int,
    n_lambda: int,
    dense_random: bool,
) -> int:
    """Peak working memory of fit + summary, in bytes (see the module docstring)."""
    q, r = n_groups, n_blocked_terms
    p = p_fixed + q * r
    cells = n * (p_fixed + 8)  # model matrix of the dense block, covariates, fitted values
    cells += q * (20 * p_fixed * (r + 1) + 64) if r else 0
    cells += 12 * p_fixed**2
    if r and q <= _DENSE_RE_LEVELS:
        cells += 10 * q**2
    elif r:  # the structured tests' moment matrices: <= ~20 bins x 24 terms x (3 p_f)^2
        cells += 20 * 24 * 9 * p_fixed**2
    if p <= _DENSE_AIC_P:
        cells += (6 + 4 * n_lambda) * p**2
    if dense_random:
        cells += 12 * p**2
    # plus Imhof's quadrature: up to 400,000 nodes with a few arrays each
    return 8 * int(cells) + 48 * 1024**2


def estimate_for_model(
    data: pd.DataFrame,
    parametric: list[Parametric],
    smooths: list[Smooth],
    by_levels: dict[str, tuple[str, ...]],
    random_effects: list[RandomEffect],
) -> int:
    """``estimate_fit_bytes`` of a model on its validated data, from the terms alone (the
    same split into a dense and a blocked part as ``design.build_design`` makes)."""
    p_fixed = 1
    for par in parametric:
        p_fixed += 1 if par.levels is None else len(par.levels) - 1
    n_lambda = 0
    for s in smooths:
        pieces = len(by_levels[s.by]) if s.by is not None else 1
        p_fixed += (s.k - 1) * pieces
        n_lambda += pieces
    counts = {r.group: int(data[r.group].nunique()) for r in random_effects}
    blocked = max(counts, key=lambda g: counts[g]) if counts else None
    r = sum(1 for re_ in random_effects if re_.group == blocked)
    dense = [re_ for re_ in random_effects if re_.group != blocked]
    p_fixed += sum(counts[re_.group] for re_ in dense)
    n_lambda += len(random_effects)
    q = counts.get(blocked, 0) if blocked is not None else 0
    return estimate_fit_bytes(len(data), p_fixed, q, r, n_lambda, bool(dense))


def format_size(size: float) -> str:
    for unit, factor in (("TB", 1024**4), ("GB", 1024**3), ("MB", 1024**2)):
        if size >= factor:
            return f"{size / factor:.1f} {unit}"
    return f"{size / 1024:.0f} KB"


def check_memory(estimate: int, explicit: str | int | float | None = None) -> None:
    """Refuse (GammMemoryError) a fit whose estimate exceeds the limit."""
    limit, source = memory_limit(explicit)
    if estimate > limit:
        raise GammMemoryError(
            f"the fit would need about {format_size(estimate)} of memory (estimate), more than "
            f"the limit of {format_size(limit)} ({source}); raise it with --memory-limit or "
            f"{ENV_VAR}, or fit fewer levels or coefficients"
        )
