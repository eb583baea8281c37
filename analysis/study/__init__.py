"""The reports of a study export: `seed_report` the seed study's four GAMMs (Table S2 and
Figure 3, `python -m analysis study`), and the comparison of its strategies or methods
(`python -m analysis methods`): `selection` (which evaluations it uses, and why the others
are left out), `methods_report` (the models) and `methods_figures` (what it writes)."""
