#!/usr/bin/env bash
# The level tables of docs/methods.md ("Synthetic data, 10 runs", "Real data, 10 runs each",
# "Does conditioning change EBR's outcome?"): one `python -m analysis experiment` per data
# set with the settings recorded beside its table, each timed with the load average before
# and after. Under the sound preset (held-out scoring, 25%), with Student-t intervals over
# the 10 runs (--people-resamples 0) and without the fair-recourse audits.
# Usage: [DATASETS="german adult"] benchmarks/level_tables.sh OUT_DIR [experiment flags]
# Rewrite the docs' tables from OUT_DIR with `python -m analysis.experiment.level_tables OUT_DIR`.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: benchmarks/level_tables.sh OUT_DIR [experiment flags]}"
shift
mkdir -p "$out"
touch "$out/times.txt"
six=ebr,ibr,wachter,gs,cchvae,cruds
# EBR beside its unconditioned self (the conditioning table), on every real data set
with_uncond=(--methods "ebr,ebr/uncond,ibr,wachter,gs,cchvae,cruds" --param ebr/uncond.condition=false)
# the latent searches capped as in the tables' recorded runs
capped=(--epochs 30 --batch 128 --param cchvae.max_layers=30 --param ibr.max_layers=30
  --param cruds.max_rounds=10)
for d in ${DATASETS:-synthetic german law_sex law_race gmc compas_sex compas_race adult}; do
  case "$d" in
    synthetic) args=(--methods "$six") ;;
    german) args=("${with_uncond[@]}" --epochs 30 --batch 128) ;;
    *) args=("${with_uncond[@]}" "${capped[@]}") ;;
  esac
  echo "$d: load before $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/times.txt"
  start=$(date +%s)
  .venv/bin/python -m analysis experiment --dataset "$d" --runs 10 --people-resamples 0 \
    --no-fair-audits --no-progress --out "$out/$d" "${args[@]}" "$@"
  echo "$d: $(( $(date +%s) - start )) s wall, load after $(cut -d' ' -f1-3 /proc/loadavg)" \
    | tee -a "$out/times.txt"
done
