"""Prometheus metrics: request latency by page, recourse latency by method, queue depths,
task failures (docs/operations.md).

gunicorn runs several worker processes and Celery several more, so prometheus-client runs in
its multiprocess mode: each process writes its counters and histograms to memory-mapped
files in ``PROMETHEUS_MULTIPROC_DIR``, which this package sets to a folder per host name
under ``STUDYAPP_METRICS_DIR``, and `/metrics` (`views.py`: staff or a bearer token) sums
every host's files at scrape time and reads the live
values (queue depths, waiting participants) then. The library picks its mode when first
imported; Python runs this file before any module of the package that imports it, so the
folder is set here.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path


def metrics_root() -> Path:
    """The folder holding one sample folder per host (``STUDYAPP_METRICS_DIR``, default
    ``<STUDYAPP_VAR_DIR>/metrics``); `/metrics` sums every one of them."""
    given = os.environ.get("STUDYAPP_METRICS_DIR", "").strip()
    if given:
        return Path(given)
    from django.conf import settings

    return Path(settings.VAR_DIR) / "metrics"


def own_dir() -> Path:
    """This host's (or container's) sample folder: the library names its files by process id,
    which two containers can share, so each host name writes a folder of its own."""
    path = metrics_root() / (socket.gethostname() or "localhost")
    path.mkdir(parents=True, exist_ok=True)
    return path


os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(own_dir())
if "prometheus_client.values" in sys.modules:
    # loaded before this package (a library, a test): its value class was chosen without
    # the folder; choose again, which the metrics `store` then creates use
    from prometheus_client import values

    values.ValueClass = values.get_value_class()
