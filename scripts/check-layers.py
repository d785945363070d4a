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
# An edge line of docs/architecture.md's edges block, as --edges prints it.
DOC_EDGE = re.compile(r"^([\w-]+) -> ([\w-]+): \d+$")
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


def doc_edges(path):
    """The (from, to) pairs listed in the ```edges block of the document PATH."""
    pairs, inside = set(), False
    with open(path, encoding="utf-8") as doc:
        for line in doc:
            line = line.rstrip("\n")
            if line.startswith("```"):
                inside = line == "```edges"
                continue
            m = DOC_EDGE.match(line) if inside else None
            if m:
                pairs.add((m.group(1), m.group(2)))
    return pairs


def doc_differences(path, edges):
    """The arrows between the hypervisor's and guests' folders (tests/ left out) that the
    tree and the document PATH do not share, in words."""
    tree = {pair for pair in edges if pair[0] != "tests"}
    listed = doc_edges(path)
    return ([f"{path}: the tree includes {a}/ -> {b}/ ({edges[(a, b)]} lines); its edges "
             f"block does not list it" for a, b in sorted(tree - listed)] +
            [f"{path}: its edges block lists {a} -> {b}; the tree has no such include"
             for a, b in sorted(listed - tree)])


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), help="the tree to check (default: this one)")
    parser.add_argument("--edges", action="store_true",
                        help="also print the includes between top-level folders, per pair")
    parser.add_argument("--doc", metavar="FILE",
                        help="also fail when FILE's edges block (docs/architecture.md) lists "
                        "other arrows between top-level folders than the tree has")
    args = parser.parse_args()
    violations, edges = scan(args.root)
    stale = doc_differences(args.doc, edges) if args.doc else []
    if args.edges:
        for (src, dst), n in sorted(edges.items()):
            print(f"{src} -> {dst}: {n}")
    for line in violations + stale:
        print(line)
    print(f"check-layers: includes against the layers: {len(violations)}; "
          f"between top-level folders: {sum(edges.values())}"
          + (f"; arrows {args.doc} gets wrong: {len(stale)}" if args.doc else ""))
    return 1 if violations or stale else 0


if __name__ == "__main__":
    sys.exit(main())
