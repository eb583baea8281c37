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
# # Analysing a study export
#
# The export is the folder `recourse-study export_study STUDY --out DIR` writes, or the ZIP
# the console downloads. Here: the demo method-comparison study (`data/demo_export`, 60
# simulated participants; `data/make_demo_export.sh` made it). Set `EXPORT` to your own.
#
# 1. Table S2 and Figure 3: the seed study's four GAMMs;
# 2. one GAMM as a result object (summary, terms, predictions with standard errors, plot);
# 3. a comparison of the strategies and methods shown.

# %%
import os
from pathlib import Path

import matplotlib.pyplot as plt

from analysis.export import load_export
from analysis.gamm import fit_gamm
from analysis.study.seed_report import figure3, seed_models, table_s2

EXPORT = Path(os.environ.get("EXPORT", "data/demo_export"))
export = load_export(EXPORT)
kept = export.kept_evaluations()  # the seed study's analysis set: no item marked impossible
print(
    f"{len(export.evaluations)} evaluations, {len(kept)} kept, "
    f"{kept['participant'].nunique()} participants"
)

# %% [markdown]
# ## Table S2 and Figure 3
#
# `OUTCOME ~ s(DISTANCE) + s(participant, bs = "re") + s(participant, DISTANCE, bs = "re")`
# by REML, as mgcv; the basis dimension is lowered where a distance has fewer values.

# %%
fits = []
for spec in seed_models():
    k = min(10, kept[spec.distance].nunique())
    fits.append((spec, fit_gamm(kept, spec.outcome, spec.distance, "participant", k=k)))
table = table_s2(fits)
table

# %%
figure = figure3(fits)

# %% [markdown]
# ## One model as a result object

# %%
fit = fits[2][1]  # Model-3: action on sparsity
fit.summary()

# %%
fit.to_frame()

# %%
new = kept[["participant", "sparsity"]].drop_duplicates("sparsity").sort_values("sparsity")
fit.predict(new, include_random=False, se=True).assign(sparsity=new["sparsity"].to_numpy())

# %%
ax = fit.plot(residuals=True)
plt.show()

# %% [markdown]
# ## Strategies and methods compared
#
# `recourse-analysis methods` in code: per outcome the contrasts against a reference
# strategy with 95% intervals, the distance smooth by strategy, and whether the distance
# effect differs by strategy; evaluations dropped for a counted reason each.

# %%
from analysis.study.methods_figures import contrasts_table, outcome_figure
from analysis.study.methods_report import build_report
from analysis.study.selection import load_study_export

report = build_report(load_study_export(EXPORT), str(EXPORT), min_per_level=10)
report.selection.dropped_by_reason()

# %%
contrasts_table(report)

# %%
figure = outcome_figure(report, report.outcomes["action"])
