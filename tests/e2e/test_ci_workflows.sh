#!/usr/bin/env bash
# The GitHub Actions examples of docs/ci.md beyond the build-from-source
# gate (test_ci_examples.sh runs that one): the Node-library job
# (docs/examples/github-node-adapter.yml), the release-artifact flow with
# the cpack Debian package (docs/examples/github-release-deb.yml) and the
# composite action (action.yml). Each parses as YAML (python3 yaml) and
# docs/ci.md shows it byte for byte; every `lockstorm` command their steps
# run is a command of this CLI with options it has (its --help lists them);
# the Node job sets Node up, runs npm ci, gates, appends summary.md to the
# step summary and uploads the run directory and junit.xml under
# always(); the package name the gates download is the one cpack makes.
# The action's script runs for real: a passing workload (exit 0, summary.md
# in $GITHUB_STEP_SUMMARY), a failing one (exit 1, the summary still
# written) and a compare: block (compare.md, its conclusion).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if ! python3 -c 'import yaml' 2>/dev/null; then
    fail "python3 with yaml needed to read the CI examples: scripts/install-deps.sh installs it"
    t_finish
    exit 1
fi
EX=$SRC/docs/examples
block() { # block FILE LANG N: the Nth fenced ```LANG block of FILE
    awk -v lang="$2" -v want="$3" '
        $0 == "```" lang { n++; if (n == want) { on = 1; next } }
        on && $0 == "```" { exit }
        on { print }' "$1"
}
check "docs/ci.md shows github-node-adapter.yml as it is" \
    diff -u "$EX/github-node-adapter.yml" <(block "$SRC/docs/ci.md" yaml 4)
check "docs/ci.md shows github-release-deb.yml as it is" \
    diff -u "$EX/github-release-deb.yml" <(block "$SRC/docs/ci.md" yaml 5)
check "docs/ci.md shows action.yml as it is" \
    diff -u "$SRC/action.yml" <(block "$SRC/docs/ci.md" yaml 6)

# ---- structure: parsed with python3 yaml ------------------------------------
out=$(python3 - "$EX" "$SRC/action.yml" "$T_TMP" <<'PY' 2>&1
import os, re, sys, yaml
ex, action, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
bad = []
def need(cond, what):
    if not cond:
        bad.append(what)
node = yaml.safe_load(open(os.path.join(ex, "github-node-adapter.yml")))
rel = yaml.safe_load(open(os.path.join(ex, "github-release-deb.yml")))
act = yaml.safe_load(open(action))
job = node["jobs"]["lockstorm-node"]
st = job["steps"]
uses = [s.get("uses", "").split("@")[0] for s in st]
runs = [s["run"] for s in st if "run" in s]
need("actions/setup-node" in uses, "node: no actions/setup-node step")
need(any(r.strip() == "npm ci" for r in runs), "node: no npm ci step")
need(uses.index("actions/setup-node") < [i for i, s in enumerate(st) if s.get("run", "").strip() == "npm ci"][0],
     "node: npm ci before Node is set up")
gate = [r for r in runs if r.startswith("lockstorm run")]
need(len(gate) == 1 and "junit" in gate[0] and "md" in gate[0], "node: the gate must write junit and md")
summ = [s for s in st if "GITHUB_STEP_SUMMARY" in s.get("run", "")]
need(summ and summ[0].get("if") == "always()" and "summary.md" in summ[0]["run"],
     "node: summary.md to $GITHUB_STEP_SUMMARY under always()")
for u in ("actions/upload-artifact", "mikepenz/action-junit-report"):
    s = [x for x in st if x.get("uses", "").startswith(u)]
    need(s and s[0].get("if") == "always()", "node: %s under always()" % u)
need(job["env"]["LOCKSTORM_DEB_URL"].endswith(".deb"), "node: the deb URL")
pk = rel["jobs"]["package"]
need(any("cpack -G DEB" in s.get("run", "") for s in pk["steps"]), "release: cpack -G DEB")
need(rel["jobs"]["gate"]["needs"] == "package", "release: the gate needs the package")
need(act["runs"]["using"] == "composite", "action: composite")
need(set(act["inputs"]) >= {"workload", "formats"}, "action: inputs workload, formats")
need(act["inputs"]["workload"].get("required") is True, "action: workload required")
steps = act["runs"]["steps"]
need(len(steps) == 1 and steps[0]["shell"] == "bash", "action: one bash step")
open(os.path.join(tmp, "action.sh"), "w").write(steps[0]["run"])
# every lockstorm command line of every run step, for the CLI check
cmds = []
for doc in (node, rel):
    for j in doc["jobs"].values():
        for s in j["steps"]:
            for line in s.get("run", "").splitlines():
                line = line.strip()
                if line.startswith("lockstorm "):
                    cmds.append(line)
cmds += [l.strip().split("||")[0] for l in steps[0]["run"].splitlines() if l.strip().startswith("lockstorm ")]
open(os.path.join(tmp, "cmds.txt"), "w").write("\n".join(cmds) + "\n")
deb = os.path.basename(job["env"]["LOCKSTORM_DEB_URL"])
open(os.path.join(tmp, "deb.txt"), "w").write(deb + "\n")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
) && rc=0 || rc=$?
check "the workflows and the action parse and have their steps ($out)" [ "$rc" -eq 0 ]

# ---- the commands exist in the CLI ------------------------------------------
n=0
while read -r line; do
    [ -n "$line" ] || continue
    n=$((n + 1))
    read -r -a words <<<"$line"
    sub=${words[1]}
    if [ "$sub" = --version ]; then
        check "'$line' runs" "$LS" --version
        continue
    fi
    help=$("$LS" "$sub" --help 2>&1 || true)
    check "'lockstorm $sub' is a command" grep -q "usage:" <<<"$help"
    for w in "${words[@]:2}"; do
        case $w in
        --* | -q) check "'lockstorm $sub' has option $w" grep -qE -- "(^|[ ,\[|])$w([ ,\]|]|$)" <<<"$help" ;;
        esac
    done
done <"$T_TMP/cmds.txt"
check "lockstorm commands found in the run steps ($n)" [ "$n" -ge 5 ]
ver=$("$LS" --version | head -n 1 | awk '{print $2}')
check "the gate downloads a cpack file name, lockstorm_VERSION_ARCH.deb ($(cat "$T_TMP/deb.txt"))" \
    grep -qE '^lockstorm_[0-9][0-9.]*_(amd64|arm64)\.deb$' "$T_TMP/deb.txt"
check "... of this version ($ver)" grep -q "^lockstorm_${ver}_" "$T_TMP/deb.txt"

# ---- the action's script, run as the runner would ---------------------------
bindir=$T_TMP/bin
mkdir -p "$bindir"
ln -s "$LS" "$bindir/lockstorm"
act() { # act DIR WORKLOAD: the action's step in DIR; sets ARC
    mkdir -p "$1"
    set +e
    (cd "$1" && PATH=$bindir:$PATH GITHUB_STEP_SUMMARY=$1/step-summary.md LOCKSTORM_WORKLOAD=$2 \
        LOCKSTORM_FORMATS=text,json,junit,md LOCKSTORM_RUN=run \
        bash --noprofile --norc -eo pipefail "$T_TMP/action.sh" >"$1.stdout" 2>"$1.stderr")
    ARC=$?
    set -e
}
"$LS" init "$T_TMP/pass.yaml" >/dev/null 2>&1
# the starter as written (4 s): its expect: block wants >= 50 grants
act "$T_TMP/a-pass" "$T_TMP/pass.yaml"
check "action: a passing gate exits 0 ($ARC; $(tail -n 1 "$T_TMP/a-pass.stderr"))" [ "$ARC" -eq 0 ]
check "action: stdout is the verdict line alone" \
    bash -c '[ "$(wc -l <"$1")" -eq 1 ] && grep -q "^lockstorm: PASS " "$1"' _ "$T_TMP/a-pass.stdout"
check "action: summary.md went to the step summary" \
    bash -c 'grep -q "^## lockstorm PASS" "$1/step-summary.md"' _ "$T_TMP/a-pass"
check "action: junit.xml written" [ -s "$T_TMP/a-pass/run/junit.xml" ]
t_no_leftovers "$T_TMP/a-pass/run"
"$LS" init --scenario stolen-lock "$T_TMP/fail.yaml" >/dev/null 2>&1
sed -i -e 's/^duration: .*/duration: 2s/' -e 's/lock_broken: "> 0"/lock_broken: 0/' "$T_TMP/fail.yaml"
act "$T_TMP/a-fail" "$T_TMP/fail.yaml"
check "action: a failing gate fails the step ($ARC)" [ "$ARC" -eq 1 ]
check "action: ... and still writes the summary" grep -q "^## lockstorm FAIL" "$T_TMP/a-fail/step-summary.md"
t_no_leftovers "$T_TMP/a-fail/run"
cat >"$T_TMP/cmp.yaml" <<'YAML'
name: action-cmp
duration: 1500ms
lock: {impl: redis-single, ttl: 300ms}
workers: {count: 3, resources: 1, hold: {dist: uniform, min: 10ms, max: 30ms}, think: 2ms}
faults:
  - {kind: pause, target: holder, at: 300ms, duration: 500ms}
compare:
  - name: single
  - name: naive-del
    lock: {impl: naive-del, ttl: 300ms}
YAML
act "$T_TMP/a-cmp" "$T_TMP/cmp.yaml"
check "action: a compare: block ran (exit $ARC)" [ "$ARC" -eq 0 ]
check "action: its stdout is the conclusion" \
    bash -c 'grep -q "^under pause: " "$1" && grep -q "^whole run: " "$1" && ! grep -q "^run " "$1"' _ "$T_TMP/a-cmp.stdout"
check "action: compare.md went to the step summary" \
    bash -c 'grep -q "^## lockstorm compare" "$1" && grep -q "^- under pause: " "$1"' _ "$T_TMP/a-cmp/step-summary.md"
t_no_leftovers "$T_TMP/a-cmp/run/single"
t_no_leftovers "$T_TMP/a-cmp/run/naive-del"
t_finish
