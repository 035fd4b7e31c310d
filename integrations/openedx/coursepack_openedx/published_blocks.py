"""Block versions of the last publish: written by the Studio side from the manifest it
published, read by the LMS side to tell devices which of their blocks are outdated. A block's
version is its manifest `content_hash`."""

import json

from django.db import transaction

from .models import PublishedBlock


def record_published_blocks(course_id, manifest_path):
    """Replaces the course's versions with those of the manifest at manifest_path; returns how
    many blocks have one (blocks that are not offline have no content_hash and no version)."""
    with open(manifest_path, encoding="utf-8") as file:
        manifest = json.load(file)
    if not isinstance(manifest, dict) or not isinstance(manifest.get("blocks"), list):
        raise ValueError(f"{manifest_path} is not a coursepack manifest (no blocks list)")
    versions = {
        block["usage_id"]: PublishedBlock(course_id=course_id, usage_id=block["usage_id"],
                                          content_hash=block["content_hash"], last_modified=block.get("last_modified") or "")
        for block in manifest["blocks"]
        if isinstance(block, dict) and isinstance(block.get("usage_id"), str) and isinstance(block.get("content_hash"), str)
    }
    with transaction.atomic():
        PublishedBlock.objects.filter(course_id=course_id).delete()
        PublishedBlock.objects.bulk_create(versions.values())
    return len(versions)


def current_version(course_key, usage_id):
    """{"version", "last_modified"} of the block's last publish, None when none is recorded."""
    block = PublishedBlock.objects.filter(course_id=str(course_key), usage_id=usage_id).first()
    return None if block is None else {"version": block.content_hash, "last_modified": block.last_modified}


def compare_versions(course_key, versions):
    """What a device holding `versions` ({usage_id: version}) should know before it sends."""
    known = {block.usage_id: block for block in PublishedBlock.objects.filter(
        course_id=str(course_key), usage_id__in=list(versions))}
    published = bool(known) or PublishedBlock.objects.filter(course_id=str(course_key)).exists()
    outdated = {
        usage_id: {"current_version": known[usage_id].content_hash, "last_modified": known[usage_id].last_modified}
        for usage_id, version in versions.items() if usage_id in known and known[usage_id].content_hash != version
    }
    removed = sorted(usage_id for usage_id in versions if usage_id not in known) if published else []
    return {"published": published, "outdated": outdated, "removed": removed}
