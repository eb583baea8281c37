"""Makes codings.csv: three coders code 40 answers with a codebook of three codes (seed 5);
coder c skips every fifth answer, so alpha sees missing judgements. Run from this folder:
python make_codings.py"""

from __future__ import annotations

import numpy as np
import pandas as pd

CODES = ["cost", "effort", "unrealistic"]


def main() -> None:
    rng = np.random.default_rng(5)
    truth = rng.random((40, 3)) < [0.4, 0.3, 0.2]
    rows = []
    for coder, noise in (("a", 0.08), ("b", 0.15), ("c", 0.25)):
        for u in range(40):
            if coder == "c" and u % 5 == 0:
                continue
            given = truth[u] ^ (rng.random(3) < noise)
            rows.append({"unit": f"{100 + u}:acceptance_why", "coder": coder,
                         "codes": ";".join(c for c, g in zip(CODES, given, strict=True) if g)})  # fmt: skip
    pd.DataFrame(rows).to_csv("codings.csv", index=False)


if __name__ == "__main__":
    main()
