"""Rows of a finished study made directly with bulk_create (no page walk): for export and
monitor tests that need many participants, and for benchmarks/bench_export.py."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
from django.utils import timezone

from studyapp.definition import engine_objects, screening
from studyapp.models import Evaluation, Participant, Profile, Recourse, Study

S = Participant.State


def populate(
    study: Study, n: int, k: int = 5, *, seed: int = 0, batch: int = 2000, panel: bool = True
) -> None:
    """`n` completed participants with `k` evaluated recourses each, drawn from the pool."""
    schema = engine_objects.schema_of(study.schema)
    pool = engine_objects.pool_of(study.pool_csv, schema)
    qs = {q["key"]: q for q in screening.questions(study.schema)}
    rng = np.random.default_rng(seed)
    now = timezone.now()
    for start in range(0, n, batch):
        size = min(batch, n - start)
        people = [
            Participant(
                study=study,
                state=S.COMPLETED,
                recruitment_id=f"PANEL{seed}-{start + i}" if panel else "",
                panel={"STUDY_ID": "s1"} if panel else {},
                screening={"age": str(20 + (start + i) % 40), "gender": str(1 + i % 2)},
                age=20 + (start + i) % 40,
                gender=qs["gender"]["options"][i % 2] if "gender" in qs else "",
                income_band="3M-4M",
                income_jpy=3_500_000.0,
                consent_version=study.consent_version,
                consented_at=now,
                completion_code="DONE",
                generation=Participant.Generation.DONE,
                generation_queued_at=now,
                generation_finished_at=now + timedelta(seconds=0.5),
                finished_at=now + timedelta(minutes=10),
            )
            for i in range(size)
        ]
        people = Participant.objects.bulk_create(people)
        rows = rng.integers(0, len(pool), size=(size, k + 1))
        profiles, recourses = [], []
        for p, picks in zip(people, rows, strict=True):
            x = pool.codes[picks[0]]
            profiles.append(
                Profile(
                    participant=p,
                    values={key: int(v) for key, v in zip(schema.keys, x, strict=True)},
                )
            )
            for pos, j in enumerate(picks[1:], start=1):
                cf = pool.codes[j]
                changed = [key for key, a, b in zip(schema.keys, x, cf, strict=True) if a != b]
                recourses.append(
                    Recourse(
                        participant=p,
                        position=pos,
                        strategy="random",
                        pool_index=int(j),
                        pool_id=str(pool.ids[j]),
                        values={key: int(v) for key, v in zip(schema.keys, cf, strict=True)},
                        changed=changed,
                        sparsity=len(changed),
                        proximity=float(len(changed)) / 2,
                    )
                )
        Profile.objects.bulk_create(profiles)
        recourses = Recourse.objects.bulk_create(recourses)
        ratings = rng.integers(1, 8, size=(len(recourses), 2))
        Evaluation.objects.bulk_create(
            Evaluation(
                recourse=r,
                participant_id=r.participant_id,
                acceptance=int(a),
                acceptance_why=f"my reason #{r.pk}",
                impossible=r.changed[:1] if (r.pk % 7 == 0) else [],
                action=int(b),
                action_why="",
                seconds_on_page=12.5,
            )
            for r, (a, b) in zip(recourses, ratings, strict=True)
        )
