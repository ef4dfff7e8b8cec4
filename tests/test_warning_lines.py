"""Every warning points at the caller's line, however deep inside fastkappa it
is raised (``fastkappa._core.caller.user_stacklevel``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fastkappa as fk

pytest.importorskip("pyarrow")
import fastkappa.agreement_files as fkf
import fastkappa.files as fkfiles

SAME = np.zeros(6, dtype=int)


def _calls(tmp_path):
    scores = tmp_path / "scores.csv"
    scores.write_text("t,p,g\n0,0,a\n0,0,a\n1,1,b\n0,1,b\n")
    wide = tmp_path / "wide.csv"
    wide.write_text("a,b,c\n0,0,\n1,1,\n0,1,\n1,1,\n")
    acc = fk.AgreementAccumulator()
    acc.update([0, 0, 1, 1, 2, 2], ["a", "b"] * 3, [0, 0, 1, 1, 0, 0])  # perfect
    silent = np.array([[0, 0, np.nan], [1, 1, np.nan], [0, 1, np.nan], [1, 1, np.nan]])
    return {
        "cohen_kappa": lambda: fk.cohen_kappa(SAME, SAME),
        "kappa_ci": lambda: fk.kappa_ci(SAME, SAME, n_resamples=50, seed=0),
        "kappa_ci clusters": lambda: fk.kappa_ci(SAME, SAME, clusters=[0, 0, 1, 1, 2, 2],
                                                 n_resamples=50, seed=0),
        "compare": lambda: fk.compare(SAME, {"a": SAME, "b": SAME}, n_resamples=50, seed=0),
        "kappa_by_group": lambda: fk.kappa_by_group([0, 0, 1, 0], [0, 0, 1, 1],
                                                    groups=["a", "a", "b", "b"],
                                                    n_resamples=50, seed=0),
        "score_file by": lambda: fkfiles.score_file(str(scores), true="t", pred="p", by="g"),
        "agreement": lambda: fk.agreement(silent),
        "agreement perfect": lambda: fk.agreement(np.array([[0, 0], [1, 1], [0, 0]])),
        "accumulator": acc.compute,
        "agreement_file": lambda: fkf.agreement_file(str(wide), wide=["a", "b", "c"]),
    }


@pytest.mark.parametrize("name", ["cohen_kappa", "kappa_ci", "kappa_ci clusters", "compare",
                                  "kappa_by_group", "score_file by", "agreement",
                                  "agreement perfect", "accumulator", "agreement_file"])
def test_warnings_point_at_the_callers_line(tmp_path, name):
    call = _calls(tmp_path)[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    assert caught, f"{name} raised no warning"
    assert {w.filename for w in caught} == {__file__}, [
        (w.filename, w.lineno, str(w.message)[:60]) for w in caught]
