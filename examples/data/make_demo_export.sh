#!/usr/bin/env bash
# Makes demo_export/ beside this script: the platform's own export of the demo method-comparison study (the
# README's "Comparing recourse methods" commands: 60 simulated participants, SQLite, eager
# tasks), small real data for the notebooks under examples/ and the R hand-off test. The bots
# are test participants, so the export is asked to include them (--with-test); without it
# the export would hold no participant (tests/test_demo_export.py fails on that).
# Run from anywhere: examples/data/make_demo_export.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export STUDYAPP_VAR_DIR="$work/var"
cd "$work"
"$root/.venv/bin/recourse-study" migrate -v0
"$root/.venv/bin/recourse-study" create_demo_study --design comparison >/dev/null
"$root/.venv/bin/recourse-study" simulate_participants comparison --n 60 --eager >/dev/null
"$root/.venv/bin/recourse-study" export_study comparison --with-test --out export
# never replace the shipped export by an empty one
for table in participants evaluations; do
  if [ "$(wc -l < "export/$table.csv")" -lt 2 ]; then
    echo "error: the new export has no rows in $table.csv; $here/demo_export left as it was" >&2
    exit 2
  fi
done
rm -rf "$here/demo_export"
cp -r export "$here/demo_export"
