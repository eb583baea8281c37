# Refit a recourse study's models with R's mgcv, from the labelled export that
# `recourse-analysis to-r` (analysis.r_export) writes beside this script.
#
#   Rscript analysis.R [FOLDER] [OUT.csv]
#
# FOLDER holds evaluations.rds (default: the current folder); the estimates go to OUT.csv
# (default FOLDER/mgcv_estimates.csv), one row per model term.
#
# Models, on the evaluations without an item marked impossible (any_impossible == 0, the
# seed study's analysis set, as `recourse-analysis study`):
#   * Model-1..4, the seed study's GAMMs (Table S2): OUTCOME ~ s(DISTANCE, k = K) +
#     s(participant, bs = "re") + s(participant, DISTANCE, bs = "re"), method = "REML", for
#     OUTCOME in acceptance, action and DISTANCE in sparsity, proximity;
#   * contrasts-OUTCOME, the strategy contrasts (when the study showed two strategies or
#     more): OUTCOME ~ strategy + s(proximity, k = K) + s(participant, bs = "re"), REML.
#     (`recourse-analysis methods` fits this model after also dropping withdrawn
#     participants, failed attention checks and fallbacks.)
# K = min(10, number of distinct values of the covariate), as mgcv needs.
# The ratings are factors in the .rds (levels = the answer labels in code order), so
# as.integer() gives the 1..7 codes the models use.

suppressPackageStartupMessages(library(mgcv))

args <- commandArgs(trailingOnly = TRUE)
folder <- if (length(args) >= 1) args[1] else "."
out <- if (length(args) >= 2) args[2] else file.path(folder, "mgcv_estimates.csv")

ev <- readRDS(file.path(folder, "evaluations.rds"))
ev <- ev[ev$any_impossible == 0, ]
for (col in c("acceptance", "action")) ev[[col]] <- as.integer(ev[[col]])
ev$participant <- factor(ev$participant)
ev$strategy <- factor(ev$strategy)

basis_k <- function(x) min(10L, length(unique(x)))

rows <- list()
collect <- function(model, fit) {
  s <- summary(fit)
  p <- s$p.table
  rows[[length(rows) + 1]] <<- data.frame(
    model = model, term = rownames(p), type = "parametric",
    estimate = p[, 1], std_error = p[, 2], edf = NA, ref_df = NA,
    statistic = p[, 3], p_value = p[, 4],
    aic = AIC(fit), scale = fit$sig2, n = nrow(fit$model), row.names = NULL
  )
  st <- s$s.table
  rows[[length(rows) + 1]] <<- data.frame(
    model = model, term = rownames(st), type = "smooth",
    estimate = NA, std_error = NA, edf = st[, 1], ref_df = st[, 2],
    statistic = st[, 3], p_value = st[, 4],
    aic = AIC(fit), scale = fit$sig2, n = nrow(fit$model), row.names = NULL
  )
}

i <- 0
for (outcome in c("acceptance", "action")) {
  for (distance in c("sparsity", "proximity")) {
    i <- i + 1
    f <- as.formula(sprintf(
      "%s ~ s(%s, k = %d) + s(participant, bs = 're') + s(participant, %s, bs = 're')",
      outcome, distance, basis_k(ev[[distance]]), distance
    ))
    collect(sprintf("Model-%d", i), gam(f, data = ev, method = "REML"))
  }
}
if (nlevels(droplevels(ev$strategy)) >= 2) {
  for (outcome in c("acceptance", "action")) {
    f <- as.formula(sprintf(
      "%s ~ strategy + s(proximity, k = %d) + s(participant, bs = 're')",
      outcome, basis_k(ev$proximity)
    ))
    collect(sprintf("contrasts-%s", outcome), gam(f, data = ev, method = "REML"))
  }
}
estimates <- do.call(rbind, rows)
write.csv(estimates, out, row.names = FALSE)
cat(sprintf("mgcv %s: %d models, estimates in %s\n",
            as.character(packageVersion("mgcv")), length(unique(estimates$model)), out))
