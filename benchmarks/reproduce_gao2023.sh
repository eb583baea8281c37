#!/usr/bin/env bash
# The reproduction report of Gao & Lakkaraju (2023), Table 6: one command per data set
# (python -m analysis reproduce), each timed, with the load average before and after.
# Usage: [DATASETS="law_sex german"] benchmarks/reproduce_gao2023.sh OUT_DIR [reproduce flags]
# (the command's defaults: 10 runs per setting, the six Table 6 methods, VAE methods at 15
# epochs with batch 128, one thread per numeric library; docs/methods.md has the times)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: benchmarks/reproduce_gao2023.sh OUT_DIR [reproduce flags]}"
shift
mkdir -p "$out"
: > "$out/times.txt"
for d in ${DATASETS:-law_sex law_race gmc compas_sex compas_race german}; do
  echo "$d: load before $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/times.txt"
  start=$(date +%s)
  .venv/bin/python -m analysis reproduce --dataset "$d" --out "$out/$d" --no-progress "$@"
  echo "$d: $(( $(date +%s) - start )) s wall, load after $(cut -d' ' -f1-3 /proc/loadavg)" \
    | tee -a "$out/times.txt"
done
cat "$out"/*/report.md > "$out/report.md"
