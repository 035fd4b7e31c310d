"""A batch as a device sends it: {"sent_at": time, "items": [...]}, read into items whose
times are corrected for the device's clock (docs/offline-sync-api.md, "Device clocks")."""

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from opaque_keys import InvalidKeyError
from opaque_keys.edx.keys import UsageKey

from .iso_time import parse_iso_time

MAX_ID_LENGTH = 64
# A device may stamp an item a moment after it stamped sent_at (two reads of its clock).
SENT_AT_SLACK = timedelta(seconds=1)


class BadBatch(Exception):
    """The request as a whole cannot be read: answered with an HTTP error, nothing processed."""

    def __init__(self, status, code, message, retry_after=None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        # Seconds, for an error the request may be sent again after (Retry-After).
        self.retry_after = retry_after


@dataclass(frozen=True)
class BatchItem:
    index: int
    item_id: str | None
    fields: dict
    digest: str
    usage_key: UsageKey | None = None
    # The device's clock when the learner acted, and that moment on the LMS's clock.
    device_time: datetime | None = None
    occurred_at: datetime | None = None
    # Why the item cannot be processed (it is refused `invalid`), None when it can.
    problem: str | None = None

    @property
    def usage_id(self):
        return str(self.usage_key) if self.usage_key else ""

    @property
    def block(self):
        """Items of one block are processed in order; items of no block form one group."""
        return self.usage_id


@dataclass(frozen=True)
class Batch:
    received_at: datetime
    sent_at: datetime
    items: list

    @property
    def clock_offset(self):
        return self.received_at - self.sent_at


def read_batch(body, course_key, received_at, max_items):
    document = read_json_object(body)
    sent_at = parse_iso_time(document.get("sent_at"))
    if sent_at is None:
        raise BadBatch(400, "invalid", "sent_at must be an ISO 8601 time with a time zone")
    raw_items = document.get("items")
    if not isinstance(raw_items, list):
        raise BadBatch(400, "invalid", "items must be a list")
    if len(raw_items) > max_items:
        raise BadBatch(413, "too_many_items", f"a batch holds at most {max_items} items, this one {len(raw_items)}")
    offset = received_at - sent_at
    items = [_read_item(index, raw, course_key, sent_at, offset, received_at) for index, raw in enumerate(raw_items)]
    return Batch(received_at=received_at, sent_at=sent_at, items=items)


def read_json_object(body):
    try:
        document = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise BadBatch(400, "invalid", "the body is not JSON") from None
    if not isinstance(document, dict):
        raise BadBatch(400, "invalid", "the body must be a JSON object")
    return document


def _read_item(index, raw, course_key, sent_at, offset, received_at):
    if not isinstance(raw, dict):
        return BatchItem(index, None, {}, "", problem="an item must be a JSON object")
    item_id = raw.get("id")
    digest = hashlib.sha256(json.dumps(raw, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    if not isinstance(item_id, str) or not 0 < len(item_id) <= MAX_ID_LENGTH:
        return BatchItem(index, None, raw, digest, problem=f"id must be a string of 1 to {MAX_ID_LENGTH} characters")
    device_time = parse_iso_time(raw.get("timestamp"))
    if device_time is None:
        return BatchItem(index, item_id, raw, digest, problem="timestamp must be an ISO 8601 time with a time zone")
    if device_time > sent_at + SENT_AT_SLACK:
        return BatchItem(index, item_id, raw, digest, problem="timestamp is later than the batch's sent_at")
    usage_key, problem = _usage_key(raw.get("usage_id"), course_key)
    # Never later than the batch's arrival: a fast device clock does not move answers past it.
    occurred_at = min(device_time + offset, received_at)
    return BatchItem(index, item_id, raw, digest, usage_key, device_time, occurred_at, problem)


def _usage_key(usage_id, course_key):
    if usage_id is None:
        return None, None
    try:
        usage_key = UsageKey.from_string(usage_id) if isinstance(usage_id, str) else None
    except InvalidKeyError:
        usage_key = None
    if usage_key is None:
        return None, "usage_id is not a block id"
    if usage_key.course_key != course_key:
        return None, f"usage_id {usage_id} is not a block of {course_key}"
    return usage_key, None
