## Regenerates the mgcv reference fixtures used by tests/analysis/gamm.
## Usage: Rscript make_fixtures.R OUTDIR [--only NAME] [--data-only]
## Simulates studies of the seed study's shape (5 rated recourses per participant, a few
## evaluations dropped as "impossible"), writes each study as CSV, fits mgcv's
##   gam(y ~ s(x, bs=BASIS, k=10) + s(participant, bs="re") + s(participant, x, bs="re"),
##       method="REML")
## and writes mgcv's summary numbers, fitted values and smooth predictions as JSON.
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(here, "fixture_helpers.R"))  # mgcv, args, outdir, write_json, smooth_*

only <- if (length(args) >= 3 && args[2] == "--only") args[3] else NULL
data_only <- "--data-only" %in% args

## ---- simulation -------------------------------------------------------------------------
simulate_study <- function(n_participants, n_drop, effect, seed) {
  set.seed(seed)
  participant <- rep(sprintf("u%04d", seq_len(n_participants)), each = 5)
  n <- length(participant)
  position <- rep(1:5, n_participants)
  ## the sparsest and most proximate recourses change few items; three random ones more
  sparsity <- ifelse(position <= 2, 1L + rbinom(n, 2, 0.3), 2L + rbinom(n, 10, 0.35))
  ## proximity: each changed item contributes |x' - x| / M with M the item's range
  ranges <- c(2, 3, 4, 5, 6, 9)
  proximity <- vapply(sparsity, function(s) {
    m <- sample(ranges, s, replace = TRUE)
    sum(vapply(m, function(mi) sample(seq_len(mi), 1) / mi, 0))
  }, 0)
  if (position[1] == 1) proximity[position == 2] <- proximity[position == 2] * 0.5
  proximity <- round(proximity, 2)
  ids <- unique(participant)
  b0 <- rnorm(length(ids), 0, 1.1)[match(participant, ids)]
  b1_sp <- rnorm(length(ids), 0, 0.12)[match(participant, ids)]
  b1_pr <- rnorm(length(ids), 0, 0.35)[match(participant, ids)]
  f_sp <- switch(effect, null = 0 * sparsity, steep = -0.75 * pmin(sparsity - 1, 3))
  f_pr <- switch(effect, null = 0 * proximity, steep = -1.6 * pmin(proximity, 1.5))
  rate <- function(latent) as.integer(pmin(7, pmax(1, round(latent))))
  acceptance <- rate(3.4 + 0.6 * b0 + b1_sp * sparsity + rnorm(n, 0, 1.3))
  ## the steep study has clear participant slopes, as the seed's action models did
  slope <- if (effect == "steep") 2.5 else 1
  base <- if (effect == "steep") 4.4 else 3.6
  action <- rate(base + b0 + f_sp + slope * b1_sp * sparsity
                 + 0.5 * (f_pr + slope * b1_pr * proximity) + rnorm(n, 0, 1.2))
  d <- data.frame(participant, position, sparsity, proximity, acceptance, action)
  if (n_drop > 0) d <- d[-sample(seq_len(n), n_drop), ]
  rownames(d) <- NULL
  d
}

## ---- fitting and summary ----------------------------------------------------------------
fit_and_summarise <- function(d, outcome, distance, basis, fitter = "gam") {
  df <- data.frame(y = d[[outcome]], x = d[[distance]], uid = factor(d$participant))
  t0 <- proc.time()[["elapsed"]]
  form <- y ~ s(x, bs = basis, k = 10) + s(uid, bs = "re") + s(uid, x, bs = "re")
  ## bam(method = "fREML") maximises the same restricted likelihood as gam(method = "REML")
  ## with mgcv's large-data fitter: gam() needs hours on 4,010 coefficients
  fit <- if (fitter == "bam") bam(form, data = df, method = "fREML") else
    gam(form, data = df, method = "REML")
  seconds <- proc.time()[["elapsed"]] - t0
  s <- summary(fit)
  ll <- logLik(fit)
  list(outcome = outcome, distance = distance, basis = basis,
       n = nrow(df), aic = AIC(fit), loglik = as.numeric(ll), df_aic = attr(ll, "df"),
       scale = fit$sig2, r_sq = s$r.sq, dev_expl = s$dev.expl,
       residual_df = s$residual.df, sum_edf = sum(fit$edf), sum_edf1 = sum(fit$edf1),
       sum_edf2 = sum(fit$edf2), sp = unname(fit$sp), reml = as.numeric(fit$gcv.ubre),
       parametric = list("(Intercept)" = list(
         estimate = s$p.table[1, 1], se = s$p.table[1, 2], t = s$p.table[1, 3],
         p = s$p.table[1, 4])),
       smooth = smooth_table(s$s.table, distance, "F", "F"),
       grid = smooth_grid(fit, df),
       fitted = unname(fit$fitted.values),
       seconds = seconds, fitter = fitter, mgcv = as.character(packageVersion("mgcv")),
       r = R.version.string)
}

## ---- the fixtures -----------------------------------------------------------------------
studies <- list(
  null = list(n = 362, drop = 72, effect = "null", seed = 101,
              models = list(c("acceptance", "sparsity", "tp"), c("acceptance", "proximity", "tp"))),
  steep = list(n = 362, drop = 72, effect = "steep", seed = 202,
               models = list(c("action", "sparsity", "tp"), c("action", "proximity", "tp"),
                             c("action", "proximity", "cr"))),
  large = list(n = 2000, drop = 400, effect = "steep", seed = 303, fitter = "bam",
               models = list(c("action", "sparsity", "tp")))
)

for (name in names(studies)) {
  if (!is.null(only) && name != only) next
  st <- studies[[name]]
  d <- simulate_study(st$n, st$drop, st$effect, st$seed)
  write.csv(d, file.path(outdir, sprintf("study_%s.csv", name)), row.names = FALSE)
  if (data_only) next
  for (m in st$models) {
    fitter <- if (is.null(st$fitter)) "gam" else st$fitter
    res <- fit_and_summarise(d, m[1], m[2], m[3], fitter)
    res$study <- name
    path <- file.path(outdir, sprintf("mgcv_%s_%s_%s_%s.json", name, m[1], m[2], m[3]))
    write_json(res, path)
    cat(sprintf("%s: %.1f s\n", path, res$seconds))
  }
}
