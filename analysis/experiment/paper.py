"""Gao & Lakkaraju (ICML 2023), Table 6 (Appendix G): the segregation indices of the
original population and after each method's recourse, means over the paper's 5 runs, as
printed. The reproduction report (`analysis.experiment.report`) sets them beside this
project's paired differences.
"""

from __future__ import annotations

METHODS = ("ibr", "ebr", "cchvae", "gs", "wachter", "cruds")
#: data set -> index -> (origin, IBR, EBR, CCHVAE, GS, Wachter, CRUDS)
TABLE6: dict[str, dict[str, tuple[float, ...]]] = {
    "german": {
        "centralization": (0.0487, 0.0452, 0.0104, 0.0384, 0.0452, 0.0803, 0.1260),
        "atkinson": (0.1790, 0.1731, 0.1041, 0.2342, 0.1754, 0.1965, 0.2247),
        "avg_proximity": (0.3051, 0.3769, 0.3357, 0.2974, 0.2592, 0.2726, 0.4548),
    },
    "gmc": {
        "centralization": (0.3414, 0.3314, 0.3374, 0.3331, 0.3411, 0.3417, 0.3320),
        "atkinson": (0.1218, 0.1193, 0.1216, 0.1248, 0.1220, 0.1218, 0.1252),
        "avg_proximity": (0.5820, 0.5902, 0.5853, 0.5884, 0.5826, 0.5825, 0.5895),
    },
    "law_sex": {
        "centralization": (0.0858, 0.0694, 0.0805, 0.0743, 0.0829, 0.0833, 0.0932),
        "atkinson": (0.0319, 0.0314, 0.0318, 0.0345, 0.0318, 0.0326, 0.0387),
        "avg_proximity": (0.7027, 0.7177, 0.7076, 0.7173, 0.7055, 0.7070, 0.7168),
    },
    "law_race": {
        "centralization": (0.0288, 0.0028, 0.0137, 0.0025, 0.0245, 0.0175, 0.0020),
        "atkinson": (0.2512, 0.1939, 0.2418, 0.2374, 0.2436, 0.2401, 0.2130),
        "avg_proximity": (0.6660, 0.7103, 0.6833, 0.7035, 0.6739, 0.6782, 0.7111),
    },
    "compas_sex": {
        "centralization": (0.0020, 0.0018, 0.0020, 0.0009, 0.0025, 0.0027, 0.0057),
        "atkinson": (0.0581, 0.0478, 0.0537, 0.0521, 0.0508, 0.0522, 0.0500),
        "avg_proximity": (0.6371, 0.6511, 0.6484, 0.6474, 0.6409, 0.6405, 0.6545),
    },
    "compas_race": {
        "centralization": (0.2947, 0.2846, 0.2943, 0.2892, 0.2986, 0.3010, 0.3054),
        "atkinson": (0.0709, 0.0563, 0.0589, 0.0656, 0.0627, 0.0654, 0.0500),
        "avg_proximity": (0.6236, 0.6372, 0.6358, 0.6366, 0.6288, 0.6281, 0.6435),
    },
}


def paper_origin(dataset: str, index: str) -> float:
    return TABLE6[dataset][index][0]


def paper_change(dataset: str, method: str, index: str) -> float:
    """The paper's after − origin for a method (a difference of two printed means)."""
    row = TABLE6[dataset][index]
    return row[1 + METHODS.index(method)] - row[0]


#: Table 3 (Appendix D): the "invalidation rate" (here `failure_rate`), in METHODS order
TABLE3: dict[str, tuple[float, ...]] = {
    "german": (0.0013, 0.3385, 0.0013, 0.0, 0.9893, 0.8216),
    "gmc": (0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    "law_sex": (0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    "law_race": (0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    "compas_sex": (0.0, 0.0, 0.0, 0.0, 0.8448, 0.0),
    "compas_race": (0.0, 0.0, 0.0, 0.0, 0.8448, 0.0),
}


def paper_failure(dataset: str, method: str) -> float:
    return TABLE3[dataset][METHODS.index(method)]
