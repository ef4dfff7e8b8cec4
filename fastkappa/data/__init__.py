"""Data sets shipped with fastkappa (NumPy only; no download).

- :func:`load_retinopathy`: a simulated diabetic-retinopathy grading set,
  120,000 eyes of 60,000 patients, grades 0-4, three models. Regenerate it
  with ``python -m fastkappa.data.make_demo_data``.
- :func:`load_fleiss_1969`: the 3 x 3 table of Fleiss, Cohen & Everitt (1969).
"""

from __future__ import annotations

import json
import os

import numpy as np

__all__ = ["GRADE_NAMES", "load_fleiss_1969", "load_retinopathy"]

_HERE = os.path.dirname(os.path.abspath(__file__))

#: names of the retinopathy grades 0-4
GRADE_NAMES = ("none", "mild", "moderate", "severe", "proliferative")


def load_retinopathy() -> dict[str, np.ndarray]:
    """The simulated retinopathy set as a dict of equal-length arrays.

    Keys: ``patient_id`` (int32; two eyes per patient), ``eye`` (0 left,
    1 right), ``y_true`` (reference grade 0-4), ``model_a``, ``model_b``,
    ``model_c`` (each model's grade, int8) and ``score_a`` (model A's
    continuous output on the grade scale, float16).

    Examples
    --------
    >>> from fastkappa.data import load_retinopathy
    >>> d = load_retinopathy()
    >>> len(d["y_true"]), sorted(set(d["y_true"].tolist()))
    (120000, [0, 1, 2, 3, 4])
    """
    with np.load(os.path.join(_HERE, "retinopathy.npz")) as f:
        return {k: f[k] for k in f.files}


def load_fleiss_1969() -> dict:
    """The published table of Fleiss, Cohen & Everitt (1969) and its source.

    Returns a dict with ``table`` (a 3 x 3 int64 array, rows rater 1),
    ``kappa`` (the exact unweighted kappa, 3/7, as a float) and
    ``citation``.

    Examples
    --------
    >>> from fastkappa.data import load_fleiss_1969
    >>> load_fleiss_1969()["table"].sum()
    np.int64(200)
    """
    with open(os.path.join(_HERE, "fleiss_cohen_everitt_1969.json"), encoding="utf-8") as f:
        raw = json.load(f)
    num, den = (int(x) for x in raw["kappa"].split("/"))
    out = dict(raw)
    out["table"] = np.asarray(raw["table"], dtype=np.int64)
    out["kappa"] = num / den
    return out
