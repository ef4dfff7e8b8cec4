"""One module per command.

Each holds the command as a plain function of explicit keywords (``score``,
``compare``, ``tune``/``apply`` for ``thresholds``, ``demo``, ``warmup``,
``agreement``) that computes and returns an :class:`~fastkappa.cli.output.Output`,
and ``run(args)``, which checks what only the command line can get wrong (a
usage error, exit code 2) and unpacks the parsed arguments into that function.
"""
