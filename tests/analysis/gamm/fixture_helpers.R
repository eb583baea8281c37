## Shared by the fixture scripts, which source it from beside themselves: loads mgcv, reads the
## output folder (`args`, `outdir`: the first argument, else "."), and holds a minimal JSON
## writer (no jsonlite in Debian's r-base-core) and the summary pieces two scripts write alike.
suppressPackageStartupMessages(library(mgcv))
args <- commandArgs(trailingOnly = TRUE)
outdir <- if (length(args) >= 1) args[1] else "."

write_json <- function(x, path) {
  enc <- function(v) {
    if (is.list(v)) {
      if (!is.null(names(v))) {
        parts <- vapply(names(v), function(k) sprintf("\"%s\": %s", k, enc(v[[k]])), "")
        return(sprintf("{%s}", paste(parts, collapse = ", ")))
      }
      return(sprintf("[%s]", paste(vapply(v, enc, ""), collapse = ", ")))
    }
    if (is.character(v)) {
      s <- sprintf("\"%s\"", gsub("\"", "\\\"", v, fixed = TRUE))
      return(if (length(v) == 1) s else sprintf("[%s]", paste(s, collapse = ", ")))
    }
    if (is.logical(v)) v <- as.numeric(v)
    num <- ifelse(is.finite(v), formatC(v, digits = 17, format = "g"), "null")
    if (length(v) == 1) num else sprintf("[%s]", paste(num, collapse = ", "))
  }
  writeLines(enc(x), path)
}

## mgcv's smooth table (summary(fit)$s.table) under the names analysis.gamm gives the terms of
## y ~ s(distance) + s(participant) + s(participant, distance): edf, ref_df, the statistic (as
## `stat_name`, from column `stat_col`), p, then what `extra(i)` adds for row i.
smooth_table <- function(st, distance, stat_name, stat_col, extra = function(i) list()) {
  term_names <- c(sprintf("s(%s)", distance), "s(participant)",
                  sprintf("s(participant,%s)", distance))
  smooth <- list()
  for (i in seq_len(nrow(st))) {
    row <- list(edf = st[i, "edf"], ref_df = st[i, "Ref.df"])
    row[[stat_name]] <- st[i, stat_col]
    row$p <- st[i, "p-value"]
    smooth[[term_names[i]]] <- c(row, extra(i))
  }
  smooth
}

## s(x) with its standard errors on 50 points spanning the data's x (participant terms at 0).
smooth_grid <- function(fit, df) {
  grid <- seq(min(df$x), max(df$x), length.out = 50)
  nd <- data.frame(x = grid, uid = df$uid[1])
  pr <- predict(fit, newdata = nd, type = "terms", terms = "s(x)", se.fit = TRUE)
  list(x = grid, fit = unname(pr$fit[, 1]), se = unname(pr$se.fit[, 1]))
}
