"""A study's registration bundle as the analysis reads it (`recourse-analysis registered`).

The study side (`recourse-study study register`, `studyapp.prereg.bundle`) freezes the bundle:
the study file and the analysis plan (outcomes, model formulas, exclusion rules, seeds,
planned sample) as canonical JSON whose SHA-256 is the registration's hash, printed in the
`registration.md` written beside it. The analysis may not import the study side, so this
module reads the file: it checks the bytes against the recorded hash and the study file
against its own hash, checks the plan's shape, refuses an exclusion rule it does not apply
(`analysis.study.selection.EVALUATION_RULES`), and says which of the registered formulas are
the seed study's GAMMs and which the method comparison's models — by parsing a formula and
writing it again with the very functions that write the registered ones (`seed_formula`,
`methods_report.model_formulas`), so a formula is only recognised when it is exactly one of
those models.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis import contract as c
from analysis.study.methods_report import model_formulas
from analysis.study.selection import EVALUATION_RULES, PARTICIPANT

BUNDLE_FORMAT = "recourse-study-registration"
BUNDLE_VERSIONS = (1,)
#: the line of registration.md (studyapp.prereg.markdown) that records the bundle's hash
MARKDOWN_HASH = re.compile(r"Bundle SHA-256: `([0-9a-f]{64})`")
#: the exclusion rules a bundle may hold: those the study applies while it runs (their outcome
#: is in the export: a participant who failed the attention checks, a refused Continue, the
#: approved branch) and `analysis`, the evaluations the analysis drops
EXCLUSION_KEYS = ("attention", "speed", "approved_branch", "analysis")
SEED = "seed"
METHODS = "methods"


class RegistrationError(ValueError):
    """A bundle (or an export) the registered run cannot use; one line naming the problem."""


def seed_formula(outcome: str, distance: str, k: int) -> str:
    """The seed study's GAMM (`analysis.gamm.fit_gamm` without a formula: a thin-plate smooth
    of the distance, a random intercept and a random slope of the distance per participant)
    in mgcv's syntax; the study side registers the four models with it."""
    re_ = f"s({PARTICIPANT}, bs = 're')"
    slope = f"s({PARTICIPANT}, {distance}, bs = 're')"
    return f"{outcome} ~ s({distance}, k = {k}) + {re_} + {slope}"


def canonical_json(doc: Any) -> bytes:
    """The byte form the study side hashes (`studyapp.definition.study_file.canonical_json`)."""
    text = json.dumps(
        doc, sort_keys=True, indent=2, separators=(",", ": "), ensure_ascii=False,
        allow_nan=False,
    )  # fmt: skip
    return (text + "\n").encode("utf-8")


def normalised(formula: str) -> str:
    """A formula without white space and with one kind of quote, for comparing two."""
    return "".join(formula.split()).replace('"', "'")


@dataclass
class RegisteredModel:
    """One registered model; `kind` is SEED, METHODS or "" (not one this command fits, `why`)."""

    name: str
    formula: str
    kind: str = ""
    outcome: str = ""
    distance: str = ""
    k: int = 0
    factor: str = ""
    why: str = ""

    @property
    def group(self) -> tuple[str, str, str, int]:
        """Models fitted together: the seed report per k, the method report per factor,
        distance and k."""
        if self.kind == SEED:  # one report holds the four models
            return (SEED, "", "", self.k)
        return (self.kind, self.factor, self.distance, self.k)


@dataclass
class Registration:
    path: Path
    sha256: str
    hash_source: str
    title: str
    outcomes: list[str]
    models: list[RegisteredModel]
    rules: list[str]
    planned: int | None
    plan: dict[str, Any]


_SEED = re.compile(
    r"^(\w+)~s\((\w+),k=(\d+)\)\+s\(participant,bs='re'\)\+s\(participant,(\w+),bs='re'\)$"
)
_COMMON = re.compile(r"^(\w+)~(\w+)\+s\((\w+),k=(\d+)\)\+s\(participant,bs='re'\)$")
_BY = re.compile(r"^(\w+)~(\w+)\+s\((\w+),by=\w+,k=(\d+)\)\+s\(participant,bs='re'\)$")
_NOT_FITTED = (
    "not of the seed study's form (y ~ s(d, k = K) + s(participant, bs = 're') + "
    "s(participant, d, bs = 're')) nor of the method comparison's; this command fits only "
    "those (fit it with `recourse-analysis gamm`)"
)


def classify(name: str, formula: str) -> RegisteredModel:
    """Which of the project's analyses fits `formula` (see the module's docstring)."""
    model = RegisteredModel(name, formula)
    text = normalised(formula)
    if m := _SEED.match(text):
        outcome, distance, k = m.group(1), m.group(2), int(m.group(3))
        if normalised(seed_formula(outcome, distance, k)) == text:
            model.kind, model.outcome, model.distance, model.k = SEED, outcome, distance, k
    elif m := _COMMON.match(text) or _BY.match(text):
        outcome, factor, distance, k = m.group(1), m.group(2), m.group(3), int(m.group(4))
        if text in {normalised(f) for f in model_formulas(outcome, factor, distance, k)}:
            model.kind, model.outcome, model.distance, model.k = METHODS, outcome, distance, k
            model.factor = factor
    if model.kind and model.outcome not in c.RATING_COLUMNS:
        model.kind, model.why = "", f"its outcome {model.outcome!r} is not a rating"
    elif model.kind and model.distance not in c.DISTANCE_COLUMNS:
        model.kind, model.why = "", f"its distance {model.distance!r} is not one of the export's"
    elif model.kind and model.k < 3:
        model.kind, model.why = "", f"its basis dimension k = {model.k} is below 3"
    elif not model.kind:
        model.why = _NOT_FITTED
    return model


def _recorded_hash(path: Path, sha256: str | None) -> tuple[str, str]:
    if sha256 is not None:
        if not re.fullmatch(r"[0-9a-fA-F]{64}", sha256):
            raise RegistrationError(f"--sha256 {sha256!r}: not a SHA-256 (64 hex digits)")
        return sha256.lower(), "--sha256"
    md = path.with_name("registration.md")
    if not md.is_file():
        raise RegistrationError(
            f"{path}: no recorded hash to check it against: {md} is missing; give --sha256 "
            "with the hash the registration was filed with"
        )
    found = MARKDOWN_HASH.search(md.read_text(encoding="utf-8", errors="replace"))
    if found is None:
        raise RegistrationError(f"{md}: holds no 'Bundle SHA-256' line to check {path} against")
    return found.group(1), str(md)


def _need(node: Any, kind: type | tuple[type, ...], where: str, path: Path) -> Any:
    if not isinstance(node, kind):
        raise RegistrationError(f"{path}: {where}: missing or of the wrong type")
    return node


def read_registration(path: Path | str, sha256: str | None = None) -> Registration:
    """The bundle at `path`, checked: its SHA-256 is the recorded one (`--sha256`, else the
    registration.md beside it), its study file matches `study_file_sha256`, its plan has the
    registered outcomes, models, exclusion rules and sample, and every exclusion rule is one
    the analysis applies. Raises RegistrationError naming the first problem."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RegistrationError(f"--registration {path}: cannot read it ({exc.strerror})") from None
    expected, source = _recorded_hash(path, sha256)
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise RegistrationError(
            f"{path}: SHA-256 {actual} does not match the registered {expected} ({source}): "
            "the bundle was changed after it was registered"
        )
    try:
        bundle = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RegistrationError(f"{path}: not a JSON document ({exc})") from None
    _need(bundle, dict, "the document", path)
    if bundle.get("format") != BUNDLE_FORMAT:
        raise RegistrationError(f"{path}: format {bundle.get('format')!r} is not {BUNDLE_FORMAT!r}")
    if bundle.get("format_version") not in BUNDLE_VERSIONS:
        raise RegistrationError(
            f"{path}: format_version {bundle.get('format_version')!r} is not one this version "
            f"reads ({', '.join(map(str, BUNDLE_VERSIONS))})"
        )
    doc = _need(bundle.get("study_file"), dict, "study_file", path)
    inner = hashlib.sha256(canonical_json(doc)).hexdigest()
    if inner != bundle.get("study_file_sha256"):
        raise RegistrationError(
            f"{path}: study_file's SHA-256 {inner} does not match its study_file_sha256 "
            f"{bundle.get('study_file_sha256')!r}"
        )
    return _read_plan(path, actual, source, bundle)


def _read_plan(path: Path, sha: str, source: str, bundle: dict[str, Any]) -> Registration:
    plan = _need(bundle.get("analysis_plan"), dict, "analysis_plan", path)
    outcomes = _need(plan.get("outcomes"), dict, "analysis_plan.outcomes", path)
    primary = _need(outcomes.get("primary"), list, "analysis_plan.outcomes.primary", path)
    names = [
        _need(_need(o, dict, f"analysis_plan.outcomes.primary[{i}]", path).get("name"), str,
              f"analysis_plan.outcomes.primary[{i}].name", path)
        for i, o in enumerate(primary)
    ]  # fmt: skip
    if not names:
        raise RegistrationError(f"{path}: analysis_plan.outcomes.primary: no outcome registered")
    models = _need(plan.get("models"), dict, "analysis_plan.models", path)
    if not models:
        raise RegistrationError(f"{path}: analysis_plan.models: no model registered")
    for name, formula in models.items():
        _need(formula, str, f"analysis_plan.models.{name}", path)
    exclusions = _need(plan.get("exclusions"), dict, "analysis_plan.exclusions", path)
    for key in exclusions:
        if key not in EXCLUSION_KEYS:
            raise RegistrationError(
                f"{path}: analysis_plan.exclusions.{key}: unknown exclusion rule "
                f"(known: {', '.join(EXCLUSION_KEYS)})"
            )
    rules = _need(exclusions.get("analysis", []), list, "analysis_plan.exclusions.analysis", path)
    for i, rule in enumerate(rules):
        if rule not in EVALUATION_RULES:
            raise RegistrationError(
                f"{path}: analysis_plan.exclusions.analysis[{i}]: unknown exclusion rule "
                f"{rule!r}; the analysis applies: " + "; ".join(EVALUATION_RULES)
            )
    sample = _need(plan.get("sample", {}), dict, "analysis_plan.sample", path)
    planned = sample.get("planned_participants")
    if planned is not None and (isinstance(planned, bool) or not isinstance(planned, int)):
        raise RegistrationError(
            f"{path}: analysis_plan.sample.planned_participants: not a whole number"
        )
    settings = bundle["study_file"].get("settings")
    title = settings.get("title") if isinstance(settings, dict) else None
    return Registration(
        path=path,
        sha256=sha,
        hash_source=source,
        title=title if isinstance(title, str) else "",
        outcomes=names,
        models=[classify(name, formula) for name, formula in models.items()],
        rules=list(rules),
        planned=planned,
        plan=plan,
    )
