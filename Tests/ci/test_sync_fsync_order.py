"""Tests/fixtures/check_sync_fsync_order.py on planted strace logs: it accepts a syncfs as
covering every file created on that file system before it, and still fails each way a power
cut could leave an installed block or the local manifest naming data not on the disk."""

import os
import subprocess
import sys

import pytest

CHECKER = os.path.join(os.path.dirname(__file__), "..", "fixtures", "check_sync_fsync_order.py")


def log_for(target, steps):
    staging, final = f"{target}/html/.page.new-7-9", f"{target}/html/page"
    calls = {
        "create": f'openat(AT_FDCWD, "{staging}/index.html", O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0644) = 5<{staging}/index.html>',
        "fsync file": f"fsync(5<{staging}/index.html>) = 0",
        "fsync staging": f"fsync(6<{staging}>) = 0",
        "syncfs": f"syncfs(3<{target}>) = 0",
        "syncfs elsewhere": f"syncfs(3<{target}/.coursepack-sync>) = 0",
        "swap": f'rename("{staging}", "{final}") = 0',
        "fsync parent": f"fsync(6<{target}/html>) = 0",
        "manifest": f'openat(AT_FDCWD, "{target}/.manifest.json.tmp-7", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC|O_NOFOLLOW, 0644) = 4<{target}/.manifest.json.tmp-7>',
        "fsync manifest": f"fsync(4<{target}/.manifest.json.tmp-7>) = 0",
        "rename manifest": f'rename("{target}/.manifest.json.tmp-7", "{target}/manifest.json") = 0',
        "fsync target": f"fsync(4<{target}>) = 0",
    }
    return "".join(f"100 {calls[step]}\n" for step in steps)


MANIFEST = ["manifest", "fsync manifest", "rename manifest", "fsync target"]
SYNCFS = ["create", "syncfs", "swap", "syncfs"] + MANIFEST
PER_FILE = ["create", "fsync file", "fsync staging", "swap", "fsync parent"] + MANIFEST


def check(tmp_path, steps):
    target = os.path.realpath(str(tmp_path / "device"))
    log = tmp_path / "trace"
    log.write_text(log_for(target, steps))
    result = subprocess.run([sys.executable, CHECKER, str(log), target], capture_output=True, text=True)
    return result.returncode, result.stdout


@pytest.mark.parametrize("steps", [SYNCFS, PER_FILE], ids=["syncfs", "per-file"])
def test_a_durable_sync_passes(tmp_path, steps):
    status, out = check(tmp_path, steps)
    assert status == 0, out
    assert '"installs": 1' in out


@pytest.mark.parametrize("steps, complaint", [
    # Swapped in with nothing synced at all.
    (["create", "swap", "syncfs"] + MANIFEST, "not synced before its folder was swapped in"),
    # The syncfs ran before the file existed: it covers nothing written after it.
    (["syncfs", "create", "swap", "syncfs"] + MANIFEST, "not synced before its folder was swapped in"),
    # A syncfs on a folder that does not hold the block proves nothing for it.
    (["create", "syncfs elsewhere", "swap", "syncfs"] + MANIFEST, "not synced before its folder was swapped in"),
    # The swap itself never made durable before the manifest names it.
    (["create", "syncfs", "swap"] + MANIFEST, "not synced after"),
    # Files synced one by one, but not the staging folder that names them.
    (["create", "fsync file", "swap", "fsync parent"] + MANIFEST, "not synced before it was swapped in"),
    # The manifest's data renamed before it was synced.
    (SYNCFS[:4] + ["manifest", "rename manifest", "fsync target"], "local manifest renamed before its data was synced"),
    # The manifest's rename never made durable.
    (SYNCFS[:4] + ["manifest", "fsync manifest", "rename manifest"], "not synced after the local manifest rename"),
])
def test_each_unsafe_order_fails(tmp_path, steps, complaint):
    status, out = check(tmp_path, steps)
    assert status == 1, out
    assert complaint in out
