#!/usr/bin/env python3
"""Lists Rust `fn` bodies longer than a limit (150 lines by default).

A body is counted from its `fn` line to the closing brace at the same indentation,
both included. Usage: scripts/long_fns.py [--max N] PATH... (files or directories;
directories are searched for `.rs` files). Exits 1 when any body is over the limit.
"""

import argparse
import os
import re
import sys

FN_LINE = re.compile(
    r"^(?P<indent>\s*)(pub(\([^)]*\))?\s+)?(default\s+)?(const\s+)?(async\s+)?"
    r"(unsafe\s+)?(extern\s+\"[^\"]*\"\s+)?fn\s+(?P<name>\w+)"
)


def rust_files(paths):
    for path in paths:
        if os.path.isfile(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d != "target")
            for name in sorted(files):
                if name.endswith(".rs"):
                    yield os.path.join(root, name)


def body_end(lines, start, indent):
    """The index of the line closing the fn opened at `start`, or None for a bodiless fn."""
    opened = False
    for i in range(start, len(lines)):
        text = lines[i].rstrip()
        opened = opened or "{" in text
        if not opened and text.endswith(";"):
            return None  # a declaration: `fn f(&self);`
        if i == start and opened and text.endswith("}"):
            return i  # a one-line body
        if i > start and text == indent + "}":
            return i
    return None


def long_fns(path, limit):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for start, line in enumerate(lines):
        match = FN_LINE.match(line)
        if not match:
            continue
        end = body_end(lines, start, match.group("indent"))
        if end is None:
            continue
        length = end - start + 1
        if length > limit:
            yield start + 1, match.group("name"), length


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=150, help="longest body allowed")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    found = False
    for path in rust_files(args.paths):
        for line, name, length in long_fns(path, args.max):
            found = True
            print(f"{path}:{line}: fn {name} is {length} lines")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
