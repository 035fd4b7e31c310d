#!/usr/bin/env python3
"""Writes a deterministic OLX course for benchmarks: chapters x sequentials x verticals of html
blocks with realistic text and links, shared CSS/JS, and incompressible images and videos.

    generate_course.py OUT --blocks 5000 --media-mb 200 [--seed 1]
"""
import argparse, os, random

WORDS = ("course learner module video lecture assessment problem answer offline mobile bundle "
         "archive manifest publish studio platform content unit section subsection chapter "
         "student teacher research community open edx learning outcome objective practice "
         "example exercise review summary reading discussion forum progress certificate").split()


def sentence(rng, n):
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--blocks", type=int, default=1000)
    p.add_argument("--media-mb", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    root = a.out
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
    media = []
    budget = a.media_mb << 20
    index = 0
    while budget > 0:
        if index % 3 == 2:
            name, size = f"img/photo{index}.jpg", min(budget, rng.randint(100_000, 600_000))
        else:
            name, size = f"video/clip{index}.mp4", min(budget, rng.randint(2_000_000, 6_000_000))
        with open(os.path.join(root, "static", name), "wb") as f:
            f.write(rng.randbytes(size))
        media.append(name)
        budget -= size
        index += 1

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
