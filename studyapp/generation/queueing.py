"""Queueing a participant's recourse task without ever failing the participant's request.

The profile is stored first; queueing happens after the commit. When the broker is down at
that moment, `delay` raises (Redis: a connection error; the embedded broker: a database
error), and before this module the participant got a server error and waited for good.
Now the error is logged and the participant stays "queued": the sweeper (`sweeper`)
queues them again once the broker is back, since the task is idempotent.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def queue_generation(participant_id: int) -> bool:
    """Send the recourse task for a participant; False (logged) when the broker refused."""
    from studyapp.generation.tasks import generate_recourses

    try:
        generate_recourses.delay(participant_id)
    except Exception as exc:  # noqa: BLE001 - any broker failure: the sweeper queues it again
        log.warning(
            "participant %s: the recourse task could not be queued (%s)", participant_id, exc
        )
        return False
    return True
