## Reference upper-tail probabilities of weighted chi-square sums from mgcv's psum.chisq
## (Davies' algorithm), for tests/analysis/gamm/test_chisq.py.
## Usage: Rscript chisq_reference.R OUT.json
suppressPackageStartupMessages(library(mgcv))
out <- commandArgs(trailingOnly = TRUE)[1]
set.seed(7)
cases <- list(
  list(q = 3, lb = c(1, 1, 1), df = c(1, 1, 1)),
  list(q = 5, lb = c(2, 1, 0.5), df = c(1, 1, 1)),
  list(q = 0, lb = c(1, 1, 1, -4 / 40), df = c(1, 1, 1, 40)),
  list(q = 0, lb = c(runif(30), -25 / 1400), df = c(rep(1, 30), 1400)),
  list(q = 0, lb = c(1, 0.6, 0.2, -3.5 / 1450), df = c(1, 1, 1, 1450)),
  list(q = 12, lb = c(3, 1, 1, 0.2), df = c(1, 2, 3, 1)),
  list(q = 0, lb = c(runif(300, 0, 1), -330 / 1450), df = c(rep(1, 300), 1450))
)
enc <- function(v) sprintf("[%s]", paste(formatC(v, digits = 17, format = "g"), collapse = ", "))
items <- vapply(cases, function(cs) {
  p <- psum.chisq(cs$q, cs$lb, df = cs$df)
  sprintf("{\"q\": %s, \"lb\": %s, \"df\": %s, \"p\": %s}", formatC(cs$q, digits = 17),
          enc(cs$lb), enc(cs$df), formatC(p, digits = 17, format = "g"))
}, "")
writeLines(sprintf("[%s]", paste(items, collapse = ",\n")), out)
