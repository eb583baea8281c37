# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Comparing recourse methods on a data set
#
# `recourse-analysis experiment` in code: a decision model is trained, every rejected row
# gets each method's counterfactual, and the segregation indices of the population before
# and after everyone takes their recourse are compared, with cost, cost gap, yNN and
# invalidation. One run of three quick methods on the synthetic data here; the paper's
# setting is `--runs 5` with all methods (docs/methods.md).

# %%
import os
import tempfile
from pathlib import Path

from analysis.experiment.run import run_experiment

DATASET = os.environ.get("DATASET", "synthetic")
METHODS = os.environ.get("METHODS", "ebr,wachter,gs").split(",")
out = Path(tempfile.mkdtemp(prefix="experiment-"))
results = run_experiment(DATASET, METHODS, runs=1, out_dir=out, seed=0, progress=False)
results

# %%
print((out / "results.md").read_text())

# %% [markdown]
# The population before (origin) and after each method's recourses, in the first two
# features, as `figure.png` of the command line:

# %%
from IPython.display import Image

Image(filename=str(out / "figure.png"))
