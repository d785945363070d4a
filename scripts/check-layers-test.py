#!/usr/bin/env python3
"""Proves scripts/check-layers.py fails on a lower layer including a higher one: small trees
with and without a violation, the verdict and the line that names file and line number; and
that --doc fails when a document's edges block misses an arrow of the tree or lists one too many."""

import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check-layers.py")

# Every include the rules allow, once: the check must pass this tree.
CLEAN = {
    "include/perfvisor/abi.h": "#include <stdint.h>\n",
    "lib/printk.h": '#include "include/perfvisor/abi.h"\n',
    "lib/printk.c": '#include "lib/printk.h"\n',
    "pmu/pmu.h": '#include "lib/printk.h"\n',
    "pmu/vpmu.c": '#include "pmu/pmu.h"\n#include "hv/vcpu_pmu.h"\n',
    "hv/vcpu_pmu.h": '#include "include/perfvisor/abi.h"\n',
    "hv/vmx.c": '#include "hv/vcpu_pmu.h"\n#include "pmu/pmu.h"\n#include "lib/printk.h"\n',
    "boot/main.c": '#include "hv/vcpu_pmu.h"\n#include "pmu/pmu.h"\n#include "lib/printk.h"\n',
    "guest-stub/rt/rt.h": '#include "include/perfvisor/abi.h"\n',
    "guest-stub/rt/crt.c": '#include "rt.h"\n#include "guest-stub/rt/rt.h"\n',
    "tests/unit/test_x.c": '#include "hv/vmx.c"\n#include "boot/main.c"\n',
}

# One violation each: (file, its text, the line number the message must name).
BROKEN = [
    ("lib/frame.c", '#include "lib/printk.h"\n\n#include "hv/vmx.h"\n', 3),
    ("include/perfvisor/pv.h", '#include "lib/printk.h"\n', 1),
    ("pmu/backend.c", '#include "pmu/pmu.h"\n#include "hv/vmx.h"\n', 2),
    ("hv/exit.c", '#include "hv/vmx.h"\n#include "pmu/vpmu.h"\n', 2),
    ("hv/entry.S", '#include "boot/gdt.h"\n', 1),
    ("guest-stub/rt/trap.c", '#include "lib/printk.h"\n', 1),
    ("guest-stub/kernel/smp.c", '#include <hv/vmx.h>\n', 1),
]


# The arrows of CLEAN between top-level folders (tests/ left out), as an edges block lists them.
CLEAN_EDGES = ["boot -> hv: 1", "boot -> lib: 1", "boot -> pmu: 1", "guest-stub -> include: 2",
               "hv -> include: 1", "hv -> lib: 1", "hv -> pmu: 1", "lib -> include: 1",
               "pmu -> hv: 1", "pmu -> lib: 1"]


def edges_doc(lines):
    """A document with LINES in its edges block, after another block that must not count."""
    return "# Layers\n\n```\nlib -> boot: 1\n```\n\n```edges\n" + \
        "".join(line + "\n" for line in lines) + "```\n"


def write(root, files):
    for path, text in files.items():
        os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, path), "w", encoding="utf-8") as out:
            out.write(text)


def check(root, *options):
    done = subprocess.run([sys.executable, CHECK, "--root", root, *options],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return done.returncode, done.stdout


def main():
    results = []
    with tempfile.TemporaryDirectory() as root:
        # Targets of the broken includes exist, so they resolve like real ones.
        write(root, CLEAN | {"hv/vmx.h": "", "pmu/vpmu.h": "", "boot/gdt.h": ""})
        status, out = check(root)
        results.append((status == 0, "a tree that keeps the layers passes", out))
        for path, text, line in BROKEN:
            write(root, {path: text})
            status, out = check(root)
            results.append((status == 1 and f"{path}:{line}: " in out,
                            f"{path} breaking the layers fails, naming {path}:{line}", out))
            os.remove(os.path.join(root, path))
        doc = os.path.join(root, "doc.md")
        for lines, status_want, words, what in (
                (CLEAN_EDGES, 0, "gets wrong: 0", "an edges block listing every arrow passes"),
                (CLEAN_EDGES[1:], 1, "the tree includes boot/ -> hv/ (1 lines)",
                 "an edges block missing an arrow fails, naming it"),
                (CLEAN_EDGES + ["lib -> pmu: 3"], 1, "lists lib -> pmu; the tree has no such",
                 "an edges block with an arrow the tree lacks fails, naming it")):
            write(root, {"doc.md": edges_doc(lines)})
            status, out = check(root, "--doc", doc)
            results.append((status == status_want and words in out, what, out))
    failed = 0
    for number, (passed, what, out) in enumerate(results, 1):
        print(f"{'ok' if passed else 'not ok'} {number} - {what}")
        if not passed:
            failed += 1
            print("".join(f"#   {line}\n" for line in out.splitlines()), end="")
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
