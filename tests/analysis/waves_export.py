"""A synthetic multi-wave export (issue 34) made with the real engine, per the waves contract:
participants rejected by a trained model see plans chosen by the selection under the model
in force, follow one, implement it with the bots' noise model (`implement_plan`), and
re-apply to the model of the next wave (frozen, or retrained on the updated profiles:
endogenous drift). Every model is saved as `models/<hash>.joblib`, so a test can reload the
model that decided each row by its recorded hash."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from recourse_engine import PoolIndex, carloan_schema, pool_from_frame, save_model, synth_pool
from recourse_engine.decision import DecisionModel
from recourse_engine.implementation import implement_plan
from recourse_engine.model_training import LabelRule, train_decision_model
from recourse_engine.model_updates import label_updated_profiles, model_hash, retrain_with

RULE = LabelRule.parse({"kind": "column", "column": "approved"})
CONDITIONS = {"frozen": "frozen", "retrained": "retrained"}


def _save(model: DecisionModel, models_dir: Path) -> str:
    digest = model_hash(model)
    save_model(model, models_dir / f"{digest}.joblib")
    return digest


def make_waves_export(
    directory: Path, *, per_condition: int = 30, waves: int = 3, seed: int = 0
) -> Path:
    """Write the export folder (and its `models/`); returns the folder."""
    directory.mkdir(parents=True, exist_ok=True)
    models_dir = directory / "models"
    models_dir.mkdir(exist_ok=True)
    schema = carloan_schema()
    frame = synth_pool(schema, n=400, seed=11)
    # a noisy ground truth, so the model errs and retraining on updated profiles can move it
    flip = np.random.default_rng(seed + 1).random(len(frame)) < 0.15
    frame["approved"] = ((frame["position"] >= 4) | (frame["education"] >= 4)) ^ flip
    frame["approved"] = frame["approved"].astype(int)
    pool = pool_from_frame(frame, schema)
    keys = schema.keys
    base = train_decision_model(schema, pool, RULE, kind="logistic")
    truth = RULE.labels(pool)
    rng = np.random.default_rng(seed)
    rejected = rng.permutation(np.flatnonzero(~base.approves(pool.codes)))
    ev_rows, wave_rows, change_rows, pa_rows = [], [], [], []
    next_pid, next_rid = 1, 1
    for cond, policy in CONDITIONS.items():
        profiles = {}
        for i in range(per_condition):
            pid = str(next_pid)
            next_pid += 1
            profiles[pid] = pool.codes[rejected[(i * 7 + len(pa_rows)) % len(rejected)]].copy()
            pa_rows.append({"study": "waves", "participant": pid, "condition": cond,
                            "gender": ["female", "male"][int(rng.random() < 0.55)],
                            "age": int(rng.integers(20, 70)), "state": "completed",
                            "outcome": "completed", "is_test": 0})  # fmt: skip
        model, digest = base, _save(base, models_dir)
        active = list(profiles)
        followed: dict[str, tuple[str, np.ndarray]] = {}
        for wave in range(1, waves + 1):
            if wave > 1 and policy == "retrained":
                codes = np.array([profiles[p] for p in active])
                labels = label_updated_profiles(RULE, schema, codes, pool=pool)
                model = retrain_with(base, pool, schema, codes=np.repeat(codes, 10, axis=0),
                                     labels=np.repeat(labels, 10), seed=wave,
                                     pool_labels=truth)  # fmt: skip
                digest = _save(model, models_dir)
            index = PoolIndex(schema, pool, model)
            still = []
            for pid in active:
                x = profiles[pid]
                prob = float(model.predict_proba(x[None, :])[0])
                decision = "approved" if prob >= 0.5 else "rejected"
                row = {"study": "waves", "participant": pid, "wave": wave, "condition": cond,
                       "model_policy": policy, "announced": int(policy == "retrained"),
                       "model_hash": digest, "decision": decision, "probability": prob,
                       "followed_recourse": "",
                       "decided_at": f"2026-01-0{wave}T10:00:00Z"}  # fmt: skip
                row.update({f"x_{k}": int(v) for k, v in zip(keys, x, strict=True)})
                if decision == "rejected" and wave < waves:
                    sel = index.select(x, None, "proximate:1,random:2", seed=[seed, int(pid), wave])
                    rids = []
                    for pos, pick in enumerate(sel.picks, start=1):
                        rid = str(next_rid)
                        next_rid += 1
                        rids.append((rid, pick.codes))
                        acc = int(np.clip(rng.normal(4.5 - 1.5 * pick.proximity, 1), 1, 7))
                        ev = {"study": "waves", "participant": pid, "condition": cond,
                              "recourse": rid, "strategy": pick.strategy, "position": pos,
                              "sparsity": pick.sparsity, "proximity": pick.proximity,
                              "any_impossible": 0, "acceptance": acc,
                              "action": int(np.clip(acc + rng.integers(-1, 2), 1, 7)),
                              "wave": wave}  # fmt: skip
                        ev.update({f"x_{k}": int(v) for k, v in zip(keys, x, strict=True)})
                        ev.update(
                            {f"cf_{k}": int(v) for k, v in zip(keys, pick.codes, strict=True)}
                        )
                        ev_rows.append(ev)
                    if rids and rng.random() < 0.9:
                        rid, cf = rids[int(rng.integers(len(rids)))]
                        row["followed_recourse"] = rid
                        followed[pid] = (rid, cf)
                    else:
                        followed.pop(pid, None)
                    still.append(pid)
                wave_rows.append(row)
            # between waves: the participants still rejected implement their plan
            if wave == waves:
                break
            for pid in still:
                x = profiles[pid]
                plan_codes = followed[pid][1] if pid in followed else x
                plan = {
                    k: int(v) for k, v, old in zip(keys, plan_codes, x, strict=True) if v != old
                }
                mode = ["full", "full", "partial", "none"][int(rng.integers(4))]
                after = implement_plan({k: int(v) for k, v in zip(keys, x, strict=True)}, plan,
                                       schema, mode=mode, rate=0.4, rng=rng)  # fmt: skip
                new = np.array([after[k] for k in keys], dtype=float)
                if rng.random() < 0.1:  # an unplanned change to a free item
                    j = schema.index("facebook")
                    new[j] = 3 - new[j]
                for j, k in enumerate(keys):
                    change_rows.append({"study": "waves", "participant": pid, "wave": wave + 1,
                                        "item": k, "before": int(x[j]), "after": int(new[j]),
                                        "changed": int(new[j] != x[j]),
                                        "planned": plan.get(k, ""), "effort": "", "flag": ""})  # fmt: skip
                profiles[pid] = new
            active = still
    last = {w["participant"]: w for w in wave_rows}  # rows are in wave order
    for row in pa_rows:
        row.update({f"x_{k}": last[row["participant"]][f"x_{k}"] for k in keys})
    pa = pd.DataFrame(pa_rows)
    pd.DataFrame(ev_rows).to_csv(directory / "evaluations.csv", index=False)
    pa.to_csv(directory / "participants.csv", index=False)
    pd.DataFrame(wave_rows).to_csv(directory / "waves.csv", index=False)
    pd.DataFrame(change_rows).to_csv(directory / "changes.csv", index=False)
    pd.DataFrame(
        [("evaluations.csv", "acceptance", "integer", "1..7", "acceptance rating"),
         ("evaluations.csv", "action", "integer", "1..7", "action rating"),
         ("participants.csv", "outcome", "string", "", "how the participation ended")],
        columns=["file", "column", "type", "allowed", "description"],
    ).to_csv(directory / "codebook.csv", index=False)  # fmt: skip
    (directory / "schema.json").write_text(json.dumps(schema.to_dict()), encoding="utf-8")
    return directory
