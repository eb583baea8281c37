"""A study as one file, its version history, and pre-registration as code: the study file's
export and import (`study_files`), versions (`history`, `diff`), the registration bundle and
its OSF-style Markdown (`bundle`, `markdown`) and the deviation report (`deviations`)."""
