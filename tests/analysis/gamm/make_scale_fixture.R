## The 5,000-participant reference for tests/analysis/gamm/test_scale_fixture.py.
## Usage: Rscript make_scale_fixture.R OUTDIR [--only data|bam|gamm4]
## Simulates 5,000 participants x 5 whole-number ratings (1..7) of a distance (two decimals,
## 401 distinct values: mgcv's thin-plate basis then uses every value as a knot, as ours does)
## with a participant intercept (SD 0.8) and a weak participant slope (SD 0.1), writes the CSV,
## and fits
##   rating ~ s(distance, bs = "tp", k = 10) + s(participant, bs = "re")
##            + s(participant, distance, bs = "re")
## two ways, each into its own JSON:
##   bam(method = "fREML")   scale5000_bam.json: the same REML as gam(); summary (EDF, Ref.df,
##                           F, p of all three terms), AIC, scale, -REML, gam.vcomp
##   gamm4(rating ~ s(distance), random = ~ (1 | participant) + (0 + distance | participant))
##                           scale5000_gamm4.json: s(distance), the intercept, the variance
##                           components and lme4's REML criterion (lme4 reports no test of the
##                           random effects)
## Needs r-cran-mgcv and r-cran-gamm4 (Debian). On this 2-core machine (OpenBLAS, other jobs
## running) bam took 7,616 s (fit 7,219 s; 10,009 coefficients, dense algebra) and up to about
## 19 GB of memory; gamm4 143 s of CPU.
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(here, "fixture_helpers.R"))  # mgcv, args, outdir, write_json, smooth_table
only <- if (length(args) >= 3 && args[2] == "--only") args[3] else NULL
want <- function(name) is.null(only) || only == name

simulate_scale <- function(n_participants = 5000, per = 5, seed = 5005) {
  set.seed(seed)
  participant <- rep(sprintf("u%04d", seq_len(n_participants)), each = per)
  n <- length(participant)
  distance <- round(runif(n, 0, 4), 2)
  b0 <- rep(rnorm(n_participants, 0, 0.8), each = per)
  b1 <- rep(rnorm(n_participants, 0, 0.1), each = per)
  latent <- 4.6 - 1.1 * pmin(distance, 1.6) + b0 + b1 * distance + rnorm(n, 0, 1.1)
  rating <- as.integer(pmin(7, pmax(1, round(latent))))
  data.frame(participant, distance, rating)
}

csv <- file.path(outdir, "study_scale5000.csv")
if (want("data") || !file.exists(csv)) {
  write.csv(simulate_scale(), csv, row.names = FALSE)
}
d <- read.csv(csv, colClasses = c(participant = "character"))
df <- data.frame(y = d$rating, x = d$distance, uid = factor(d$participant))
form <- y ~ s(x, bs = "tp", k = 10) + s(uid, bs = "re") + s(uid, x, bs = "re")
about <- list(study = "scale5000", outcome = "rating", distance = "distance", basis = "tp",
              n = nrow(df), participants = nlevels(df$uid),
              mgcv = as.character(packageVersion("mgcv")), r = R.version.string,
              blas = extSoftVersion()[["BLAS"]])

vcomp_list <- function(fit) {
  vc <- gam.vcomp(fit)
  vc <- if (is.list(vc)) vc$all else vc
  rows <- c("s(x)" = "s(distance)", "s(uid)" = "s(participant)",
            "s(uid,x)" = "s(participant,distance)",
            "scale" = "scale")
  out <- list()
  for (r in rownames(vc)) {
    out[[rows[[r]]]] <- list(std_dev = vc[r, "std.dev"], lower = vc[r, "lower"],
                             upper = vc[r, "upper"])
  }
  out
}

bam_fixture <- function(path) {
  t0 <- proc.time()[["elapsed"]]
  fit <- bam(form, data = df, method = "fREML")
  fit_seconds <- proc.time()[["elapsed"]] - t0
  s <- summary(fit)
  seconds <- proc.time()[["elapsed"]] - t0
  res <- c(about, list(
    fitter = "bam(fREML)",
    scale = fit$sig2, r_sq = s$r.sq, dev_expl = s$dev.expl, reml = as.numeric(fit$gcv.ubre),
    aic = AIC(fit), sp = unname(fit$sp),
    parametric = list("(Intercept)" = list(
      estimate = s$p.table[1, 1], se = s$p.table[1, 2], t = s$p.table[1, 3],
      p = s$p.table[1, 4])),
    smooth = smooth_table(s$s.table, "distance", "F", "F"),
    vcomp = vcomp_list(fit),
    fit_seconds = fit_seconds, seconds = seconds))
  write_json(res, path)
  cat(sprintf("%s: %.1f s (fit %.1f s)\n", path, seconds, fit_seconds))
}

if (want("bam")) bam_fixture(file.path(outdir, "scale5000_bam.json"))

if (want("gamm4")) {
  suppressPackageStartupMessages(library(gamm4))
  t0 <- proc.time()[["elapsed"]]
  g <- gamm4(y ~ s(x, bs = "tp", k = 10), random = ~ (1 | uid) + (0 + x | uid), data = df,
             REML = TRUE)
  s <- summary(g$gam)
  seconds <- proc.time()[["elapsed"]] - t0
  vc <- as.data.frame(lme4::VarCorr(g$mer))
  ## lme4 names the two participant terms uid and uid.1 in an order of its own: go by variable
  sd_of <- function(grp, var) vc$sdcor[startsWith(vc$grp, grp) & vc$var1 %in% var][1]
  st <- s$s.table
  res <- c(about, list(
    fitter = "gamm4", gamm4 = as.character(packageVersion("gamm4")),
    lme4 = as.character(packageVersion("lme4")),
    reml_criterion = as.numeric(lme4::REMLcrit(g$mer)),
    scale = sd_of("Residual", NA_character_)^2,
    parametric = list("(Intercept)" = list(
      estimate = s$p.table[1, 1], se = s$p.table[1, 2], t = s$p.table[1, 3],
      p = s$p.table[1, 4])),
    smooth = list("s(distance)" = list(edf = st[1, "edf"], ref_df = st[1, "Ref.df"],
                                       F = st[1, "F"], p = st[1, "p-value"])),
    vcomp = list("s(participant)" = list(std_dev = sd_of("uid", "(Intercept)")),
                 "s(participant,distance)" = list(std_dev = sd_of("uid", "x")),
                 "scale" = list(std_dev = sd_of("Residual", NA_character_))),
    seconds = seconds))
  path <- file.path(outdir, "scale5000_gamm4.json")
  write_json(res, path)
  cat(sprintf("%s: %.1f s\n", path, seconds))
}
