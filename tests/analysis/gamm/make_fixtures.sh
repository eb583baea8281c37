#!/usr/bin/env bash
# Regenerates the committed mgcv fixtures in fixtures/ (R is needed only for this, not for the
# tests). Installs R and mgcv from Debian when missing (run as root), plus the serial OpenBLAS
# (the 2,000-participant study is fitted with bam(): about 15 minutes here; gam() takes hours).
# The ordered-categorical (ocat) references are fitted on the committed null and steep studies
# (about 20-30 s each). make_comparison_fixtures.R writes the method-comparison study and its
# fits (parametric, factor-by, ML, anova, predict, gam.vcomp, k.check; about 10 s);
# make_basis_fixtures.R writes mgcv's thin-plate columns for test_basis.py;
# make_no_lr_test_fixtures.R two small studies where no likelihood-ratio test applies;
# make_scale_fixture.R the 5,000-participant study fitted by bam() and gamm4 (about two hours
# here and up to about 19 GB of memory, for bam's dense 10,009 x 10,009 algebra; --no-scale
# skips it).
# Usage: tests/analysis/gamm/make_fixtures.sh [--only null|steep|large] [--no-scale]
set -euo pipefail
cd "$(dirname "$0")"
scale=1
args=()
for a in "$@"; do
  if [ "$a" = "--no-scale" ]; then scale=0; else args+=("$a"); fi
done
if ! Rscript -e 'suppressPackageStartupMessages(library(mgcv)); library(gamm4)' >/dev/null 2>&1
then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    r-base-core r-cran-mgcv r-cran-gamm4 libopenblas0-serial
fi
mkdir -p fixtures
Rscript make_fixtures.R fixtures "${args[@]}"
Rscript chisq_reference.R fixtures/psum_chisq.json
Rscript make_ordinal_fixtures.R fixtures
Rscript make_comparison_fixtures.R fixtures
Rscript make_basis_fixtures.R fixtures/tp_basis_mgcv.json
Rscript make_no_lr_test_fixtures.R fixtures
if [ "$scale" = 1 ]; then Rscript make_scale_fixture.R fixtures; fi
