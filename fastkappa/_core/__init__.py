"""fastkappa's core: options, encodings, tables, kappa, resampling units and intervals."""
