"""Block versions of the last publish: written by the Studio side from the manifest it
published, read by the LMS side to tell devices which of their blocks are outdated. A block's
version is its manifest `content_hash`."""

import hashlib
import json
import os
import re

from django.db import transaction

from .models import PublishedBlock

INDEX_NAME = "manifest-index.json"
SHA256_HEX = re.compile(r"[0-9a-f]{64}")


def published_blocks(manifest_path):
    """The block entries of the publish whose manifest.json is at manifest_path. A large course
    is published split (docs/formats.md): manifest-index.json beside it names content-addressed
    parts manifest/<sha256>.json, and manifest.json is left out once it would pass the clients'
    limit; the index is written last, so it is read when present, each part checked against its
    hash."""
    folder = os.path.dirname(manifest_path)
    index_path = os.path.join(folder, INDEX_NAME)
    if not os.path.exists(index_path):
        with open(manifest_path, encoding="utf-8") as file:
            manifest = json.load(file)
        if not isinstance(manifest, dict) or not isinstance(manifest.get("blocks"), list):
            raise ValueError(f"{manifest_path} is not a coursepack manifest (no blocks list)")
        return manifest["blocks"]
    with open(index_path, encoding="utf-8") as file:
        index = json.load(file)
    if not isinstance(index, dict) or not isinstance(index.get("parts"), list):
        raise ValueError(f"{index_path} is not a coursepack manifest index (no parts list)")
    blocks = []
    for part in index["parts"]:
        sha256 = part.get("sha256") if isinstance(part, dict) else None
        if not isinstance(sha256, str) or not SHA256_HEX.fullmatch(sha256):
            raise ValueError(f"{index_path} names a part that is not a sha256: {part!r}")
        path = os.path.join(folder, "manifest", sha256 + ".json")
        with open(path, "rb") as file:
            data = file.read()
        if hashlib.sha256(data).hexdigest() != sha256:
            raise ValueError(f"{path} does not match its hash: the publish is damaged")
        entries = json.loads(data).get("blocks")
        if not isinstance(entries, list):
            raise ValueError(f"{path} is not a manifest part (no blocks list)")
        blocks += entries
    return blocks


def record_published_blocks(course_id, manifest_path):
    """Replaces the course's versions with those of the publish whose manifest is at
    manifest_path (or its split form beside it); returns how many blocks have one (blocks that
    are not offline have no content_hash and no version)."""
    versions = {
        block["usage_id"]: PublishedBlock(course_id=course_id, usage_id=block["usage_id"],
                                          content_hash=block["content_hash"], last_modified=block.get("last_modified") or "")
        for block in published_blocks(manifest_path)
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
