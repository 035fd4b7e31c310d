#!/usr/bin/env python3
"""The straightforward Python packager an operator might script: one zipfile per block tree,
deflate level 6 for text, stored for media.   python_packager.py TREES OUT"""
import os, sys, zipfile

MEDIA = {".png", ".jpg", ".jpeg", ".gif", ".webp", ".mp4", ".webm", ".mp3", ".m4a", ".ogg", ".pdf", ".woff", ".woff2", ".zip", ".gz"}
trees, out = sys.argv[1], sys.argv[2]
for kind in sorted(os.listdir(trees)):
    os.makedirs(os.path.join(out, kind), exist_ok=True)
    for block in sorted(os.listdir(os.path.join(trees, kind))):
        root = os.path.join(trees, kind, block)
        with zipfile.ZipFile(os.path.join(out, kind, block + ".zip"), "w") as z:
            for folder, _, files in os.walk(root):
                for name in sorted(files):
                    path = os.path.join(folder, name)
                    arc = os.path.relpath(path, root)
                    if os.path.splitext(name)[1].lower() in MEDIA:
                        z.write(path, arc, compress_type=zipfile.ZIP_STORED)
                    else:
                        z.write(path, arc, compress_type=zipfile.ZIP_DEFLATED, compresslevel=6)
