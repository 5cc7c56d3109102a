# deskhand's R driver: runs blocks read from fd 3 in the global environment
# and reports "MARKER STATUS" on fd 4 after each.
local({
  options(warn = 1)
  blocks <- file("/dev/fd/3", open = "rb", raw = TRUE)
  ctl <- file("/dev/fd/4", open = "wb", raw = TRUE)
  pid <- Sys.getpid()
  repeat {
    header <- readLines(blocks, n = 1L, warn = FALSE)
    if (length(header) == 0L) quit(save = "no", status = 0L)
    if (!nzchar(header)) next  # deskhand's token: it looks whether we wait here
    parts <- strsplit(header, " ", fixed = TRUE)[[1L]]
    size <- as.integer(parts[2L])
    src <- if (size > 0L) rawToChar(readBin(blocks, "raw", size)) else ""
    status <- tryCatch({
      for (e in parse(text = src, keep.source = FALSE)) {
        r <- withVisible(eval(e, envir = globalenv()))
        if (r$visible) print(r$value)
      }
      0L
    }, interrupt = function(c) {
      message("Interrupted")
      130L
    }, error = function(c) {
      call <- conditionCall(c)
      top <- is.null(call) || identical(call, quote(eval(e, envir = globalenv())))
      where <- if (top) "" else paste0(" in ", deparse(call)[1L])
      message("Error", where, ": ", conditionMessage(c))
      1L
    })
    flush(stdout())
    flush(stderr())
    if (Sys.getpid() != pid) quit(save = "no", status = status)
    writeLines(paste(parts[1L], status), ctl)
    flush(ctl)
  }
})
