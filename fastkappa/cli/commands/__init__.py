"""One module per command; each holds plain functions (``run(args)`` unpacks the
parsed arguments into the command's function of explicit keywords)."""
