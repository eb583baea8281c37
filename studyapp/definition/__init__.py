"""The study's definition, studyapp's ground floor: typed settings, questions, page settings
and the engine objects of a study. It imports only `studyapp.models` and the engine, so that
every other studyapp package can read it without importing each other."""
