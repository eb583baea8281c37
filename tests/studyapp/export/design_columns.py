"""The evaluation columns docs/export.md names, written out by hand so that the export
tests check the writer and its codebook against the design, not against the contract."""

DESIGN_COLUMNS = [  # docs/export.md, in order
    "study", "participant", "condition", "gender", "age", "income",
    "recourse", "strategy", "position", "sparsity", "proximity",
    "changed", "impossible", "any_impossible", "acceptance", "action",
    "acceptance_why", "action_why", "seconds_on_page", "submitted_at",
]  # fmt: skip
#: after the x_<item> and cf_<item> families, as docs/export.md lists them
DESIGN_TAIL = [
    "origin",
    "method",
    "sparsity_rank",
    "proximity_rank",
    "method_params",
    "fit_version",
    "fallback",
]
