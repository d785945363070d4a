#!/usr/bin/env python3
"""Fails when a lower layer includes a higher one (docs/architecture.md draws the layers).

Every #include of the C and assembly files under the checked folders is resolved to a file
of the tree (a path from the top, as docs/conventions.md asks, or one beside the including
file); an include that leaves its folder must be one the rules below allow.
"""

import argparse
import collections
import os
import re
import sys

# Folder -> what its files may include besides their own folder: folders (ending in '/') or
# single headers, the declared interface between two layers.
RULES = {
    "include": (),
    "lib": ("include/",),
    "pmu": ("lib/", "include/", "hv/vcpu_pmu.h"),
    "hv": ("lib/", "include/", "pmu/pmu.h"),
    "boot": ("hv/", "pmu/", "lib/", "include/"),
    "guest-stub": ("include/",),
}
SOURCES = (".c", ".h", ".S")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def includes(root, path):
    """(line number, included path from the top) for each include of PATH that names a file
    of the tree; system headers (<stdint.h>) are not the tree's."""
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as src:
        for lineno, line in enumerate(src, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            name = m.group(2)
            beside = os.path.normpath(os.path.join(os.path.dirname(path), name))
            if m.group(1) == '"' and os.path.isfile(os.path.join(root, beside)):
                yield lineno, beside
            elif os.path.isfile(os.path.join(root, name)):
                yield lineno, os.path.normpath(name)


def allowed(folder, target):
    return target.startswith(folder + "/") or any(
        target.startswith(rule) if rule.endswith("/") else target == rule
        for rule in RULES[folder])


def scan(root):
    """(violations, edges): the lines that break a rule, and the count of includes from one
    top-level folder into another."""
    violations, edges = [], collections.Counter()
    top = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))
                 and not d.startswith(".") and d != "build")
    for folder in top:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                for lineno, target in includes(root, path):
                    to = target.split("/")[0] if "/" in target else "."
                    if to != folder:
                        edges[(folder, to)] += 1
                    if folder in RULES and not allowed(folder, target):
                        violations.append(
                            f"{path}:{lineno}: {folder}/ includes {target}; {folder}/ may "
                            f"include only {', '.join((folder + '/',) + RULES[folder])}")
    return violations, edges


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), help="the tree to check (default: this one)")
    parser.add_argument("--edges", action="store_true",
                        help="also print the includes between top-level folders, per pair")
    args = parser.parse_args()
    violations, edges = scan(args.root)
    if args.edges:
        for (src, dst), n in sorted(edges.items()):
            print(f"{src} -> {dst}: {n}")
    for line in violations:
        print(line)
    print(f"check-layers: includes against the layers: {len(violations)}; "
          f"between top-level folders: {sum(edges.values())}")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
