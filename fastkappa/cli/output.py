"""Writing a command's results: text for people, JSON and CSV for programs."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _display
from ._common import OutputError


class Output:
    """What a command produced: text for people, a dict for JSON, rows for CSV."""

    def __init__(self, text: str, data: dict, rows: list[dict]):
        self.text = text
        self.data = data
        self.rows = rows


#: JSON-ready data (NaN/inf as None, NumPy values as Python values)
_clean = _display.clean


def _render(out: Output, fmt: str) -> str:
    if fmt == "json":
        data = {"command": out.data.get("command"), "fastkappa_version": _display.version(),
                **out.data}  # every JSON output names the version that made it
        return _json_text(_clean(data)) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        fields: dict[str, None] = {}
        for row in out.rows:
            fields.update(dict.fromkeys(row))
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(fields)
        writer.writerows([_csv_value(row.get(k, "")) for k in fields] for row in out.rows)
        return buf.getvalue()
    return out.text.rstrip("\n") + "\n"


#: lists longer than this print one compact element per line (Python's indenting
#: encoder is pure Python: 200,000 groups took seconds)
_LONG_LIST = 64


def _json_text(data: dict) -> str:
    """``data`` as indented JSON; the elements of long lists one per line, each
    encoded by the C encoder."""
    items = []
    for key, value in data.items():
        if isinstance(value, list) and len(value) > _LONG_LIST:
            body = ",\n    ".join(json.dumps(v, allow_nan=False) for v in value)
            text = "[\n    " + body + "\n  ]"
        else:
            text = json.dumps(value, indent=2, allow_nan=False).replace("\n", "\n  ")
        items.append(f"  {json.dumps(str(key))}: {text}")
    return "{\n" + ",\n".join(items) + "\n}" if items else "{}"


def _write(out: Output, fmt: str) -> None:
    """Write the output; a closed or full standard output is an :class:`OutputError`."""
    text = _render(out, fmt)
    stream = sys.stdout
    if stream is None:
        raise OutputError("standard output is closed; nothing was written.")
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        _silence_stdout()
        raise OutputError("standard output was closed before all the results were "
                          "written (a pipe whose reader exited?).") from None
    except OSError as e:
        _silence_stdout()
        raise OutputError(f"cannot write the results to standard output: "
                          f"{e.strerror or e}.") from None


def _silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so the interpreter's last flush of
    what could not be written fails silently instead of printing a traceback."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)


def _csv_value(v: Any) -> Any:
    if type(v) in (int, str):  # the common cells, without the generic cleaning
        return v
    v = _clean(v)
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return v


def _fmt(x: float | None, digits: int = 4) -> str:
    return _display.number(x, digits)


def _ci_dict(res) -> dict:
    """The scalar fields of a KappaCI (the bootstrap distribution left out)."""
    return _display.kappa_ci_dict(res)


def _ci_text(res) -> str:
    """Like ``str(KappaCI)`` with four decimals (a CLI reader compares models)."""
    return _display.kappa_ci_text(res, ".4f")


def _matrix_text(matrix: np.ndarray, labels: Sequence, row_names: Sequence | None = None
                 ) -> str:
    """A confusion matrix as aligned text; ``row_names`` default to the labels."""
    names = [str(v) for v in labels]
    rows = [str(v) for v in (row_names if row_names is not None else labels)]
    cells = [[f"{v:g}" if isinstance(v, float) else str(v) for v in row] for row in
             matrix.tolist()]
    width = max([len(n) for n in names] + [len(c) for r in cells for c in r] + [3])
    lead = max(len(r) for r in rows)
    lines = [" " * (lead + 2) + " ".join(n.rjust(width) for n in names)]
    for name, row in zip(rows, cells, strict=True):
        lines.append(name.ljust(lead) + "  " + " ".join(c.rjust(width) for c in row))
    return "\n".join(lines)



def _resampling_note(method: str | None, n_resamples: int, seed) -> str:
    """"10,000 resamples, seed 12" for a bootstrap, "" otherwise."""
    if method is None or method == "asymptotic":
        return ""
    return f"{n_resamples:,} resamples, seed {seed}"


def _p_at_floor(pr, method: str | None = None) -> bool:
    """A bootstrap p-value at its floor (about 2 / B): only a bound is known."""
    return pr.p_value_is_bound


_shown = _display.shown_name


def _pairs_text(comp, method: str | None = None) -> list[str]:
    return [f"  {_display.pair_line(pr)}" for pr in comp.pairs]


def _pair_dict(pr, method: str | None = None) -> dict:
    """A paired difference for JSON; a p-value at its bootstrap floor is flagged as a
    bound (the true p-value is at most that)."""
    return _display.pair_dict(pr)
