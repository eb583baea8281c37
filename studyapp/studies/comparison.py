"""The demo method-comparison study: the car-loan study with recourse methods beside pool picks.

A generated profile has no income, so the reference study's income rule cannot judge it; the
comparison study therefore decides with a logistic regression trained on the profile items of
its own pool (label: income in the pool's top half), trained and stored exactly as a
researcher does it from the console (`model_training`). Causal recourse needs a structural
model: the demo states a small one (position depends on education and service years,
management career on position) rather than assuming the items independent.
"""

from __future__ import annotations

from typing import Any

from studyapp.models import Study
from studyapp.studies import carloan, model_training, updates

#: the demo's design: one pool pick and three methods beside a random pool profile
COMPARISON_DESIGN = "proximate:1,wachter:1,gs:1,ebr_generated:1,random:1"
#: every recourse method of the engine, for a study that compares them all
ALL_METHODS_DESIGN = (
    "proximate:1,wachter:1,gs:1,cchvae:1,cruds:1,causal:1,ebr_generated:1,ibr_generated:1,fair_rl:1"
)
#: settings of the methods that need more than their defaults
METHOD_PARAMS: dict[str, dict[str, Any]] = {
    "causal": {
        "scm": {
            "position": {"education": 0.3, "service_years": 0.3},
            "management_career": {"position": 0.5},
        }
    },
    "ebr": {"group": "gender"},
    "ibr": {"group": "gender"},
    # 500 SAC steps rather than 1,500: the demo's pool is small, and its fit stays short
    "fair_rl": {"group": "gender", "steps": 500},
}


#: the demo model's label: income in the pool's top half (the label rule a researcher picks in
#: the console's "Decision model" page)
ITEMS_MODEL_RULE: dict[str, Any] = {"kind": "top_quantile", "share": 0.5}


def comparison_study_create(
    *,
    slug: str,
    title: str = "Car loan study: recourse methods compared (synthetic pool)",
    design: str = COMPARISON_DESIGN,
    language: str = "en",
    pool_size: int = 3683,
    seed: int = 0,
    owner: Any = None,
) -> Study:
    """A draft car-loan study deciding with a model trained on its items, with `design`."""
    study = carloan.carloan_study_create(
        slug=slug,
        title=title,
        language=language,
        owner=owner,
        pool_size=pool_size,
        settings={"seed": seed},
    )
    study = model_training.study_train_decision_model(
        study=study, kind="logistic", label_rule=ITEMS_MODEL_RULE
    )
    return updates.study_update(
        study=study, changes={"design": design, "method_params": METHOD_PARAMS}
    )
