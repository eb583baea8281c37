"""Gunicorn settings chosen for the host: `gunicorn -c python:studyapp.config.gunicorn`.

A participant request is short and mostly CPU (templates, ORM), so more processes than
cores only queue for the same cores; threads in each process cover the moments a request
waits on the database or a row lock. Defaults: one process per core plus one, four threads
each. WEB_CONCURRENCY (processes), GUNICORN_THREADS and GUNICORN_BIND override them, the
command line overrides everything.
"""

from __future__ import annotations

import os

from studyapp.config.env import int_env

cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
workers = int_env("WEB_CONCURRENCY", cores + 1, 1, 64)
threads = int_env("GUNICORN_THREADS", 4, 1, 64)
worker_class = "gthread" if threads > 1 else "sync"
bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
#: waiting connections while every thread is busy (a burst of arrivals)
backlog = 2048
#: the recourse task runs in the worker, never here; a request this long is stuck
timeout = 180
graceful_timeout = 30
keepalive = 5
