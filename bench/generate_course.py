#!/usr/bin/env python3
"""Writes a deterministic OLX course for benchmarks: chapters x sequentials x verticals of html
blocks with realistic text and links, shared CSS/JS, and incompressible images and videos.

    generate_course.py OUT --blocks 5000 --media-mb 200 [--seed 1]
    generate_course.py OUT --demo DEMO_COURSE --copies 4 --media-mb 200
    generate_course.py OUT --blocks 4 --video-mb 1024

With --demo, the course is a real export (the Open edX demo course) repeated --copies times,
plus a chapter of pages that each show one of the media files: the media-heavy course of
issue 23. --video-mb adds one video of that size, shown by the first page (peak memory).
"""
import argparse, os, random, re, shutil

WORDS = ("course learner module video lecture assessment problem answer offline mobile bundle "
         "archive manifest publish studio platform content unit section subsection chapter "
         "student teacher research community open edx learning outcome objective practice "
         "example exercise review summary reading discussion forum progress certificate").split()


def sentence(rng, n):
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


# What real files of these formats start with: an ISO media `ftyp` box, a JPEG's SOI and JFIF
# marker. A packager that tells media by its bytes (coursepack does) sees what it would see in
# a real course; random bytes without them would be deflated to no avail, which no real video is.
MEDIA_HEADERS = {
    ".mp4": b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2",
    ".jpg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00",
}


def media_bytes(name, body):
    """`body` (incompressible) with the header of the format `name` says, in the same size."""
    header = MEDIA_HEADERS[os.path.splitext(name)[1]]
    return header + body[len(header):]


def write_media(root, rng, media_mb):
    """Incompressible media, ~70% video and ~30% images; returns the paths under static/."""
    for d in ["static/img", "static/video"]:
        os.makedirs(os.path.join(root, d), exist_ok=True)
    media = []
    budget = media_mb << 20
    index = 0
    while budget > 0:
        if index % 3 == 2:
            name, size = f"img/photo{index}.jpg", min(budget, rng.randint(100_000, 600_000))
        else:
            name, size = f"video/clip{index}.mp4", min(budget, rng.randint(2_000_000, 6_000_000))
        with open(os.path.join(root, "static", name), "wb") as f:
            f.write(media_bytes(name, rng.randbytes(size)))
        media.append(name)
        budget -= size
        index += 1
    return media


# Folders whose XML files are blocks that other blocks point to by url_name.
DEMO_BLOCK_FOLDERS = ["chapter", "sequential", "vertical", "html", "problem", "video", "lti", "library_content", "annotatable"]


def demo_copies(demo, root, copies, media_mb, rng):
    """The demo course `copies` times over (copy k renames every url_name X to X_k, sharing the
    content files), then one chapter of media pages."""
    shutil.copytree(demo, root)
    course_file = os.path.join(root, "course", os.listdir(os.path.join(root, "course"))[0])
    course_xml = open(course_file, encoding="utf-8").read()
    chapters = re.findall(r'<chapter url_name="([^"]+)"/>', course_xml)
    renamed = lambda k: (lambda m: f'url_name="{m.group(1)}_{k}"')
    for folder in DEMO_BLOCK_FOLDERS:
        path = os.path.join(root, folder)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            if not name.endswith(".xml"):
                continue
            text = open(os.path.join(path, name), encoding="utf-8").read()
            for k in range(1, copies):
                with open(os.path.join(path, f"{name[:-4]}_{k}.xml"), "w", encoding="utf-8") as f:
                    f.write(re.sub(r'url_name="([^"]+)"', renamed(k), text))
    added = "".join(f'  <chapter url_name="{c}_{k}"/>\n' for k in range(1, copies) for c in chapters)
    media = write_media(root, rng, media_mb)
    pages = []
    for i, m in enumerate(media):
        name = f"media{i:04d}"
        with open(os.path.join(root, "html", name + ".xml"), "w") as f:
            f.write(f'<html filename="{name}" display_name="Media {i}"/>\n')
        tag = f'<video controls src="/static/{m}"></video>' if m.endswith(".mp4") else f'<img src="/static/{m}" alt="photo {i}">'
        with open(os.path.join(root, "html", name + ".html"), "w") as f:
            f.write(f"<h2>Media {i}</h2>\n<p>{sentence(rng, 12)}</p>\n{tag}\n")
        pages.append(name)
    units = [pages[i:i + 4] for i in range(0, len(pages), 4)]
    for u, unit in enumerate(units):
        with open(os.path.join(root, "vertical", f"media_v{u}.xml"), "w") as f:
            f.write(f'<vertical display_name="Media unit {u}">\n' + "".join(f'  <html url_name="{p}"/>\n' for p in unit) + "</vertical>\n")
    with open(os.path.join(root, "sequential", "media_s.xml"), "w") as f:
        f.write('<sequential display_name="Media">\n' + "".join(f'  <vertical url_name="media_v{u}"/>\n' for u in range(len(units))) + "</sequential>\n")
    with open(os.path.join(root, "chapter", "media_c.xml"), "w") as f:
        f.write('<chapter display_name="Media">\n  <sequential url_name="media_s"/>\n</chapter>\n')
    added += '  <chapter url_name="media_c"/>\n'
    with open(course_file, "w", encoding="utf-8") as f:
        f.write(course_xml.replace("</course>", added + "</course>"))
    print(f"{root}: the demo course x{copies}, {len(media)} media pages, {media_mb} MB of media")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--blocks", type=int, default=1000)
    p.add_argument("--media-mb", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--demo", help="an OLX export to repeat instead of generating pages")
    p.add_argument("--copies", type=int, default=4)
    p.add_argument("--video-mb", type=int, default=0)
    a = p.parse_args()
    rng = random.Random(a.seed)
    root = a.out
    if a.demo:
        demo_copies(a.demo, root, a.copies, a.media_mb, rng)
        return
    for d in ["course", "chapter", "sequential", "vertical", "html", "static/css", "static/js", "static/img", "static/video"]:
        os.makedirs(os.path.join(root, d), exist_ok=True)

    def write(path, text):
        with open(os.path.join(root, path), "w", encoding="utf-8") as f:
            f.write(text)

    write("course.xml", '<course url_name="bench" org="BenchX" course="B101"/>\n')
    # Shared assets every page links: compressed once per build however many blocks use them.
    write("static/css/course.css", "".join(f".c{i} {{ margin: {i % 7}px; color: #{i:06x}; background: url(../img/bg.png); }}\n" for i in range(2000)))
    write("static/js/course.js", "".join(f"function f{i}(x) {{ return x * {i} + {rng.randint(0, 999)}; }}\n" for i in range(3000)))
    with open(os.path.join(root, "static/img/bg.png"), "wb") as f:
        f.write(rng.randbytes(4096))

    # Media: ~70% video, ~30% images, incompressible, spread over the blocks.
    media = write_media(root, rng, a.media_mb)
    if a.video_mb:
        # One large file, written in pieces so the generator's own memory stays small.
        with open(os.path.join(root, "static/video/large.mp4"), "wb") as f:
            for n in range(a.video_mb):
                piece = rng.randbytes(1 << 20)
                f.write(media_bytes("large.mp4", piece) if n == 0 else piece)

    chapters = max(1, a.blocks // 400)
    per_vertical = 4
    verticals = max(1, a.blocks // per_vertical)
    seqs_per_chapter = max(1, verticals // chapters // 10 or 1)
    chapter_xml = {c: [] for c in range(chapters)}
    seq_xml = {}
    block = 0
    for v in range(verticals):
        c = v % chapters
        s = f"s{c}_{(v // chapters) % seqs_per_chapter}"
        if s not in seq_xml:
            seq_xml[s] = []
            chapter_xml[c].append(s)
        seq_xml[s].append(f"v{v}")
        children = []
        for _ in range(per_vertical):
            if block >= a.blocks:
                break
            h = f"h{block:06d}"
            children.append(f'<html url_name="{h}"/>')
            write(f"html/{h}.xml", f'<html filename="{h}" display_name="Page {block}"/>\n')
            paragraphs = "\n".join(f"<p>{' '.join(sentence(rng, rng.randint(8, 20)) for _ in range(4))}</p>" for _ in range(rng.randint(6, 14)))
            links = '<link rel="stylesheet" href="/static/css/course.css"><script src="/static/js/course.js"></script>\n'
            extra = ""
            if media and block % max(1, a.blocks // len(media)) == 0:
                m = media[(block // max(1, a.blocks // len(media))) % len(media)]
                extra = f'<video controls src="/static/{m}"></video>\n' if m.endswith(".mp4") else f'<img src="/static/{m}" alt="photo">\n'
            jump = f'<p><a href="/jump_to_id/h{(block + 1) % a.blocks:06d}">Next page</a></p>\n'
            if a.video_mb and block == 0:
                extra += '<video controls src="/static/video/large.mp4"></video>\n'
            write(f"html/{h}.html", links + f"<h2>{sentence(rng, 5)}</h2>\n" + paragraphs + "\n" + extra + jump)
            block += 1
        write(f"vertical/v{v}.xml", f'<vertical display_name="Unit {v}">\n  ' + "\n  ".join(children) + "\n</vertical>\n")
    for s, vs in seq_xml.items():
        write(f"sequential/{s}.xml", f'<sequential display_name="Subsection {s}">\n' + "".join(f'  <vertical url_name="{v}"/>\n' for v in vs) + "</sequential>\n")
    for c, ss in chapter_xml.items():
        write(f"chapter/c{c}.xml", f'<chapter display_name="Chapter {c}">\n' + "".join(f'  <sequential url_name="{s}"/>\n' for s in ss) + "</chapter>\n")
    write("course/bench.xml", '<course display_name="Benchmark course" language="en">\n' + "".join(f'  <chapter url_name="c{c}"/>\n' for c in range(chapters)) + "</course>\n")
    print(f"{root}: {block} html blocks, {len(media)} media files, {a.media_mb} MB of media")


if __name__ == "__main__":
    main()
