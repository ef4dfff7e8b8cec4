"""Regenerate ``retinopathy.npz``, the simulated graded set behind ``fastkappa demo``.

Run ``python -m fastkappa.data.make_demo_data`` (or this file) to rebuild it;
the output is deterministic for a given NumPy version.

The simulation mimics a diabetic-retinopathy screening set: 60,000 patients,
two eyes each, graded 0-4 (none, mild, moderate, severe, proliferative) with
the class imbalance of large screening programmes (about three quarters
grade 0, a few percent grades 3 and 4). The two eyes of a patient share the
patient's disease level, so rows are clustered by patient. Three models
grade every eye: ``model_a`` (a strong network), ``model_b`` (a weaker one)
and ``model_c`` (a fair model that systematically under-grades). Each sees
the true latent severity through its own noise; ``score_a`` is model A's
continuous regression output before rounding, for threshold tuning.
"""

from __future__ import annotations

import os

import numpy as np

N_PATIENTS = 60_000
SEED = 20_240_611
#: grade prevalence, roughly that of large retinopathy screening sets
PREVALENCE = np.array([0.735, 0.07, 0.15, 0.025, 0.02])


def _normal_cuts(prevalence: np.ndarray) -> np.ndarray:
    """Cut points on a standard normal latent scale giving ``prevalence``."""
    from statistics import NormalDist

    cum = np.cumsum(prevalence)[:-1]
    return np.array([NormalDist().inv_cdf(float(c)) for c in cum])


def make(seed: int = SEED, n_patients: int = N_PATIENTS) -> dict[str, np.ndarray]:
    """The simulated data set as a dict of arrays (one entry per column)."""
    rng = np.random.default_rng(seed)
    n = 2 * n_patients
    patient = np.repeat(np.arange(1, n_patients + 1, dtype=np.int32), 2)
    eye = np.tile(np.array([0, 1], dtype=np.int8), n_patients)  # 0 left, 1 right
    # latent severity: shared by both eyes of a patient, plus each eye's own part
    shared = rng.standard_normal(n_patients)
    latent = 0.85 * np.repeat(shared, 2) + np.sqrt(1 - 0.85**2) * rng.standard_normal(n)
    cuts = _normal_cuts(PREVALENCE)
    # grader noise on the reference grade too: the "truth" is itself a grading
    y_true = np.searchsorted(cuts, latent + 0.15 * rng.standard_normal(n)).astype(np.int8)

    def model(noise_sd: float, shift: float, patient_noise_sd: float) -> np.ndarray:
        per_patient = np.repeat(patient_noise_sd * rng.standard_normal(n_patients), 2)
        return latent + shift + per_patient + noise_sd * rng.standard_normal(n)

    score_a = model(0.35, 0.0, 0.10)
    score_b = model(0.55, 0.0, 0.20)
    score_c = model(0.40, -0.35, 0.15)
    # model outputs on the grade scale (a regression head), then rounded
    grade_scale = np.interp(score_a, np.r_[-4, cuts, 4], np.arange(-0.5, 5.0, 1.0))
    out = {
        "patient_id": patient,
        "eye": eye,
        "y_true": y_true,
        "model_a": np.searchsorted(cuts, score_a).astype(np.int8),
        "model_b": np.searchsorted(cuts, score_b).astype(np.int8),
        "model_c": np.searchsorted(cuts, score_c).astype(np.int8),
        "score_a": np.round(grade_scale, 2).astype(np.float16),
    }
    return out


def main(path: str | None = None) -> str:
    """Write the data set next to this file (or to ``path``); return the path."""
    if path is None:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "retinopathy.npz")
    np.savez_compressed(path, **make())
    return path


if __name__ == "__main__":
    written = main()
    print(f"wrote {written} ({os.path.getsize(written) / 1e6:.2f} MB)")
