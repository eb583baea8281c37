## mgcv's thin-plate basis (smoothCon, absorb.cons = TRUE) for three covariates: exactly k = 10
## distinct values (mgcv's "pure knot" case, no eigen step), 39 (analysis.gamm: dense eigen-
## decomposition) and 133 (over 4k + 40: Lanczos in both). Wood's (2013) smooth test is not
## invariant to the basis, so analysis.gamm must build mgcv's columns, not just their span.
## Usage (in this folder): Rscript make_basis_fixtures.R fixtures/tp_basis_mgcv.json
source("fixture_helpers.R")  # mgcv, args, write_json
set.seed(18)
cases <- list(
  pure_knot = rep(c(0, 1, 2, 3, 5, 6, 8, 9, 10, 14), each = 4),
  dense = round(rnorm(120), 1),
  lanczos = round(runif(150, 0, 6), 2)
)
out <- list()
for (name in names(cases)) {
  x <- cases[[name]]
  sm <- smoothCon(s(x, k = 10), data = data.frame(x = x), absorb.cons = TRUE)[[1]]
  out[[name]] <- list(x = x, n_unique = length(unique(x)), X = as.vector(sm$X),
                      ncol = ncol(sm$X), S = as.vector(sm$S[[1]]))
}
out$R_version <- R.version.string
out$mgcv_version <- as.character(packageVersion("mgcv"))
write_json(out, args[1])
writeLines(gsub(" +", " ", readLines(args[1])), args[1])  # drop formatC padding
