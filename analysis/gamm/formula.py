"""mgcv's model formulas, read into this package's terms.

Analysts write ``y ~ strategy + s(proximity, by = strategy) + s(uid, bs = 're')`` in R; they
should be able to paste the same line here. patsy (statsmodels' formula engine) evaluates every
term as a Python call on the data and has no notion of a penalized term, a basis, ``by`` or
``bs = "re"``, so it cannot say which columns a smooth owns or which penalty it carries. The
right-hand side of the subset of mgcv's syntax used here is, however, a valid Python expression,
so it is read with Python's own ``ast`` and every node is checked: anything outside the subset
(interactions, ``te()``, transformations, removing the intercept...) is refused by name.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from analysis.gamm.design import RandomEffect, Smooth
from analysis.gamm.validate import GammInputError

SUPPORTED = (
    "terms joined by '+': a column name (numeric covariate or factor), s(x), "
    "s(x, bs = 'tp'|'cr', k = K), s(x, by = factor), s(g, bs = 're'), s(g, x, bs = 're')"
)


@dataclass
class FormulaSpec:
    """A parsed formula: the outcome and its terms in formula order."""

    text: str
    outcome: str
    parametric: list[str] = field(default_factory=list)
    smooths: list[Smooth] = field(default_factory=list)
    random_effects: list[RandomEffect] = field(default_factory=list)
    term_columns: list[tuple[str, list[str]]] = field(default_factory=list)  # (term, columns)

    def check_columns(self, columns) -> None:
        """Refuse, naming the term, a formula that uses a column the data lack."""
        have = set(columns)
        for term, cols in [(self.outcome, [self.outcome]), *self.term_columns]:
            missing = [c for c in cols if c not in have]
            if missing:
                raise GammInputError(
                    f"formula: term {term!r} names column(s) {', '.join(missing)} missing from "
                    f"the data (columns present: {', '.join(map(str, columns)) or 'none'})"
                )


def _refuse(term: str, why: str) -> GammInputError:
    return GammInputError(f"formula: unsupported term {term!r}: {why} (supported: {SUPPORTED})")


def _flatten(node: ast.expr, text: str) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _flatten(node.left, text) + _flatten(node.right, text)
    return [node]


def _constant(node: ast.expr, term: str, name: str) -> object:
    if not isinstance(node, ast.Constant):
        raise _refuse(term, f"{name} must be a literal")
    return node.value


def _smooth(node: ast.Call, term: str) -> Smooth | RandomEffect:
    args = []
    for a in node.args:
        if not isinstance(a, ast.Name):
            raise _refuse(term, "arguments of s() must be column names")
        args.append(a.id)
    opts: dict[str, object] = {}
    for kw in node.keywords:
        if kw.arg == "by":
            if not isinstance(kw.value, ast.Name):
                raise _refuse(term, "by must name a factor column")
            opts["by"] = kw.value.id
        elif kw.arg in ("bs", "k"):
            opts[kw.arg] = _constant(kw.value, term, kw.arg)
        else:
            raise _refuse(term, f"argument {kw.arg!r} of s() is not supported")
    bs = opts.get("bs", "tp")
    if bs == "re":
        if len(args) not in (1, 2) or "by" in opts or "k" in opts:
            raise _refuse(term, "a random effect is s(group, bs = 're') or s(group, x, bs = 're')")
        return RandomEffect(args[0], args[1] if len(args) == 2 else None)
    if bs not in ("tp", "cr"):
        raise _refuse(term, f"basis {bs!r} is not supported (tp, cr, re)")
    if len(args) != 1:
        raise _refuse(term, "smooths of more than one covariate are not supported")
    k = opts.get("k", 10)
    if not isinstance(k, int) or isinstance(k, bool) or k < 3:
        raise _refuse(term, f"k must be an integer >= 3, got {k!r}")
    by = opts.get("by")
    return Smooth(args[0], str(bs), int(k), by if isinstance(by, str) else None)


def parse_formula(text: str) -> FormulaSpec:
    """Read ``outcome ~ term + term ...`` in mgcv's syntax (either kind of quotes)."""
    if not isinstance(text, str) or text.count("~") != 1:
        raise GammInputError(f"formula: expected 'outcome ~ terms', got {text!r}")
    lhs, rhs = (part.strip() for part in text.split("~"))
    if not lhs.isidentifier():
        raise GammInputError(f"formula: the outcome must be a column name, got {lhs!r}")
    try:
        tree = ast.parse(rhs.replace("\n", " "), mode="eval").body
    except SyntaxError:
        raise GammInputError(f"formula: cannot read the terms {rhs!r} ({SUPPORTED})") from None
    spec = FormulaSpec(text=" ".join(text.split()), outcome=lhs)
    labels: list[str] = []
    for node in _flatten(tree, rhs):
        term = ast.get_source_segment(rhs, node) or ast.unparse(node)
        if isinstance(node, ast.Constant) and node.value == 1:
            continue
        if isinstance(node, ast.Name):
            spec.parametric.append(node.id)
            labels.append(node.id)
            spec.term_columns.append((term, [node.id]))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "s":
            made = _smooth(node, term)
            if isinstance(made, RandomEffect):
                spec.random_effects.append(made)
                labels.append(made.label)
                cols = [made.group] + ([made.covariate] if made.covariate else [])
            else:
                spec.smooths.append(made)
                labels.append(f"{made.label}:{made.by}" if made.by else made.label)
                cols = [made.variable] + ([made.by] if made.by else [])
            spec.term_columns.append((term, cols))
        else:
            raise _refuse(term, "not a column, s() or 1")
    duplicated = sorted({x for x in labels if labels.count(x) > 1})
    if duplicated:
        raise GammInputError(f"formula: term(s) given twice: {', '.join(duplicated)}")
    return spec
