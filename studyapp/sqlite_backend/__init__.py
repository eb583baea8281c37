"""Django's SQLite backend with a writer queue: see `base.py`."""
