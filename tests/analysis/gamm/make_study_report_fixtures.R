## mgcv references for the method-comparison report (`python -m analysis methods`).
## Usage: Rscript make_study_report_fixtures.R OUTDIR
## Simulates (seed 1313) a study in which 160 participants rate 6 recourses each, every recourse
## from one of four strategies, and writes it as study_report.csv. Per outcome it fits, as the
## report does:
##   common  y ~ strategy + s(proximity) + s(participant, bs = "re")            (REML)
##   relevel the same with relevel(strategy, ref = "proximate")                 (REML)
##   by      y ~ strategy + s(proximity, by = strategy) + s(participant, bs = "re")  (REML)
##   ml0/ml1 common and by refitted with method = "ML", and anova(ml0, ml1, test = "Chisq")
## plus predict(by, se.fit = TRUE, exclude = "s(participant)") on 25 points spanning each
## strategy's own proximities, and writes study_report_<outcome>.json.
##
## The truth (the tests read it from here, as TRUTH in tests/analysis/study/test_methods_report.py):
##   acceptance: strategy effects vs ebr: proximate +0.6, random -0.8, wachter 0; distance
##     effects differ by strategy: slope (per unit proximity, centred at 1.6) ebr 0,
##     proximate -0.3, random -0.9, wachter +0.6.
##   action: strategy effects vs ebr: proximate +0.4, random -0.5, wachter -0.9; one common
##     distance effect, slope -0.5 for every strategy.
## Ratings are the latent values rounded and clipped to 1..7 (the latent stays near 2..6).
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(here, "fixture_helpers.R"))  # mgcv, args, outdir, write_json

simulate_report_study <- function(n_participants = 160, per = 6, seed = 1313) {
  set.seed(seed)
  levels <- c("ebr", "proximate", "random", "wachter")
  ids <- sprintf("%d", seq_len(n_participants) + 100)
  participant <- rep(ids, each = per)
  n <- length(participant)
  strategy <- sample(levels, n, replace = TRUE)
  proximity <- round(runif(n, 0.1, 3.1), 2)
  sparsity <- pmin(pmax(round(2 * proximity + rnorm(n, 0, 0.7)), 1), 8)
  u0 <- rnorm(n_participants, 0, 0.7)[match(participant, ids)]
  u1 <- rnorm(n_participants, 0, 0.6)[match(participant, ids)]
  x <- proximity - 1.6
  acc_delta <- c(ebr = 0, proximate = 0.6, random = -0.8, wachter = 0)[strategy]
  acc_slope <- c(ebr = 0, proximate = -0.3, random = -0.9, wachter = 0.6)[strategy]
  act_delta <- c(ebr = 0, proximate = 0.4, random = -0.5, wachter = -0.9)[strategy]
  clip <- function(y) pmin(pmax(round(y), 1), 7)
  acceptance <- clip(4 + acc_delta + acc_slope * x + u0 + rnorm(n, 0, 0.9))
  action <- clip(4 + act_delta - 0.5 * x + u1 + rnorm(n, 0, 0.9))
  data.frame(participant, recourse = seq_len(n) + 1000, strategy,
             position = rep(seq_len(per), n_participants), sparsity, proximity,
             any_impossible = 0L, acceptance = as.integer(unname(acceptance)),
             action = as.integer(unname(action)))
}

parametric_table <- function(fit) {
  pt <- summary(fit)$p.table
  out <- list()
  for (i in seq_len(nrow(pt))) out[[rownames(pt)[i]]] <-
    list(estimate = pt[i, 1], se = pt[i, 2], t = pt[i, 3], p = pt[i, 4])
  out
}

smooth_table <- function(fit) {
  st <- summary(fit)$s.table
  out <- list()
  for (i in seq_len(nrow(st))) out[[rownames(st)[i]]] <-
    list(edf = st[i, "edf"], ref_df = st[i, "Ref.df"], F = st[i, "F"], p = st[i, "p-value"])
  out
}

model <- function(fit) {
  list(formula = gsub(" +", " ", paste(deparse(formula(fit)), collapse = " ")),
       method = fit$method, n = length(fit$y), aic = AIC(fit), scale = fit$sig2,
       reml = as.numeric(fit$gcv.ubre), parametric = parametric_table(fit),
       smooth = smooth_table(fit))
}

d <- simulate_report_study()
write.csv(d, file.path(outdir, "study_report.csv"), row.names = FALSE)
df <- d
df$participant <- factor(df$participant)
df$strategy <- factor(df$strategy)
for (outcome in c("acceptance", "action")) {
  common <- as.formula(sprintf("%s ~ strategy + s(proximity) + s(participant, bs = \"re\")",
                               outcome))
  by <- as.formula(sprintf(
    "%s ~ strategy + s(proximity, by = strategy) + s(participant, bs = \"re\")", outcome))
  t0 <- proc.time()[["elapsed"]]
  m_common <- gam(common, data = df, method = "REML")
  releveled <- df
  releveled$strategy <- relevel(releveled$strategy, ref = "proximate")
  m_relevel <- gam(common, data = releveled, method = "REML")
  m_by <- gam(by, data = df, method = "REML")
  ml0 <- gam(common, data = df, method = "ML")
  ml1 <- gam(by, data = df, method = "ML")
  an <- anova(ml0, ml1, test = "Chisq")
  grid <- do.call(rbind, lapply(levels(df$strategy), function(lv) {
    x <- df$proximity[df$strategy == lv]
    data.frame(strategy = lv, proximity = seq(min(x), max(x), length.out = 25))
  }))
  grid$participant <- levels(df$participant)[1]
  pr <- predict(m_by, newdata = grid, se.fit = TRUE, exclude = "s(participant)")
  res <- list(
    outcome = outcome,
    common = model(m_common), relevel = model(m_relevel), by = model(m_by),
    ml0 = model(ml0), ml1 = model(ml1),
    anova = list(resid_df = an[["Resid. Df"]], resid_dev = an[["Resid. Dev"]],
                 df = an[["Df"]][2], deviance = an[["Deviance"]][2], p = an[["Pr(>Chi)"]][2],
                 aic = c(AIC(ml0), AIC(ml1))),
    predict = list(strategy = as.character(grid$strategy), proximity = grid$proximity,
                   fit = unname(pr$fit), se = unname(pr$se.fit)),
    seconds = proc.time()[["elapsed"]] - t0)
  write_json(res, file.path(outdir, sprintf("study_report_%s.json", outcome)))
  cat(sprintf("%s: %.1f s, anova p = %.3g\n", outcome, res$seconds, an[["Pr(>Chi)"]][2]))
  print(summary(m_common)$p.table)
}
