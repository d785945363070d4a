#!/usr/bin/env python3
"""Tests run.py's reading of the tables and its judging of a log, without any emulator: every
error names file and line, and each check kind fails when its line is missing or wrong."""

import os
import sys
import tempfile

import run

STANZA = """# a comment
[t]
emu = bochs            # a comment after a value
cpus = 2
timeout = 60
verdict = 0
boot = iso
scenario = demo.cfg
groups = vtx sched
"""

# (what, table text, text the error must hold)
BAD_TABLES = [
    ("a line before the first stanza", "emu = bochs\n", "t.cfg:1: a line before"),
    ("a missing key", "[t]\nemu = bochs\n", "t.cfg:1: [t] lacks cpus"),
    ("a key given twice", STANZA + "cpus = 1\n", "t.cfg:10: 'cpus' given twice"),
    ("an unknown key", STANZA + "smp = 2\n", "t.cfg:10: unknown key 'smp'"),
    ("an unknown emulator", STANZA.replace("= bochs ", "= vbox "), "t.cfg:3: emu 'vbox'"),
    ("Bochs booting a kernel", STANZA.replace("= iso", "= kernel"), "t.cfg:7: Bochs boots"),
    ("a scenario outside tests/scenarios", STANZA.replace("demo.cfg", "../x.cfg"),
     "t.cfg:8: scenario must be"),
    ("a bad regex", STANZA + "+ ^(\n", "t.cfg:10: bad regex"),
    ("an unknown numeric check", STANZA + "@ nothing(1)\n", "t.cfg:10: no check 'nothing'"),
    ("a numeric check's arguments", STANZA + "@ tsc_ratio(a)\n", "t.cfg:10: @ tsc_ratio(a)"),
    ("a line of no kind", STANZA + "ok\n", "t.cfg:10: want 'key = value'"),
]

# (what, expectation lines, serial log, whether it passes)
JUDGED = [
    ("+ finds a line", "+ ^\\[a\\] hello$", ["[a] hello"], True),
    ("+ fails without its line", "+ ^\\[a\\] hello$", ["[a] hello!"], False),
    ("- passes without its line", "- not ok", ["[a] ok 1 - x"], True),
    ("- fails on its line", "- not ok", ["[a] not ok 1 - x"], False),
    ("ok matches any number", "ok a: sum", ["[a] ok 7 - sum"], True),
    ("ok matches the name before ':'", "ok a: sum", ["[a] ok 2 - sum: measured 3 expected 3"],
     True),
    ("ok matches the name before a space", "ok a: a: 8 reads", ["[a] ok 2 - a: 8 reads (0)"],
     True),
    ("ok does not match a longer word", "ok a: sum", ["[a] ok 1 - sums"], False),
    ("ok wants its domain", "ok a: sum", ["[b] ok 1 - sum"], False),
    ("ok fails on a 'not ok' of the name", "ok a: sum", ["[a] ok 1 - sum", "[a] not ok 2 - sum"],
     False),
    ("ok fails on a skipped check", "ok a: sum", ["[a] ok 1 - sum # SKIP no PMU"], False),
    ("ok fails without the check", "ok a: sum", ["[a] 1 passed, 0 failed"], False),
    ("@ runs its numeric check", "@ exact_counts(1)",
     ['[c] {"event": "x", "measured": 5, "expected": 5,'], True),
    ("@ fails when its check does", "@ exact_counts(1)",
     ['[c] {"event": "x", "measured": 5, "expected": 6,'], False),
    ("counts_after: a count after the mark", "@ counts_after(c,^\\[l\\] perf)",
     ['[c] {"event": "x", "measured": 5, "expected": 5,', "[l] perf: 1",
      '[c] {"event": "x", "measured": 5, "expected": 5,'], True),
    ("counts_after: every count before the mark", "@ counts_after(c,^\\[l\\] perf)",
     ['[c] {"event": "x", "measured": 5, "expected": 5,', "[l] perf: 1"], False),
    ("perf_stat_at_least: the count reaches it", "@ perf_stat_at_least(perf-k,branches,10001)",
     ["[l] [ 6.6] perfvisor-linux: perf-k: 10001,,branches,5,100.00,,"], True),
    ("perf_stat_at_least: a count below", "@ perf_stat_at_least(perf-k,branches,10001)",
     ["[l] [ 6.6] perfvisor-linux: perf-k: 10000,,branches,5,100.00,,"], False),
    ("perf_stat_at_least: no line", "@ perf_stat_at_least(perf-k,branches,10001)",
     ["[l] [ 6.6] perfvisor-linux: perf: 10001,,branches:u,5,100.00,,"], False),
    ("linux_tsc: Linux's TSC is perfvisor's", "@ linux_tsc()",
     ["perfvisor: TSC runs at 50001 kHz", "[l] [ 0.0] tsc: Detected 50.001 MHz TSC"], True),
    ("linux_tsc: the host's 3.5 GHz", "@ linux_tsc()",
     ["perfvisor: TSC runs at 50001 kHz", "[l] [ 0.0] tsc: Detected 3499.912 MHz TSC"], False),
    ("linux_tsc: no line", "@ linux_tsc()", ["perfvisor: TSC runs at 50001 kHz"], False),
]


def read(tmp, text, name="t.cfg"):
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)
    return path


def main():
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        run.LOG_DIR = tmp
        for what, text, want in BAD_TABLES:
            try:
                run.read_tables([read(tmp, text)])
                error = "no error"
            except ValueError as err:
                error = str(err)
            results.append((want in error, f"table error: {what}", error))
        first = read(tmp, STANZA)
        second = read(tmp, "\n" + STANZA, "u.cfg")
        try:
            run.read_tables([first, second])
            error = "no error"
        except ValueError as err:
            error = str(err)
        results.append(("u.cfg:3: test name 't' is used twice (first at " in error
                         and "t.cfg:2)" in error, "table error: a name used in two files",
                         error))
        tests = run.read_tables([read(tmp, STANZA + STANZA.replace("[t]", "[soak]")
                                      .replace("vtx sched", "long"))])
        for what, pattern, groups, want in [
                ("T= selects by name", "^t$", [], ["t"]),
                ("G= selects by group", "", ["sched"], ["t"]),
                ("group long runs only when named", "", [], ["t"]),
                ("G=long runs the long ones", "", ["long"], ["soak"])]:
            got = [t.name for t in run.select(tests, pattern, groups)]
            results.append((got == want, what, f"selected {got}, want {want}"))
        for what, lines, log, passes in JUDGED:
            test = run.read_tables([read(tmp, STANZA + lines + "\n")])[0]
            os.makedirs(test.log, exist_ok=True)
            reasons = run.judge(test, log)
            results.append(((not reasons) == passes, what, "; ".join(reasons) or "passed"))
    failed = 0
    for number, (passed, what, detail) in enumerate(results, 1):
        print(f"{'ok' if passed else 'not ok'} {number} - {what}")
        if not passed:
            failed += 1
            print(f"#   {detail}")
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
