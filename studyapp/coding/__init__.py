"""Qualitative coding of the participants' free-text answers in the researcher console: a
codebook per study, blind coding by assigned coders, their agreement (computed by
`analysis.coding`), resolution into final codes, exemplar quotes and grouping suggestions.

A Django app of its own (label `studyapp_coding`) so that its tables and migrations stand
apart from the study's; it depends on `studyapp` and `analysis`, never the other way round
(the export learns of its tables through `studyapp.export.extensions`)."""
