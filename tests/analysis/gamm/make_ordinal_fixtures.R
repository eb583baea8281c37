## Regenerates the mgcv ordered-categorical (ocat) reference fixtures used by
## tests/analysis/gamm/test_ordinal.py.
## Usage: Rscript make_ordinal_fixtures.R OUTDIR [--only STUDY_OUTCOME_DISTANCE]
## Reads the committed studies (fixtures/study_*.csv, written by make_fixtures.R), fits
##   gam(y ~ s(x, bs = "tp", k = 10) + s(uid, bs = "re") + s(uid, x, bs = "re"),
##       family = ocat(R = 7), method = "REML")
## and writes mgcv's numbers as JSON. mgcv's ocat: P(y <= r) = F(alpha_r - eta), F logistic,
## alpha_1 = -1 fixed (the intercept carries the location); the other cut points and the three
## smoothing parameters are estimated by Laplace-approximate REML (Wood, Pya & Saefken 2016).
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(here, "fixture_helpers.R"))  # mgcv, args, outdir, write_json, smooth_*

only <- if (length(args) >= 3 && args[2] == "--only") args[3] else NULL

fit_ocat <- function(d, outcome, distance) {
  df <- data.frame(y = d[[outcome]], x = d[[distance]], uid = factor(d$participant))
  n_cat <- 7
  t0 <- proc.time()[["elapsed"]]
  fit <- gam(y ~ s(x, bs = "tp", k = 10) + s(uid, bs = "re") + s(uid, x, bs = "re"),
             family = ocat(R = n_cat), data = df, method = "REML")
  seconds <- proc.time()[["elapsed"]] - t0
  edf1 <- function(i) {
    sm <- fit$smooth[[i]]
    list(edf1 = sum(fit$edf1[sm$first.para:sm$last.para]))
  }
  smooth <- smooth_table(summary(fit)$s.table, distance, "chi_sq", "Chi.sq", edf1)
  oi <- fit$outer.info
  list(study = NA, outcome = outcome, distance = distance, basis = "tp", k = 10,
       family = fit$family$family, n = nrow(df), n_categories = n_cat,
       ## cut points alpha_1 = -1 < alpha_2 < ... < alpha_{R-1}
       thresholds = unname(fit$family$getTheta(TRUE)),
       ## mgcv's internal parameters: alpha_{k+1} = alpha_k + exp(theta_k)
       theta = unname(fit$family$getTheta()),
       intercept = unname(coef(fit)[1]), intercept_se = sqrt(fit$Vp[1, 1]),
       ## sp multiplies mgcv's rescaled penalties S_j / S.scale_j (smoothCon's scale.penalty)
       smooth = smooth, sp = unname(fit$sp),
       s_scale = vapply(fit$smooth, function(sm) sm$S.scale, 0),
       reml = as.numeric(fit$gcv.ubre),
       sum_edf = sum(fit$edf), deviance = fit$deviance, aic = AIC(fit),
       linear_predictors = unname(fit$linear.predictors),
       grid = smooth_grid(fit, df),
       outer_iterations = if (is.null(oi$iter)) NA else oi$iter,
       converged = if (is.null(oi$conv)) "unknown" else as.character(oi$conv),
       seconds = seconds, mgcv = as.character(packageVersion("mgcv")),
       r = R.version.string)
}

models <- list(c("steep", "action", "sparsity"), c("null", "acceptance", "sparsity"),
               c("steep", "action", "proximity"), c("null", "acceptance", "proximity"))
for (m in models) {
  name <- paste(m, collapse = "_")
  if (!is.null(only) && name != only) next
  path <- file.path(outdir, sprintf("ocat_mgcv_%s.json", name))
  d <- read.csv(file.path(outdir, sprintf("study_%s.csv", m[1])),
                colClasses = c(participant = "character"))
  res <- fit_ocat(d, m[2], m[3])
  res$study <- m[1]
  write_json(res, path)
  cat(sprintf("%s: %.1f s\n", path, res$seconds))
}
