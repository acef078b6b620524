#!/usr/bin/env bash
# The CI examples of docs/ci.md, run here: the GitHub Actions workflow's
# shell steps (docs/examples/github-actions.yml) and the GitLab job's
# script (docs/examples/gitlab-ci.yml), as written, in a temporary
# workspace. What differs from a real CI run: the job's variables point at
# temporary directories and at a git repository made from this source tree
# (so `git clone` really clones), and apt-get is replaced by a check that
# every package it names is installed (no network, no root needed here).
# The `uses:` steps are checked for what they need: the uploaded path
# exists and junit.xml is valid JUnit. A gate that fails exits non-zero and
# still leaves the run directory and junit.xml for the always() steps.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

EX=$SRC/docs/examples
if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import yaml' 2>/dev/null; then
    fail "python3 with yaml needed to read the CI examples: scripts/install-deps.sh installs it"
    t_finish
    exit 1
fi

# ---- docs/ci.md shows exactly these files -----------------------------------
block() { # block FILE LANG N: the Nth fenced ```LANG block of FILE
    awk -v lang="$2" -v want="$3" '
        $0 == "```" lang { n++; if (n == want) { on = 1; next } }
        on && $0 == "```" { exit }
        on { print }' "$1"
}
check "docs/ci.md shows docs/examples/github-actions.yml as it is" \
    diff -u "$EX/github-actions.yml" <(block "$SRC/docs/ci.md" yaml 1)
check "docs/ci.md shows docs/examples/gitlab-ci.yml as it is" \
    diff -u "$EX/gitlab-ci.yml" <(block "$SRC/docs/ci.md" yaml 2)

# ---- the examples' commands ---------------------------------------------------
python3 - "$EX" "$T_TMP" <<'PY'
import os, sys, yaml
ex, out = sys.argv[1], sys.argv[2]
gh = yaml.safe_load(open(os.path.join(ex, "github-actions.yml")))
job = gh["jobs"]["lockstorm"]
steps = job["steps"]
w = lambda name, text: open(os.path.join(out, name), "w").write(text)
w("gh.env", "".join("%s=%s\n" % kv for kv in job["env"].items()))
runs = [s for s in steps if "run" in s]
w("gh.install", runs[0]["run"])
w("gh.gate", runs[1]["run"].rstrip("\n") + "\n")
uses = {s["uses"].split("@")[0]: s for s in steps if "uses" in s}
w("gh.upload", uses["actions/upload-artifact"]["with"]["path"] + "\n")
w("gh.junit", uses["mikepenz/action-junit-report"]["with"]["report_paths"] + "\n")
w("gh.always", " ".join(str(s.get("if")) for s in steps if "uses" in s and "checkout" not in s["uses"]))
w("gh.container", job.get("container", ""))
gl = yaml.safe_load(open(os.path.join(ex, "gitlab-ci.yml")))["lockstorm"]
w("gl.env", "".join("%s=%s\n" % kv for kv in gl["variables"].items()))
w("gl.install", "\n".join(gl["before_script"]) + "\n")
w("gl.gate", "\n".join(gl["script"]) + "\n")
w("gl.upload", "\n".join(gl["artifacts"]["paths"]) + "\n")
w("gl.junit", gl["artifacts"]["reports"]["junit"] + "\n")
w("gl.always", gl["artifacts"]["when"])
w("gl.image", gl["image"])
PY
check "both run in Debian 12 ($(cat "$T_TMP/gh.container"), $(cat "$T_TMP/gl.image"))" \
    [ "$(cat "$T_TMP/gh.container") $(cat "$T_TMP/gl.image")" = "debian:bookworm debian:bookworm" ]
check "the GitLab job installs with the workflow's commands" \
    diff -u <(sed -e ':a' -e '/\\$/N; s/\\\n *//; ta' "$T_TMP/gh.install") "$T_TMP/gl.install"
check "the GitLab job runs the workflow's gate" diff -u "$T_TMP/gh.gate" <(sed '$!d' "$T_TMP/gl.gate")
check "same variables in both" diff <(cut -d= -f1 "$T_TMP/gh.env") <(cut -d= -f1 "$T_TMP/gl.env")
check "upload and junit steps run even when the gate fails (gh: $(cat "$T_TMP/gh.always"), gl: $(cat "$T_TMP/gl.always"))" \
    [ "$(cat "$T_TMP/gh.always") $(cat "$T_TMP/gl.always")" = "always() always() always" ]

. "$(dirname "$0")/pkgs.sh"
for p in $(dev_packages "$SRC/CMakeLists.txt") redis-server; do
    check "the install step installs $p (the build needs it)" grep -qw -- "$p" "$T_TMP/gh.install"
done

# ---- a repository to clone: this source tree as it is now ---------------------
repo=$T_TMP/lockstorm-repo
mkdir -p "$repo"
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$SRC" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$repo" 2>/dev/null) || true
else
    (cd "$SRC" && tar --exclude='./build*' --exclude=./runs -cf - .) | tar -xf - -C "$repo"
fi
git -C "$repo" init -q -b main
git -C "$repo" add -A
git -C "$repo" -c user.name=test -c user.email=test@localhost commit -qm "lockstorm as tested"
check "a git repository of this tree to clone" bash -c 'git -C "$1" rev-parse -q --verify main >/dev/null' _ "$repo"

# apt-get stand-in: every package `apt-get install` names must be installed already
mkdir -p "$T_TMP/bin"
cat >"$T_TMP/bin/apt-get" <<'SH'
#!/usr/bin/env bash
[ "$1" = update ] && exit 0
[ "$1" = install ] || { echo "apt-get stand-in: unexpected: $*" >&2; exit 1; }
shift
for p in "$@"; do
    case $p in -*) continue ;; esac
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        { echo "apt-get stand-in: $p is not installed here" >&2; exit 1; }
done
SH
chmod +x "$T_TMP/bin/apt-get"

ws=$T_TMP/ws
mkdir -p "$ws/ci"
"$LS" init --scenario stolen-lock "$ws/ci/lock-gate.yaml" 2>/dev/null
sed 's/lock_broken: "> 0"/lock_broken: 0/' "$ws/ci/lock-gate.yaml" >"$ws/ci/failing.yaml"

# job_env FILE: the job's variables, with the places this test may write to
job_env() {
    local k v
    while IFS='=' read -r k v; do export "$k=$v"; done <"$1"
    export LOCKSTORM_REPO=$repo LOCKSTORM_PREFIX=$T_TMP/prefix LOCKSTORM_WORK=$T_TMP/work
    export PATH=$T_TMP/prefix/bin:$T_TMP/bin:$PATH
}

# ---- GitHub Actions: shell steps as `bash --noprofile --norc -eo pipefail` ---
(
    job_env "$T_TMP/gh.env"
    cd "$ws"
    set +e
    bash --noprofile --norc -eo pipefail "$T_TMP/gh.install" >"$T_TMP/gh.install.log" 2>&1
    echo $? >"$T_TMP/gh.install.rc"
    bash --noprofile --norc -eo pipefail "$T_TMP/gh.gate" >"$T_TMP/gh.gate.log" 2>&1
    echo $? >"$T_TMP/gh.gate.rc"
    LOCKSTORM_WORKLOAD=ci/failing.yaml LOCKSTORM_RUN=lockstorm-run-failing \
        bash --noprofile --norc -eo pipefail "$T_TMP/gh.gate" >"$T_TMP/gh.fail.log" 2>&1
    echo $? >"$T_TMP/gh.fail.rc"
)
rc=$(cat "$T_TMP/gh.install.rc")
check "github: 'Install lockstorm' succeeds (exit $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || tail -n 20 "$T_TMP/gh.install.log" | sed 's/^/#   /'
check "github: the installed lockstorm is the one the steps ran" \
    grep -q "^lockstorm [0-9]" "$T_TMP/gh.install.log"
check "github: it was installed under LOCKSTORM_PREFIX" [ -x "$T_TMP/prefix/bin/lockstorm" ]
rc=$(cat "$T_TMP/gh.gate.rc")
check "github: 'Lock safety gate' passes (exit $rc; $(grep '^lockstorm: [A-Z]' "$T_TMP/gh.gate.log" | tail -n1))" [ "$rc" -eq 0 ]
check "github: progress lines in the log (--progress plain)" grep -q '^lockstorm: progress' "$T_TMP/gh.gate.log"
up=$ws/$(cat "$T_TMP/gh.upload")
check "github: the uploaded path exists with result.json" [ -s "$up/result.json" ]
junit=$ws/$(cat "$T_TMP/gh.junit")
check "github: junit.xml for the report step" [ -s "$junit" ]
if command -v xmllint >/dev/null 2>&1; then
    check "github: junit.xml is valid JUnit (tests/junit.xsd)" \
        xmllint --noout --schema "$SRC/tests/junit.xsd" "$junit"
fi
rc=$(cat "$T_TMP/gh.fail.rc")
check "github: a failing gate fails the step (exit $rc)" [ "$rc" -eq 1 ]
check "github: ... and still leaves junit.xml with the failure for always()" \
    grep -q '<failure' "$ws/lockstorm-run-failing/junit.xml"
t_no_leftovers "$ws/lockstorm-run"
# a gate cannot pass on missing data (docs/ci.md "What a pass rests on"):
# the passing gate's artifact, one event log gone, checked again
cp -r "$ws/lockstorm-run" "$T_TMP/gate-copy"
rm -f "$T_TMP/gate-copy/events/worker-000.bin"
set +e
"$LS" check "$T_TMP/gate-copy" >"$T_TMP/gate-copy.out" 2>&1
rc=$?
"$LS" report "$T_TMP/gate-copy" >/dev/null 2>&1
set -e
check "github: the gate's run with a log deleted is not a pass (exit $rc, wanted 4)" [ "$rc" -eq 4 ]
check "github: ... the summary names the missing log" \
    grep -q 'worker-000.bin: missing' "$T_TMP/gate-copy.out"
check "github: ... and junit.xml has it as an error" \
    grep -q 'verdict decided' "$T_TMP/gate-copy/junit.xml"

# ---- GitLab: the script, with the lockstorm the same install put there --------
(
    job_env "$T_TMP/gl.env"
    export LOCKSTORM_RUN=gl-run
    cd "$ws"
    set +e
    bash --noprofile --norc -eo pipefail "$T_TMP/gl.gate" >"$T_TMP/gl.gate.log" 2>&1
    echo $? >"$T_TMP/gl.gate.rc"
)
rc=$(cat "$T_TMP/gl.gate.rc")
check "gitlab: the script passes (exit $rc)" [ "$rc" -eq 0 ]
check "gitlab: the artifact path exists" [ -s "$ws/gl-run/result.json" ]
check "gitlab: junit report exists" [ -s "$ws/gl-run/junit.xml" ]
check "gitlab: artifact paths name the run directory ($(cat "$T_TMP/gl.upload"))" \
    [ "$(cat "$T_TMP/gl.upload")" = "lockstorm-run/" ]

t_finish
