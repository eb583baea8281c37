"""Recourse methods as study strategies: their settings, what they need, their fit on a pool.

A design part named after a method (`wachter:1`, `ebr_generated:1`; the strategy table's
`generates`) shows that method's counterfactual for the participant's own profile.
`RecourseMethod.get_counterfactuals` already decodes to valid codes, enforces fixed/up/down
and reports a profile the decision model does not approve as invalid; the selection
(`recourse_engine.selection`) ranks what it returns among the admissible pool candidates and
applies the study's fallback. This module holds what a study needs around a method:

* its settings (`method_settings`): constructor parameters checked against the method's own
  fields, the protected group of a method fitted on two groups (a pool column or schema
  item), the structural model of one that needs it, `robust: true` (a multi-wave study's
  "robust plans": a counterfactual some model of the study's set rejects falls back);
  anything else is refused with a message naming the method and reason;
* what it needs of the study (`method_problem`): a decision model that judges a profile by
  its items alone (a generated profile has no income, so neither the income rule nor a
  model trained with income can judge it), and a differentiable one for a method that
  follows the gradient;
* its fit on the study's pool (`fit_on_pool`), the object a study stores and every worker
  reuses.

What a method needs is read from its class's `capabilities`
(`recourse_engine.methods.capabilities`), never from its name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .strategies import get_strategy, method_names

if TYPE_CHECKING:
    from .decision import DecisionModel
    from .methods.base import RecourseMethod
    from .methods.capabilities import Capabilities
    from .pool import Pool
    from .schema import FeatureSchema

#: what a study shows when a method gives no usable counterfactual for a profile
FALLBACKS = ("nearest_pool", "fewer")

#: the protected group of the group-fair methods when the study names none (as the pool
#: variants `ebr` / `ibr` read it)
DEFAULT_GROUP = "gender"

_JSON_SCALARS = (bool, int, float, str, type(None))


@dataclass(frozen=True)
class MethodSettings:
    """A method's settings in a study: constructor `params`, and the `group` (a method fitted
    on two groups, `capabilities.group_column`: EBR, IBR) or linear structural model `scm`
    (`capabilities.scm`, causal: child item -> parent item -> weight)."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    group: str | None = None
    scm: dict[str, dict[str, float]] | None = None
    #: prefer counterfactuals every model of the study's set approves (multi-wave studies):
    #: one that a model of the set rejects is replaced by the study's fallback
    robust: bool = False

    def group_names(self) -> str | None:
        """The protected group's pool column or item (two joined by a comma: their
        intersection) for methods that take one; None for the others."""
        needs = method_class(self.name).capabilities
        if needs.group_column:
            return self.group or DEFAULT_GROUP
        if needs.group_param:
            return self.params.get("group") or DEFAULT_GROUP
        return None

    def recorded(self) -> dict[str, Any]:
        """Every parameter the method runs with (defaults included), JSON-ready: what each
        generated recourse records."""
        out: dict[str, Any] = {}
        for key, f in method_class(self.name).study_params().items():
            value = self.params.get(key, _default(f))
            if isinstance(value, (*_JSON_SCALARS, list, tuple, dict)):
                out[key] = list(value) if isinstance(value, tuple) else value
        group = self.group_names()
        if group is not None:
            out["group"] = group
        if self.scm is not None:
            out["scm"] = self.scm
        if self.robust:
            out["robust"] = True
        return out


def _error(message: str) -> Exception:
    from .methods.base import MethodError

    return MethodError(message)


def _default(f: Any) -> Any:
    if f.default is not MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not MISSING else None


def method_class(name: str) -> type[RecourseMethod]:
    """The method class of a name in the strategy table; MethodError for anything else."""
    if name not in method_names():
        raise _error(f"unknown recourse method {name!r}; known: {', '.join(method_names())}")
    return get_strategy(name).method  # type: ignore[return-value]


def capabilities(name: str) -> Capabilities | None:
    """What the method of this name needs of a study; None for a name that is no method."""
    return method_class(name).capabilities if name in method_names() else None


def _scm(name: str, value: Any, schema: FeatureSchema | None) -> dict[str, dict[str, float]]:
    if not isinstance(value, Mapping) or not value:
        raise _error(
            f"{name}: needs a structural causal model: set its 'scm' to "
            "{child item: {parent item: weight}} (without one the method assumes the items "
            "independent, which a study must state rather than assume)"
        )
    out: dict[str, dict[str, float]] = {}
    for child, parents in value.items():
        if not isinstance(parents, Mapping) or not parents:
            raise _error(f"{name}: scm[{child!r}] must map parent items to weights")
        weights: dict[str, float] = {}
        for parent, w in parents.items():
            if isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w):
                raise _error(f"{name}: scm[{child!r}][{parent!r}] must be a finite number")
            weights[str(parent)] = float(w)
        out[str(child)] = weights
    if schema is not None:
        for node in {*out, *(p for ws in out.values() for p in ws)}:
            if node not in schema.keys:
                raise _error(f"{name}: scm names {node!r}, which is not a profile item")
            if schema.item(node).type == "categorical":
                raise _error(
                    f"{name}: scm node {node!r} is categorical; nodes must be ordinal, "
                    "binary or numeric items"
                )
    return out


def _check_value(name: str, key: str, value: Any, annotation: str) -> None:
    """A JSON value of the kind the parameter's annotation asks for: an object only for a
    mapping, a list only for a sequence, numbers or text inside them."""
    if isinstance(value, Mapping):
        ok = "dict" in annotation or "Mapping" in annotation
        items = list(value.values())
    elif isinstance(value, list):
        ok = any(t in annotation for t in ("tuple", "list", "Sequence"))
        items = value
    else:
        ok, items = True, [value]
    if not ok or not all(isinstance(v, _JSON_SCALARS) for v in items):
        raise _error(f"{name}: parameter {key!r} must be a number or text, not {value!r}")


def method_settings(
    name: str, raw: Mapping[str, Any] | None = None, schema: FeatureSchema | None = None
) -> MethodSettings:
    """The method's settings from a study's JSON, checked (MethodError names the method and
    the problem). With `schema`, items named by the settings are checked against it."""
    cls = method_class(name)
    needs = cls.capabilities
    if raw is not None and not isinstance(raw, Mapping):
        raise _error(f"{name}: settings must be an object of parameter -> value")
    params = dict(raw or {})
    robust = params.pop("robust", False)
    if not isinstance(robust, bool):
        raise _error(f"{name}: 'robust' must be true or false, not {robust!r}")
    group = params.pop("group", None) if needs.group_column else None
    if group is not None and (not isinstance(group, str) or not group.strip()):
        raise _error(f"{name}: 'group' must name a pool column or profile item")
    scm = _scm(name, params.pop("scm", None), schema) if needs.scm else None
    types = {key: str(f.type) for key, f in cls.study_params().items()}
    known = sorted(types)
    for key, value in params.items():
        if key not in known:
            raise _error(f"{name}: unknown parameter {key!r}; known: {', '.join(known)}")
        _check_value(name, key, value, types[key])
    if schema is not None:
        for param in needs.item_params:
            for key in params.get(param) or []:
                if key not in schema.keys:
                    raise _error(f"{name}: {param} {key!r} is not a profile item")
    if needs.group_param and not params.get("group"):
        params["group"] = DEFAULT_GROUP  # a group-fair method needs one; the study's default
    settings = MethodSettings(name, params, group, scm, robust)
    method = method_build(settings)
    check = getattr(method, "_check", None)
    if callable(check):
        check()
    scm_model = getattr(method, "scm", None)
    if scm_model is not None:
        scm_model.order()  # a cycle in the causal graph is refused here, not at the fit
    return settings


def method_build(settings: MethodSettings) -> RecourseMethod:
    """A fresh, unfitted method with the settings' parameters."""
    cls = method_class(settings.name)
    extra: dict[str, Any] = {}
    if settings.scm is not None:
        from .methods.causal import AdditiveSCM

        extra["scm"] = AdditiveSCM.linear(settings.scm)
    try:
        return cls(**settings.params, **extra)
    except (TypeError, ValueError) as exc:
        raise _error(f"{settings.name}: {exc}") from None


def method_problem(name: str, model: DecisionModel) -> str | None:
    """Why the method cannot generate recourses judged by this decision model (None: it can)."""
    if getattr(model, "relative_to_factual", False):
        return (
            f"{name} generates profiles that have no income, which the income rule cannot "
            "judge (it compares a profile's income with the participant's); upload a decision "
            "model trained on the profile items"
        )
    if getattr(model, "use_income", False):
        return (
            f"{name} generates profiles that have no income, but the decision model was "
            "trained with income; upload one trained on the profile items alone"
        )
    needs = capabilities(name)
    if needs is not None and needs.gradient:
        from .methods.base import MethodError
        from .methods.differentiable import torch_logit

        try:
            torch_logit(model)
        except MethodError as exc:
            return f"{name} follows the decision model's gradient: {exc}"
    return None


@dataclass
class PoolData:
    """The study's pool in the shape the methods' `fit` reads (a Dataset's fields)."""

    name: str
    schema: FeatureSchema
    codes: np.ndarray
    y: np.ndarray
    group: np.ndarray
    sensitive: str = ""
    extra: Any = None


def pool_data(
    settings: MethodSettings, schema: FeatureSchema, pool: Pool, model: DecisionModel
) -> PoolData:
    """The pool as training data; for a method fitted on two groups (`group_column`: EBR,
    IBR) only the rows in one of them. A method that names its group itself (`group_param`:
    fair_rl) reads it from the pool's columns or items, which must exist."""
    from .methods.base import pool_groups

    codes = pool.codes
    group = np.zeros(len(pool), dtype=int)
    sensitive = ""
    names = settings.group_names()
    two_groups = method_class(settings.name).capabilities.group_column
    if names is not None and not two_groups:
        for column in names.split(","):
            pool_groups(pool, None, column.strip(), settings.name, schema)  # refuses a missing one
    if two_groups:
        column = settings.group or DEFAULT_GROUP
        group, item = pool_groups(pool, None, column, settings.name, schema)
        keep = group >= 0
        codes, group = codes[keep], group[keep]
        sensitive = item or ""
    y = np.asarray(model.approves(codes), dtype=int)
    extra = pool.extra.reset_index(drop=True)
    if len(codes) != len(extra):  # a method fitted on two groups: the rows kept above
        extra = extra[keep].reset_index(drop=True)
    return PoolData(f"{settings.name} pool", schema, codes, y, group, sensitive, extra)


def fit_on_pool(
    settings: MethodSettings,
    schema: FeatureSchema,
    pool: Pool,
    model: DecisionModel,
    progress: Callable[[int, int], None] | None = None,
) -> RecourseMethod:
    """The method fitted on the study's pool against its decision model. `progress(done,
    total)` is called while it trains (and once at the end); it is not kept, so the fitted
    method pickles."""
    problem = method_problem(settings.name, model)
    if problem:
        raise _error(problem)
    method = method_build(settings)
    if progress is not None:
        method.progress = progress  # type: ignore[assignment]
    try:
        method.fit(pool_data(settings, schema, pool, model), model)
    finally:
        method.progress = False
    if progress is not None:
        progress(1, 1)
    return method


def generate(method: RecourseMethod, codes: np.ndarray) -> tuple[np.ndarray | None, str]:
    """One profile's counterfactual (valid item codes) and the method's status for it."""
    result = method.get_counterfactuals(np.asarray(codes, dtype=float)[None, :])
    status = str(result.status[0])
    return (result.counterfactuals[0].copy() if result.valid[0] else None), status


@dataclass
class Generator:
    """One generating design part's method in a study: fitted, or why it is not usable now
    (then the fallback applies for every profile)."""

    settings: MethodSettings
    method: RecourseMethod | None = None
    fit_version: str = ""
    unavailable: str = ""
    recorded: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.recorded:
            self.recorded = self.settings.recorded()
