"""ISO 8601 times as devices and the LMS write them."""

from datetime import datetime, timezone


def parse_iso_time(value, naive_is_utc=False):
    """The time, or None when value is not one. A time without a zone is None — a device's local
    time says nothing about when — unless naive_is_utc (the LMS's stored fields are UTC)."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=timezone.utc) if naive_is_utc else None
    return parsed
