#!/usr/bin/env python3
"""Lists Swift functions, initializers and closures-as-properties longer than a limit.

Usage: scripts/function-lengths.py [--max N] [DIR ...]   (default: --max 60 Sources)
Exits 1 when any function is longer than N lines, so CI can hold the line.
A function's length counts from its declaration line to its closing brace.
"""
import re
import sys
from pathlib import Path

DECL = re.compile(r'^\s*(?:@[\w()., ]+\s+)*(?:(?:public|private|fileprivate|internal|package|static|class|final|override|mutating|nonisolated|convenience|required|@inlinable|@usableFromInline|@discardableResult)\s+)*(func\s+[^\s(<]+|init[?!]?\s*[(<]|deinit\b|(?:var|let)\s+\w+\s*:[^=]*\{\s*$|(?:get|set|willSet|didSet)\s*\{)')


def strip_strings(line, in_multiline):
    """Removes string literals and comments so braces inside them are not counted."""
    out = []
    i = 0
    while i < len(line):
        if in_multiline:
            end = line.find('"""', i)
            if end < 0:
                return ''.join(out), True
            i = end + 3
            in_multiline = False
            continue
        if line.startswith('"""', i):
            in_multiline = True
            i += 3
            continue
        if line.startswith('//', i):
            break
        c = line[i]
        if c == '"':
            j = i + 1
            while j < len(line) and line[j] != '"':
                j += 2 if line[j] == '\\' else 1
            i = j + 1
            continue
        out.append(c)
        i += 1
    return ''.join(out), in_multiline


def functions(path):
    lines = path.read_text(encoding='utf-8').splitlines()
    cleaned = []
    multiline = False
    for line in lines:
        text, multiline = strip_strings(line, multiline)
        cleaned.append(text)
    for start, line in enumerate(cleaned):
        m = DECL.match(line)
        if not m:
            continue
        depth = 0
        opened = False
        for end in range(start, len(cleaned)):
            for c in cleaned[end]:
                if c == '{':
                    depth += 1
                    opened = True
                elif c == '}':
                    depth -= 1
            if opened and depth <= 0:
                yield m.group(1).strip(), start + 1, end - start + 1
                break
            if not opened and end > start + 15:
                break  # a protocol requirement: no body


def main(argv):
    limit = 60
    roots = []
    args = iter(argv)
    for a in args:
        if a == '--max':
            limit = int(next(args))
        else:
            roots.append(a)
    roots = roots or ['Sources']
    found = []
    for root in roots:
        for path in sorted(Path(root).rglob('*.swift')):
            for name, line, length in functions(path):
                found.append((length, f'{path}:{line}', name))
    found.sort(reverse=True)
    over = [f for f in found if f[0] > limit]
    for length, where, name in over:
        print(f'{length:4d}  {where}  {name}')
    longest = found[0] if found else (0, '-', '-')
    print(f'{len(found)} functions; longest {longest[0]} lines ({longest[1]}); {len(over)} over {limit}')
    return 1 if over else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
