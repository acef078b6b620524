#!/usr/bin/env python3
"""layers.py: the folder-level include graph of lockstorm's C sources,
checked against the layer list of docs/architecture.md.

Reads every `#include "folder/file.h"` in the source folders, folds them
into folder -> folder edges and reports: the edges (with how many includes
make each), the cycles between folders, and every include that points up
the layers. It reads text only; nothing is built or run.

  python3 scripts/layers.py            the graph, the cycles, the upward includes
  python3 scripts/layers.py --check    exit 1 when an upward include is not in
                                       the allowance file (scripts/layers.allow)

The allowance file lists upward includes that exist today, one
`file:included-header` a line; it only ever shrinks (the check also fails
when a line of it no longer matches the code, so a fixed include is
crossed off). An empty allowance file means the house is layered.
"""
import os
import re
import sys

# Each folder and the folders it may include (itself always). harness is
# the top and may include anything.
ALLOWED = {
    "util": set(),
    "model": {"util"},
    "locks": {"model", "util"},
    "backends": {"locks", "model", "util"},
    "faults": {"model", "util"},
    "checkers": {"model", "util"},
    "reports": {"model", "util"},
    "harness": {"util", "model", "locks", "backends", "faults", "checkers", "reports"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"')


def scan(root):
    """[(file, line, from_folder, to_folder, header)] for every project include."""
    out = []
    for folder in sorted(ALLOWED):
        d = os.path.join(root, folder)
        if not os.path.isdir(d):
            continue
        for dirpath, _, names in os.walk(d):
            for name in sorted(names):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for i, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and m.group(1) in ALLOWED and m.group(1) != folder:
                            out.append((rel, i, folder, m.group(1),
                                        m.group(1) + "/" + m.group(2)))
    return out


def cycles(edges):
    """Strongly connected components of more than one folder (Tarjan)."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return comps


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    check = "--check" in argv[1:]
    incs = scan(root)
    edges, count = {}, {}
    for _, _, a, b, _ in incs:
        edges.setdefault(a, set()).add(b)
        count[(a, b)] = count.get((a, b), 0) + 1
    up = [x for x in incs if x[3] not in ALLOWED[x[2]]]
    allow_path = os.path.join(root, "scripts", "layers.allow")
    allowed = set()
    if os.path.exists(allow_path):
        with open(allow_path, encoding="utf-8") as f:
            allowed = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    found = {f"{x[0]}:{x[4]}" for x in up}
    if check:
        new = sorted(f"{x[0]}:{x[1]}: {x[2]} -> {x[3]} ({x[4]})" for x in up
                     if f"{x[0]}:{x[4]}" not in allowed)
        stale = sorted(allowed - found)
        for line in new:
            print(f"layers: upward include: {line}")
        for line in stale:
            print(f"layers: {line} is in scripts/layers.allow but no longer in the code: "
                  "remove the line")
        print(f"layers: {len(up)} upward includes, {len(allowed)} allowed, "
              f"{len(new)} new, {len(stale)} stale")
        return 1 if new or stale else 0
    print(f"folder edges: {len(count)}")
    for (a, b), n in sorted(count.items()):
        mark = "" if b in ALLOWED[a] else "   (up)"
        print(f"  {a:9} -> {b:9} {n:4}{mark}")
    comps = cycles(edges)
    print(f"cycles: {len(comps)}")
    for c in comps:
        print("  " + " <-> ".join(c))
    print(f"upward includes: {len(up)}")
    for x in up:
        print(f"  {x[0]}:{x[1]}: {x[2]} -> {x[3]} ({x[4]})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
