## mgcv references for comparisons where no likelihood-ratio test applies.
## Usage: Rscript make_no_lr_test_fixtures.R OUTDIR
## Simulates the method-comparison study of issue 27 in small: 70 participants in two
## conditions (A: proximate, wachter, ebr; B: random, wachter, gs), one plan of each, ratings
## drawn uniformly from 1..7 (no effect at all). For seed 28, anova.gam(m0, m1, test = "Chisq")
## of the common smooth against the smooth by strategy (ML fits, k = 5) prints a p-value below
## 0.05 on a negative df difference while AIC favours the common smooth; for seed 8 the df
## difference is positive but the larger model fits worse (R prints no p). Writes
## study_no_lr_test_<seed>.csv and no_lr_test_anova.json (per seed: anova's table and AICs).
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(here, "fixture_helpers.R"))  # mgcv, args, outdir, write_json

simulate <- function(seed, n = 70) {
  set.seed(seed)
  participant <- rep(sprintf("p%02d", seq_len(n)), each = 3)
  condition <- rep(ifelse(seq_len(n) %% 2 == 1, "A", "B"), each = 3)
  strategy <- ifelse(condition == "A", rep(c("proximate", "wachter", "ebr"), n),
                     rep(c("random", "wachter", "gs"), n))
  proximity <- round(runif(3 * n, 0, 3), 3)
  acceptance <- sample(1:7, 3 * n, TRUE)
  action <- sample(1:7, 3 * n, TRUE)
  data.frame(participant, condition, strategy, proximity, acceptance, action)
}

out <- list()
for (seed in c(8, 28)) {
  d <- simulate(seed)
  write.csv(d, file.path(outdir, sprintf("study_no_lr_test_%d.csv", seed)), row.names = FALSE)
  d$participant <- factor(d$participant)
  d$strategy <- factor(d$strategy)
  m0 <- gam(acceptance ~ strategy + s(proximity, k = 5) + s(participant, bs = "re"),
            data = d, method = "ML")
  m1 <- gam(acceptance ~ strategy + s(proximity, by = strategy, k = 5) +
              s(participant, bs = "re"), data = d, method = "ML")
  an <- anova(m0, m1, test = "Chisq")
  out[[as.character(seed)]] <- list(
    resid_df = an[["Resid. Df"]], resid_dev = an[["Resid. Dev"]], df = an$Df[2],
    deviance = an$Deviance[2], p = an[["Pr(>Chi)"]][2], aic = c(AIC(m0), AIC(m1)))
}
write_json(out, file.path(outdir, "no_lr_test_anova.json"))
