#!/usr/bin/env python3
"""conclusion_check.py COMPARE_JSON [TEXT_FILE]: the conclusion lines of a
lockstorm compare document (docs/compare.md "Conclusion") recomputed from its
counts alone, independently of the C code, and compared with what the
document says; with TEXT_FILE, each line must also be in the text (as
wrapped there: blanks normalised). Prints what differs; exit 1 on any."""
import json
import re
import sys


def phrase(run, kind):
    if run.get("findings", "unknown") == "unknown":
        return "unknown"
    if kind is not None:
        k = (run.get("by_fault") or {}).get(kind)
        if k is not None and "not_applicable" in k:
            return "n/a"
        if k is None or k.get("windows", 0) == 0:
            return "not injected"
        ast, abr = k.get("after_stale_holder", 0), k.get("after_lock_broken", 0)
        st, br, after = k.get("stale_holder", 0) + ast, k.get("lock_broken", 0) + abr, ast + abr
    else:
        st, br, after = run.get("stale_holder", 0), run.get("lock_broken", 0), 0
    parts = []
    if br > 0:
        parts.append("lock-broken %d" % br)
    if st > 0:
        parts.append("stale-holder %d" % st)
    p = ", ".join(parts)
    if after > 0:
        p += " (%d after the window)" % after
    others = run.get("other_findings") or {}
    violations = run.get("findings") == "violations"
    if kind is not None:
        # only the mutex classes are charged to a window: never "clean"
        # while another checker counted something in the run
        n = sum(v for v in others.values() if isinstance(v, int))
        unexplained = (not n and violations and run.get("stale_holder", 0) == 0
                       and run.get("lock_broken", 0) == 0)
        if (n or unexplained) and not p:
            p = "no mutex violations"
        if n:
            p += ", other checkers: %d finding%s (see the run)" % (n, "" if n == 1 else "s")
        elif unexplained:
            p += ", another checker found violations (see the run)"
    else:
        extra = ["%s %d" % (k.replace("_", " "), v) for k, v in others.items()
                 if isinstance(v, int) and v > 0]
        p = ", ".join([x for x in [p] + extra if x])
        if not p and violations:
            p = "violations of another checker (see its result.json)"
    return p or "clean"


def line(runs, kind, prefix):
    phr = [phrase(r, kind) for r in runs]
    out, done = [], set()
    for i, p in enumerate(phr):
        if p in done:
            continue
        done.add(p)
        labels = [runs[j]["label"] for j in range(len(runs)) if phr[j] == p]
        out.append("%s %s" % (", ".join(labels), p))
    return prefix + ": " + "; ".join(out)


def main():
    doc = json.load(open(sys.argv[1]))
    runs = doc["runs"]
    want = [line(runs, k, "under " + k) for k in doc["fault_kinds"]]
    want.append(line(runs, None, "whole run"))
    got = [c["text"] for c in doc.get("conclusions", [])]
    bad = 0
    if got != want:
        print("conclusions differ:\n  got:  %r\n  want: %r" % (got, want))
        bad = 1
    if len(sys.argv) > 2:
        text = re.sub(r"\s+", " ", open(sys.argv[2]).read())
        for w in want:
            if w not in text:
                print("not in %s: %s" % (sys.argv[2], w))
                bad = 1
    for w in want:
        print(w)
    return bad


if __name__ == "__main__":
    sys.exit(main())
