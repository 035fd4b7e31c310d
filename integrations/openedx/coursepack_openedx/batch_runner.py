"""Runs a batch's items through a processor (submissions or events) with the rules every kind
shares: each block's items in the order the learner made them, each id processed once, and
nothing of a block after an item of it that must be retried (that would change the order)."""

from django.utils import timezone

from . import item_result
from .conf import setting
from .models import SyncedItem


def run_batch(user, course_key, kind, batch, processor):
    """The results in the order of the request's items, one per item."""
    results = {}
    first_of_id = {}
    waiting_blocks = set()
    for item in sorted(batch.items, key=_learner_order):
        if item.problem is not None:
            results[item.index] = item_result.refused(item_result.Reason.INVALID, item.problem)
        elif item.item_id in first_of_id:
            results[item.index] = _repeat_in_batch(item, first_of_id[item.item_id], results)
        else:
            first_of_id[item.item_id] = item
            results[item.index] = _result_of(user, course_key, kind, item, processor, waiting_blocks)
    return [results[item.index].as_json(item.item_id) for item in batch.items]


def _learner_order(item):
    # Invalid items have no time; they are answered without being processed, so go first.
    return (item.occurred_at.timestamp() if item.occurred_at else float("-inf"), item.index)


def _repeat_in_batch(item, first, results):
    if item.digest != first.digest:
        return _reused_id()
    return results[first.index]


def _reused_id():
    return item_result.refused(item_result.Reason.INVALID, "this id was already used for another item")


def _result_of(user, course_key, kind, item, processor, waiting_blocks):
    stored = SyncedItem.objects.filter(user=user, kind=kind, item_id=item.item_id).first()
    if stored is not None:
        return item_result.ItemResult(stored.status, stored.result) if stored.digest == item.digest else _reused_id()
    if item.block and item.block in waiting_blocks:
        return item_result.retry("an earlier item of this block must be sent first", setting("RETRY_AFTER_SECONDS"))
    result = processor.process(item)
    if not result.is_final:
        if item.block:
            waiting_blocks.add(item.block)
        return result
    SyncedItem.objects.create(
        user=user, kind=kind, item_id=item.item_id, course_id=str(course_key), usage_id=item.usage_id,
        digest=item.digest, occurred_at=item.occurred_at, processed_at=timezone.now(), status=result.status,
        result=result.details, payload=item.fields)
    return result
