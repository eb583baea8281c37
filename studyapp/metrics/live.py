"""Values read at scrape time rather than counted: queue depths from the broker, and the
participants whose recourses are still being made (the "stuck tasks" alert).

Queue depths come from a passive queue declaration on the broker, which every kombu
transport answers with the queue's message count: Redis counts its lists (``LLEN``), the
embedded SQLite broker counts its message table, RabbitMQ answers from its own counter. It
is one broker round trip per queue per scrape, and none on a participant's request.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.conf import settings
from django.db.models import Count, Min
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from studyapp.metrics import metrics_root

#: seconds a scrape waits for the broker before reporting it down
BROKER_TIMEOUT_S = 3.0


def queue_depths() -> dict[str, int]:
    """Messages waiting in each configured queue (raises when the broker cannot be reached)."""
    from kombu.exceptions import ChannelError

    from studyapp.config.celery_app import app

    names = [q.name for q in app.amqp.queues.values()]
    depths: dict[str, int] = {}
    with app.connection_for_read() as conn:
        conn.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_S)
        for name in names:
            channel = conn.channel()
            try:
                depths[name] = int(channel.queue_declare(queue=name, passive=True).message_count)
            except ChannelError:  # never declared, or emptied and removed (Redis): nothing waits
                depths[name] = 0
            finally:
                channel.close()
    return depths


class SampleFiles(Collector):
    """Every process's counters and histograms, summed over every host folder (the
    library's own merge; a host folder per container keeps process ids from clashing)."""

    def collect(self) -> Iterator[Metric]:
        files = sorted(str(f) for f in metrics_root().glob("*/*.db"))
        yield from MultiProcessCollector.merge(files, accumulate=True)


class LiveCollector(Collector):
    """Queue depths, broker reachability, and participants waiting for their recourses."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        up = GaugeMetricFamily("studyapp_broker_up", "1 when the broker answered this scrape.")
        depth = GaugeMetricFamily(
            "studyapp_queue_depth", "Messages waiting in a Celery queue.", labels=["queue"]
        )
        try:
            for name, n in sorted(queue_depths().items()):
                depth.add_metric([name], n)
            up.add_metric([], 1)
        except Exception:  # noqa: BLE001 - any broker failure is what this series reports
            up.add_metric([], 0)
        yield up
        yield depth
        yield from _waiting()


def _waiting() -> Iterator[GaugeMetricFamily]:
    """Participants whose recourses are queued or running, and the oldest one's wait."""
    from studyapp.models import Participant

    G = Participant.Generation
    rows = (
        Participant.objects.filter(generation__in=(G.QUEUED, G.RUNNING))
        .values("generation")
        .annotate(n=Count("pk"), oldest=Min("generation_queued_at"))
    )
    count = GaugeMetricFamily(
        "studyapp_recourse_waiting",
        "Participants whose recourse task is queued or running.",
        labels=["generation"],
    )
    oldest = GaugeMetricFamily(
        "studyapp_recourse_oldest_wait_seconds",
        "Seconds since the oldest still-waiting participant's recourse task was queued "
        "(0: nobody waits); the sweeper re-queues after STUDYAPP_SWEEP_AFTER_S.",
    )
    now = timezone.now()
    found = {r["generation"]: r for r in rows}
    longest = 0.0
    for state in (G.QUEUED, G.RUNNING):
        r = found.get(state)
        count.add_metric([state], r["n"] if r else 0)
        if r and r["oldest"] is not None:
            longest = max(longest, (now - r["oldest"]).total_seconds())
    oldest.add_metric([], longest)
    sweep = GaugeMetricFamily(
        "studyapp_sweep_after_seconds", "The sweeper's re-queue threshold (for alert rules)."
    )
    sweep.add_metric([], float(settings.STUDYAPP_SWEEP_AFTER_S))
    yield count
    yield oldest
    yield sweep
