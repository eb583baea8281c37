"""What going live asks of a multi-wave study (kind ``multi_wave``, docs/waves.md) beyond its
settings: a decision model that a re-application can pass, and that each condition's model
policy can serve.

The settings themselves (`definition.wave_settings`) are checked on every draft change; these
rules read the study's decision model, which a draft may set after its waves (train the model,
then go live), so they are checked at go-live (`services.study_set_state`), each problem
naming the setting to change.
"""

from __future__ import annotations

from typing import Any

from studyapp.definition import engine_objects
from studyapp.definition.wave_settings import WaveSettings
from studyapp.models import Study
from studyapp.studies.model_training import TRAIN_HINT


def _model(study: Study) -> Any | None:
    """The study's uploaded or trained model (None: none loadable; the model check says why)."""
    try:
        return engine_objects.study_model(study)
    except (engine_objects.StudyConfigError, ValueError):
        return None


def waves_live_problems(study: Study) -> list[str]:
    """Why a multi-wave study cannot go live ([]: it can, or it is not multi-wave)."""
    if study.kind != "multi_wave" or not study.waves:
        return []
    if study.decision_model == "income_rule":
        return [
            "decision_model: a multi_wave study cannot use the income rule: it approves a "
            "profile whose income is at least 4/3 of the participant's own, so it rejects "
            "every participant's own profile and a re-application (their updated profile, "
            "their own income) could never be approved; " + TRAIN_HINT
        ]
    if not study.decision_model_blob:
        return ["decision_model: 'uploaded' but no model file is stored; " + TRAIN_HINT]
    settings = WaveSettings.model_validate(study.waves)
    has_rule = bool((study.decision_model_info or {}).get("label_rule"))
    problems: list[str] = []
    model = None
    for i, policy in enumerate(settings.policies):
        if policy.model == "frozen":
            continue
        where = f"waves.policies[{i}].model"
        whose = f"condition {policy.condition!r}" if policy.condition else "the blank condition"
        if policy.model == "retrained" and not has_rule:
            problems.append(
                f"{where}: 'retrained' ({whose}) needs the decision model's label rule (the "
                "ground truth the updated profiles are labelled by), and this study's model "
                "has none (an uploaded file): train the model from a label rule in the "
                "console, or use the frozen or multiplicity policy"
            )
            continue
        model = model if model is not None else _model(study)
        if model is None:
            continue
        if getattr(model, "relative_to_factual", False):
            problems.append(
                f"{where}: {policy.model!r} ({whose}) retrains the study's model, and this "
                "one judges relative to the participant's own income, as the income rule "
                "does: it cannot be retrained; use frozen or a model trained on the pool"
            )
        elif policy.model == "retrained" and getattr(model, "use_income", False):
            problems.append(
                f"{where}: 'retrained' ({whose}) adds the participants' updated profiles, "
                "which have no income, and the study's model was trained with income: train "
                "the model on the profile items alone, or use frozen or multiplicity"
            )
    return problems
