## Minimal JSON writer shared by the fixture scripts (no jsonlite in Debian's r-base-core).
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
