#!/usr/bin/env python3
"""The straightforward Python packager an operator might script, doing the pipeline's work in one
process for all blocks: one zipfile per block tree, deflate level 6 for text, stored for media
(the extensions coursepack stores), and the SHA-256 of every archive in a manifest.
    python_packager.py TREES OUT"""
import hashlib, json, os, sys, zipfile

MEDIA = {"." + e for e in ("png jpg jpeg gif webp avif heic ico mp4 m4v mov webm mkv avi ogv mp3 m4a aac ogg oga opus flac wav "
                           "pdf woff woff2 zip gz tgz bz2 xz zst 7z rar docx xlsx pptx epub jar apk").split()}
trees, out = sys.argv[1], sys.argv[2]
manifest = []
for kind in sorted(os.listdir(trees)):
    os.makedirs(os.path.join(out, kind), exist_ok=True)
    for block in sorted(os.listdir(os.path.join(trees, kind))):
        root = os.path.join(trees, kind, block)
        archive = os.path.join(out, kind, block + ".zip")
        with zipfile.ZipFile(archive, "w") as z:
            for folder, _, files in os.walk(root):
                for name in sorted(files):
                    path = os.path.join(folder, name)
                    arc = os.path.relpath(path, root)
                    if os.path.splitext(name)[1].lower() in MEDIA:
                        z.write(path, arc, compress_type=zipfile.ZIP_STORED)
                    else:
                        z.write(path, arc, compress_type=zipfile.ZIP_DEFLATED, compresslevel=6)
        with open(archive, "rb") as f:
            manifest.append({"archive": f"{kind}/{block}.zip", "sha256": hashlib.file_digest(f, "sha256").hexdigest()})
with open(os.path.join(out, "manifest.json"), "w") as f:
    json.dump(manifest, f)
