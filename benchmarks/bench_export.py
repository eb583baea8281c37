"""Time and memory of the console's streamed export (`export.export_zip_stream`).

Creates a study in a fresh SQLite file database (not in memory: the export reads it as the
web server would), fills it with N completed participants x K evaluations by bulk_create
(`tests/studyapp/console/factory.populate`), then consumes the streamed ZIP end to end as a
download would, and prints the wall time, the time to the first byte, the size, and the
peak Python heap during a second, traced export (tracemalloc) beside the process's peak RSS.

    .venv/bin/python benchmarks/bench_export.py [--n 10000] [--k 5] [--no-parquet]
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import sys
import tempfile
import time
import tracemalloc
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="participants (completed)")
    ap.add_argument("--k", type=int, default=5, help="evaluations per participant")
    ap.add_argument("--chunk", type=int, default=2000, help="rows per chunk")
    ap.add_argument("--no-parquet", action="store_true", help="CSV files only")
    args = ap.parse_args()
    if not 1 <= args.n <= 200_000 or not 1 <= args.k <= 20:
        ap.error("--n must be 1..200000 and --k 1..20")

    var = Path(tempfile.mkdtemp(prefix="bench-export-"))
    os.environ.pop("DATABASE_URL", None)
    os.environ.update(STUDYAPP_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="studyapp.config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from recourse_engine import carloan_schema, synth_pool
    from studyapp.export import export_zip_stream
    from studyapp.studies import carloan, services
    from tests.studyapp.console.factory import populate

    call_command("migrate", verbosity=0)
    schema = carloan_schema()
    study = services.study_create(
        slug="bench",
        title="Export benchmark",
        schema=schema,
        pool=synth_pool(schema, n=3683, seed=0),
        design="sparsest:1,proximate:1,random:3",
        texts=carloan.TEXTS,
        consent_version=carloan.CONSENT_VERSION,
    )
    t0 = time.perf_counter()
    populate(study, args.n, args.k, seed=0)
    fill_s = time.perf_counter() - t0
    db_mb = (var / "db.sqlite3").stat().st_size / 1e6
    print(
        f"database: {args.n:,} participants x {args.k} evaluations "
        f"({args.n * args.k:,} rows) in {fill_s:.1f} s; SQLite file {db_mb:.0f} MB"
    )

    def consume() -> tuple[io.BytesIO, float, float, int]:
        sink, first, pieces = io.BytesIO(), None, 0
        t0 = time.perf_counter()
        for piece in export_zip_stream(
            study, with_text=True, parquet=not args.no_parquet, chunk_size=args.chunk
        ):
            if first is None:
                first = time.perf_counter() - t0
            sink.write(piece)
            pieces += 1
        return sink, time.perf_counter() - t0, first or 0.0, pieces

    # timed without tracemalloc (it slows allocation-heavy code several times), then again
    # under tracemalloc for the peak heap
    sink, wall, first, pieces = consume()
    tracemalloc.start()
    consume()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size_mb = sink.tell() / 1e6
    zf = zipfile.ZipFile(sink)
    rows = sum(1 for _ in io.TextIOWrapper(zf.open("evaluations.csv"), "utf-8")) - 1
    assert rows == args.n * args.k, (rows, args.n * args.k)
    members = ", ".join(f"{i.filename} {i.file_size / 1e6:.1f} MB" for i in zf.infolist())
    print(
        f"export: {wall:.1f} s end to end, first bytes after {first:.2f} s, {pieces} pieces, "
        f"ZIP {size_mb:.1f} MB ({members})"
    )
    print(
        f"memory: peak Python heap during a second, traced export {peak / 1e6:.0f} MB (tracemalloc); "
        f"process peak RSS {rss_mb:.0f} MB (includes Django, pandas, pyarrow and the fill)"
    )


if __name__ == "__main__":
    main()
