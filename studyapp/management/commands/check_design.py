"""Run a study's design check here and now (with a progress bar), store it like the console's
and the API's, and print its figures; or print the latest stored one (`--stored`).

The figures are `design_check.check_summary`'s, the same the console page and
`/api/studies/<slug>/design-check/` show; `--json` prints that object as it is.
"""

from __future__ import annotations

import json
from typing import Any

from tqdm import tqdm

from studyapp.definition.errors import StudyError
from studyapp.management.base import StudyCommand
from studyapp.studies import design_check, design_check_run


def _pct(value: Any) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


class Command(StudyCommand):
    help = (
        "Predict, before launch, what a study's participants will see: approval rate, per "
        "condition and method the own-plan rate and fallback reasons, sparsity, proximity, "
        "plans per participant (fits missing methods first)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("study", help="study slug")
        parser.add_argument(
            "--sample",
            type=int,
            default=design_check.SAMPLE_SIZE,
            help=f"profiles to draw (1..{design_check.MAX_SAMPLE}; default "
            f"{design_check.SAMPLE_SIZE})",
        )
        parser.add_argument("--seed", type=int, default=None, help="default: the study's seed")
        parser.add_argument(
            "--source",
            default="pool",
            help="pool (default), or the slug of a pool-collection study whose answers are drawn",
        )
        parser.add_argument(
            "--stored", action="store_true", help="print the latest stored check; run nothing"
        )
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        study = self.study(opts["study"])
        if opts["stored"]:
            check = design_check.latest_check(study)
            if check is None:
                self.fail(f"study {study.slug}: no design check stored yet")
        else:
            try:
                check = design_check.check_create(
                    study=study,
                    sample_size=opts["sample"],
                    sample_source=opts["source"],
                    seed=opts["seed"],
                )
            except StudyError as exc:
                self.fail(str(exc))
            bar = tqdm(
                total=check.sample_size,
                desc="design check",
                unit="profile",
                disable=True if opts["json"] else self.bars(opts),
            )

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            design_check_run.check_run(check_id=check.pk, progress=progress)
            bar.close()
            check.refresh_from_db()
        summary = design_check.check_summary(study, check)
        assert summary is not None
        if opts["json"]:
            self.stdout.write(json.dumps(summary, indent=2, sort_keys=True))
        else:
            self._print(summary)
        if check.state == check.State.FAILED:
            raise SystemExit(1)

    def _print(self, s: dict[str, Any]) -> None:
        w = self.stdout.write
        w(f"design check {s['id']} of {s['study']}: {s['state']} ({s['message']})")
        if s["stale"]:
            w("  stale: the study changed since this check")
        r = s["result"]
        if not r:
            return
        sample = r["sample"]
        w(
            f"sample: {sample['drawn']} profiles from {sample['source']} (seed {sample['seed']}); "
            f"approved {sample['approved']} ({_pct(r['approval_rate'])}), rejected "
            f"{sample['rejected']}"
        )
        for c in r["conditions"]:
            w("")
            w(f"condition {c['condition'] or '(study design)'}: {c['design']}")
            w(
                f"  full set of plans {_pct(c['full_set_rate'])}, no plan {_pct(c['no_plan_rate'])}, "
                f"plans per participant {c['plans_per_participant']} of {c['requested']}"
            )
            w(
                f"  {'part':<22}{'shown':>8}{'own plan':>10}{'sparsity':>10}{'proximity':>11}  fallback reasons"
            )
            for p in c["parts"]:
                reasons = "; ".join(
                    f"{f['reason']} ({f['n']})" for f in p.get("fallback_reasons", [])
                )
                sparsity = p["sparsity"]["mean"]
                proximity = p["proximity"]["mean"]
                w(
                    f"  {p['label'] + ':' + str(p['k']):<22}{_pct(p['shown_rate']):>8}"
                    f"{_pct(p.get('own_plan_rate')) if p['method'] else '-':>10}"
                    f"{'-' if sparsity is None else f'{sparsity:.2f}':>10}"
                    f"{'-' if proximity is None else f'{proximity:.3f}':>11}  {reasons or '-'}"
                )
        w("")
        if s["warnings"]:
            w("warnings (acknowledge each to go live):")
            for warning in s["warnings"]:
                w(f"  [{warning['key']}] {warning['text']}")
        else:
            w("no warnings")
