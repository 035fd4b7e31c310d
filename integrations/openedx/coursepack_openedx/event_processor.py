"""An offline learner event, written into the LMS's tracking log with its learner time."""

from django.db import transaction

from . import item_result, lms_boundary
from .conf import setting
from .item_result import Reason


class EventProcessor:
    def __init__(self, user, course_key, received_at):
        self.user = user
        self.course_key = course_key
        self.received_at = received_at
        self.names = set(setting("EVENT_NAMES"))

    def process(self, item):
        name, data = item.fields.get("name"), item.fields.get("data", {})
        if name not in self.names:
            return item_result.refused(Reason.INVALID, f"{name!r} is not an event the LMS takes from devices")
        if not isinstance(data, dict):
            return item_result.refused(Reason.INVALID, "data must be a JSON object")
        context = {"offline": {
            "timestamp": item.occurred_at.isoformat(), "device_timestamp": item.device_time.isoformat(),
            "received_at": self.received_at.isoformat(), "usage_id": item.usage_id, "item_id": item.item_id,
        }}
        try:
            # A savepoint: a tracking backend's database error leaves the batch's transaction usable.
            with transaction.atomic():
                lms_boundary.emit_event(self.user, self.course_key, name, data, context)
        except Exception as error:  # the tracking backends raise anything; the event is sent again later
            return item_result.retry(f"the LMS could not log the event: {error}", setting("RETRY_AFTER_SECONDS"))
        return item_result.accepted()
