#!/usr/bin/env bash
# The documentation holds together: every relative link in README.md and
# docs/*.md points at a file that exists; every page of docs/ is linked from
# the README; the README stays short and its two commands exist; every
# `lockstorm COMMAND` the docs show (in code) is a command the binary has;
# the verdict lines they show have the fields of a real run's, in order;
# the workload reference is the generated one.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

cd "$SRC"
pages=(README.md docs/*.md)

# relative links [text](path#anchor) resolve from the page's directory
for f in "${pages[@]}"; do
    dir=$(dirname "$f")
    bad=""
    while IFS= read -r link; do
        target=${link%%#*}
        [ -z "$target" ] && continue
        case $target in http://*|https://*|mailto:*) continue ;; esac
        [ -e "$dir/$target" ] || bad="$bad $target"
    done < <(grep -oE '\]\([^) ]+\)' "$f" | sed -E 's/^\]\(//; s/\)$//')
    check "$f: every relative link resolves${bad:+ (missing:$bad)}" [ -z "$bad" ]
done

for f in docs/*.md; do
    check "README.md links $f (add it to the Documentation list)" grep -qF "($f)" README.md
done

n=$(wc -l <README.md)
check "README.md stays short ($n lines <= 80)" [ "$n" -le 80 ]
for s in scripts/demo.sh scripts/test.sh; do
    check "README's command $s exists" grep -qF "./$s" README.md
    check "$s is there and parses" bash -n "$s"
done
check "README shows a verdict line" grep -qE '^lockstorm: (PASS|FAIL) workload=' README.md

# The verdict lines the docs show have the shape a real run prints: the
# same fields in the same order (values aside: counts vary between runs
# of one seed). The real line comes from a short run of the demo.
shape() { sed -E 's/^lockstorm: [A-Z]+ /lockstorm: V /; s/=[^ ()]*/=/g'; }
d=$T_TMP/demo
run_ls "$d" demo --set duration=2s --format text
real=$(grep '^lockstorm: [A-Z]* workload=' "$d.stdout" | tail -n1 || true)
check "a short demo run printed a verdict line (exit $RC)" [ -n "$real" ]
want=$(printf '%s\n' "$real" | shape)
for f in README.md docs/getting-started.md docs/result-format.md docs/reports.md; do
    n=0
    while IFS= read -r line; do
        n=$((n + 1))
        got=$(printf '%s\n' "$line" | shape)
        check "$f: verdict line example $n has a real run's fields in order" [ "$got" = "$want" ]
    done < <(grep -E '^lockstorm: (PASS|FAIL|UNKNOWN) workload=' "$f")
    check "$f shows a verdict line ($n)" [ "$n" -ge 1 ]
done
t_no_leftovers "$d"

# `lockstorm X` in code blocks and inline code names a real command
cmds=" $("$LS" help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}' | tr '\n' ' ') "
for f in "${pages[@]}"; do
    used=$(awk '/^```/ {inb = !inb; next}
        inb && match($0, /^[ ]*(build\/)?lockstorm [a-z][a-z-]*/) {
            s = substr($0, RSTART, RLENGTH); sub(/.*lockstorm /, "", s); print s }
        !inb { while (match($0, /`lockstorm [a-z][a-z-]*/)) {
            print substr($0, RSTART + 11, RLENGTH - 11); $0 = substr($0, RSTART + RLENGTH) } }' "$f" |
        sort -u)
    unknown=""
    for c in $used; do
        case $cmds in *" $c "*) ;; *) unknown="$unknown $c" ;; esac
    done
    check "$f: the lockstorm commands it shows exist${unknown:+ (unknown:$unknown)}" [ -z "$unknown" ]
done

# A user who clones the project has only the repository: no page, help
# text, source or adapter points at a file outside it (the protocol is
# docs/protocol.md; the reference articles are cited by title).
outside=$(grep -rnE '(\.\./)?shared/(PROTOCOL|reference|DESIGN|STYLE)|/work/(shared|main)' \
    README.md docs util model locks backends faults checkers reports harness scripts \
    workloads tests/fixtures adapters/node/*.js adapters/node/lib adapters/python \
    adapters/node/README.md adapters/node/package.json 2>/dev/null | grep -v '^tests/e2e/test_docs.sh' | head -n 3 || true)
check "nothing points outside the repository${outside:+ (first: $outside)}" [ -z "$outside" ]
# ... nor names a design document, style guide or protocol file the
# repository does not have (comments said "DESIGN.md" for years; should
# one of them ever be added, drop its name from the pattern)
named=$(grep -rnowE --exclude-dir=node_modules '(DESIGN|STYLE|PROTOCOL)\.md' README.md docs util \
    model locks backends faults checkers reports harness scripts bench tests adapters workloads \
    contrib 2>/dev/null | grep -v '^tests/e2e/test_docs.sh' | head -n 3 || true)
check "no page or source names a document the repository lacks${named:+ (first: $named)}" \
    [ -z "$named" ]
check "the help text names the project's protocol page" grep -q "docs/protocol.md" <("$LS" help adapter-test 2>&1; "$LS" list locks 2>&1)

check "docs/workload-reference.md is what 'lockstorm validate --reference' prints" \
    diff -q docs/workload-reference.md <("$LS" validate --reference)

t_finish
