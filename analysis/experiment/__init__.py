"""The seed paper's segregation experiment on recourse methods (`python -m analysis
experiment`, `reproduce`): `run` runs it (`run_experiment`, `run_once`), `cells` as a grid
of run × method cells (in this process or on Dask: `analysis.grid`), `settings` and
`space` say where people live for the indices, `factuals` holds CARLA's per-factual
measures, `paired` the paired differences and verdicts, `people` the bootstrap over people,
`memo` and `threads` how runs share work and threads, `defects` and `paper` the published
defects and numbers, `report` the reproduction report, `figure` its scatter plot.

Kept free of imports, so that reading one module (e.g. `threads` from the study app) does
not load the methods.
"""
