## mgcv references for method-comparison models (parametric factor and numeric terms, factor-by
## smooths, ML fits and their likelihood-ratio comparison, predictions with standard errors,
## variance components, k.check).
## Usage: Rscript make_comparison_fixtures.R OUTDIR
## Simulates (seed 404) a study where each participant rates recourses from three strategies,
## writes it as study_methods.csv and each model's mgcv numbers as comparison_<name>.json.
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(here, "fixture_helpers.R"))  # mgcv, args, outdir, write_json

simulate_methods <- function(n_participants = 150, per = 6, seed = 404) {
  set.seed(seed)
  ids <- sprintf("u%03d", seq_len(n_participants))
  uid <- rep(ids, each = per)
  n <- length(uid)
  strategy <- rep(c("sparsest", "proximate", "random"), length.out = n)
  condition <- rep(sample(c("control", "explained"), n_participants, TRUE), each = per)
  age <- rep(round(runif(n_participants, 20, 65)), each = per)
  proximity <- round(ifelse(strategy == "random", runif(n, 0.2, 4), runif(n, 0, 2.5)), 2)
  b0 <- rnorm(n_participants, 0, 0.9)[match(uid, ids)]
  b1 <- rnorm(n_participants, 0, 0.3)[match(uid, ids)]
  f <- ifelse(strategy == "sparsest", -1.2 * pmin(proximity, 1.2),
              ifelse(strategy == "proximate", -0.6 * proximity, 0.4 * sin(proximity)))
  y <- 4 + 0.3 * (strategy == "proximate") + 0.25 * (condition == "explained") -
    0.01 * (age - 40) + f + b0 + b1 * proximity + rnorm(n, 0, 1)
  data.frame(uid, strategy, condition, age, proximity, action = round(y, 3))
}

summarise <- function(fit, d) {
  s <- summary(fit)
  pt <- s$p.table
  parametric <- list()
  for (i in seq_len(nrow(pt))) parametric[[rownames(pt)[i]]] <-
    list(estimate = pt[i, 1], se = pt[i, 2], t = pt[i, 3], p = pt[i, 4])
  st <- s$s.table
  smooth <- list()
  for (i in seq_len(nrow(st))) smooth[[rownames(st)[i]]] <-
    list(edf = st[i, "edf"], ref_df = st[i, "Ref.df"], F = st[i, "F"], p = st[i, "p-value"])
  ll <- logLik(fit)
  list(formula = gsub(" +", " ", paste(deparse(formula(fit)), collapse = " ")), method = fit$method,
       n = nrow(d), aic = AIC(fit), loglik = as.numeric(ll), df_aic = attr(ll, "df"),
       scale = fit$sig2, r_sq = s$r.sq, dev_expl = s$dev.expl, reml = as.numeric(fit$gcv.ubre),
       sum_edf = sum(fit$edf), sum_edf1 = sum(fit$edf1), sum_edf2 = sum(fit$edf2),
       sp = as.list(fit$sp), parametric = parametric, smooth = smooth,
       fitted = unname(fit$fitted.values), coef_names = names(coef(fit)))
}

d <- simulate_methods()
write.csv(d, file.path(outdir, "study_methods.csv"), row.names = FALSE)
df <- d
df$uid <- factor(df$uid); df$strategy <- factor(df$strategy); df$condition <- factor(df$condition)

forms <- list(
  parametric = action ~ strategy + condition + age + s(proximity) + s(uid, bs = "re"),
  by = action ~ strategy + s(proximity, by = strategy) + s(uid, bs = "re") +
    s(uid, proximity, bs = "re"),
  by_cr = action ~ strategy + s(proximity, by = strategy, bs = "cr", k = 8) + condition +
    s(uid, bs = "re"),
  ml0 = action ~ s(proximity) + s(uid, bs = "re"),
  ml1 = action ~ strategy + s(proximity, by = strategy) + s(uid, bs = "re")
)
fits <- list()
for (name in names(forms)) {
  method <- if (startsWith(name, "ml")) "ML" else "REML"
  t0 <- proc.time()[["elapsed"]]
  fit <- gam(forms[[name]], data = df, method = method)
  res <- summarise(fit, df)
  res$seconds <- proc.time()[["elapsed"]] - t0
  fits[[name]] <- fit
  if (name == "by") {
    ## predictions with standard errors, with and without the participant terms
    grid <- expand.grid(proximity = seq(0, 4, length.out = 9),
                        strategy = c("proximate", "random", "sparsest"))
    grid$uid <- "u001"
    full <- predict(fit, newdata = grid, se.fit = TRUE)
    pop <- predict(fit, newdata = grid, se.fit = TRUE,
                   exclude = c("s(uid)", "s(uid,proximity)"))
    res$predict <- list(proximity = grid$proximity, strategy = as.character(grid$strategy),
                        uid = grid$uid, fit = unname(full$fit), se = unname(full$se.fit),
                        fit_pop = unname(pop$fit), se_pop = unname(pop$se.fit))
    vc <- gam.vcomp(fit)
    res$vcomp <- list(names = rownames(vc), std_dev = unname(vc[, 1]),
                      lower = unname(vc[, 2]), upper = unname(vc[, 3]))
    set.seed(1)
    kc <- k.check(fit, n.rep = 400)
    res$k_check <- list(names = rownames(kc), k = unname(kc[, 1]), edf = unname(kc[, 2]),
                        k_index = unname(kc[, 3]), p = unname(kc[, 4]))
  }
  write_json(res, file.path(outdir, sprintf("comparison_%s.json", name)))
  cat(sprintf("%s: %.1f s\n", name, res$seconds))
}
an <- anova(fits$ml0, fits$ml1, test = "Chisq")
write_json(list(resid_df = an[["Resid. Df"]], resid_dev = an[["Resid. Dev"]],
                df = an[["Df"]][2], deviance = an[["Deviance"]][2], p = an[["Pr(>Chi)"]][2],
                aic = c(AIC(fits$ml0), AIC(fits$ml1))),
           file.path(outdir, "comparison_anova.json"))
print(an)
