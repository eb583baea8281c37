# Reference for analysis.experiment.paired: R's t.test (95% interval, two-sided p) per
# column and p.adjust(method = "holm") across the columns, on fixed data written out here.
# Run: Rscript tests/analysis/experiment/make_paired_fixture.R (from the repository root)
# Writes tests/analysis/experiment/fixtures/paired_reference.csv
set.seed(29)
cols <- list(
  a = c(0.0091, 0.0058, 0.0121, 0.0075, 0.0102, 0.0088, 0.0110, 0.0069, 0.0097, 0.0093),
  b = c(-0.0006, 0.0004, -0.0011, 0.0000, -0.0003, -0.0009, 0.0002, -0.0007, -0.0001, -0.0005),
  c = round(rnorm(10, 0.002, 0.004), 6),
  d = round(rlnorm(5, 0, 0.5) - 1, 6),
  e = round(rnorm(5, -0.01, 0.004), 6),
  f = round(rnorm(10, 0, 1), 6)
)
rows <- list()
for (k in names(cols)) {
  x <- cols[[k]]
  tt <- t.test(x)
  rows[[k]] <- data.frame(
    column = k, n = length(x), values = paste(format(x, digits = 17), collapse = ";"),
    lo = tt$conf.int[1], hi = tt$conf.int[2], p = tt$p.value
  )
}
out <- do.call(rbind, rows)
out$p_holm <- p.adjust(out$p, method = "holm")
out$p_bh <- p.adjust(out$p, method = "BH")
write.csv(out, "tests/analysis/experiment/fixtures/paired_reference.csv", row.names = FALSE)
