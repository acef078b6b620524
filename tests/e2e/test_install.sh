#!/usr/bin/env bash
# Install and packaging (cmake/Install.cmake): `cmake --install` of this
# build tree into a temporary prefix puts the binary, the clock shim, the
# bundled workloads, adapters, docs, man page and bash completion under the
# GNU prefixes, and the installed binary finds its workloads and shim
# relative to that prefix (run from elsewhere, the source tree out of
# reach); the Dockerfile's builder layout (prefix /usr, DESTDIR /stage)
# works the same; `cpack -G DEB` builds a package whose `dpkg -c` lists the
# expected files and whose dependencies name the libraries the binary links.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pkgs.sh"

BUILD=$(cd "$(dirname "$LS")" && pwd)
have_shim=0
[ -e "$BUILD/liblsclock.so" ] && have_shim=1

# ---- cmake --install into a prefix ----------------------------------------
P=$T_TMP/prefix
check "cmake --install into $P" bash -c 'cmake --install "$1" --prefix "$2" >"$3" 2>&1' _ \
    "$BUILD" "$P" "$T_TMP/install.log"
expected=(bin/lockstorm share/lockstorm/workloads/demo.yaml share/lockstorm/workloads/naive-del.yaml
          share/lockstorm/workloads/external/redlock-5.yaml share/doc/lockstorm/README.md
          share/doc/lockstorm/getting-started.md share/doc/lockstorm/faq.md
          share/doc/lockstorm/docker.md share/doc/lockstorm/ci.md
          share/man/man1/lockstorm.1 share/bash-completion/completions/lockstorm)
[ "$have_shim" = 1 ] && expected+=(lib/lockstorm/liblsclock.so)
for f in "${expected[@]}"; do check "installed $f" [ -e "$P/$f" ]; done
check "no node_modules installed (npm ci installs them where they are used)" \
    bash -c '! find "$1" -name node_modules | grep -q .' _ "$P"
nyaml=$(find "$SRC/workloads" -name '*.yaml' | wc -l)
check "every bundled workload installed ($nyaml)" \
    [ "$(find "$P/share/lockstorm/workloads" -name '*.yaml' | wc -l)" -eq "$nyaml" ]

# the installed binary, run from a directory far from the source tree
mkdir -p "$T_TMP/elsewhere"
cd "$T_TMP/elsewhere"
out=$("$P/bin/lockstorm" list workloads)
check "installed binary lists the workloads of its prefix" \
    grep -q "^bundled workloads in $P/share/lockstorm/workloads" <<<"$out"
check "installed binary resolves a bundled name" \
    bash -c '"$1" validate naive-del 2>&1 >/dev/null | grep -q "$2/share/lockstorm/workloads/naive-del.yaml: ok"' \
    _ "$P/bin/lockstorm" "$P"
if [ "$have_shim" = 1 ]; then
    check "installed binary finds the clock shim under its prefix" \
        grep -q "clock shim: $P/lib/lockstorm/liblsclock.so" <<<"$("$P/bin/lockstorm" --version)"
fi
check "the record-mode workloads' program is installed where they name it (relative to them)" \
    bash -c '[ -x "$2/share/lockstorm/tests/fixtures/record_program.py" ] && "$1" validate "$2/share/lockstorm/workloads/record/redis-pause-long.yaml" 2>/dev/null | grep -qF "command: [\"$2/share/lockstorm/tests/fixtures/record_program.py\"]"' \
    _ "$P/bin/lockstorm" "$P"
check "the installed man page is the generated one" cmp -s "$P/share/man/man1/lockstorm.1" "$SRC/docs/lockstorm.1"
d=$T_TMP/elsewhere/run
set +e
"$P/bin/lockstorm" run naive-del --set duration=1s --set faults=[] --set expect={} \
    --out "$d" --quiet >"$d.stdout" 2>"$d.stderr"
rc=$?
set -e
check "installed binary runs a bundled workload (exit $rc; $(tail -n1 "$d.stdout"))" \
    grep -q '^lockstorm: [A-Z]* workload=naive-del' "$d.stdout"
check "the installed binary's report.html has the timeline (script and data embedded)" \
    sh -c "grep -q 'id=\"tl-data\"' '$d/report.html' && grep -q 'window.lsTimeline' '$d/report.html'"
t_no_leftovers "$d"
cd "$T_TMP"

# ---- the Dockerfile's builder layout: prefix /usr, DESTDIR /stage ----------
S=$T_TMP/stage
check "DESTDIR=stage cmake --install --prefix /usr (the Dockerfile's builder step)" \
    bash -c 'DESTDIR="$2" cmake --install "$1" --prefix /usr >/dev/null 2>&1' _ "$BUILD" "$S"
check "staged binary finds the staged workloads" \
    grep -q "^bundled workloads in $S/usr/share/lockstorm/workloads" <<<"$("$S/usr/bin/lockstorm" list workloads)"

# ---- cpack -G DEB ----------------------------------------------------------
if ! command -v dpkg-deb >/dev/null 2>&1; then
    fail "dpkg-deb missing: cannot check the Debian package (install dpkg)"
    t_finish
    exit 1
fi
mkdir -p "$T_TMP/pkg"
check "cpack -G DEB builds a package" bash -c 'cd "$2" && cpack -G DEB --config "$1/CPackConfig.cmake" -B "$2" >"$2/cpack.log" 2>&1' \
    _ "$BUILD" "$T_TMP/pkg"
deb=$(ls "$T_TMP"/pkg/lockstorm_*.deb 2>/dev/null | head -n1)
check "the package is named lockstorm_VERSION_ARCH.deb ($(basename "${deb:-none}"))" [ -n "$deb" ]
if [ -n "$deb" ]; then
    dpkg -c "$deb" >"$T_TMP/deb.list"
    for f in "${expected[@]}"; do
        check "dpkg -c lists /usr/$f" grep -q " \./usr/$f\$" "$T_TMP/deb.list"
    done
    info=$(dpkg-deb -I "$deb")
    check "package name and version" \
        bash -c 'grep -q "Package: lockstorm" <<<"$1" && grep -q "Version: $2" <<<"$1"' _ "$info" \
        "$(head -n1 <<<"$("$LS" --version)" | cut -d' ' -f2)"
    deps=$(grep '^ Depends:' <<<"$info")
    check "it depends on redis-server ($deps)" grep -q "redis-server" <<<"$deps"
    # every library the binary itself names comes from a package the .deb depends on
    for pkg in $(lib_packages "$LS"); do
        check "Depends names $pkg" grep -q "$pkg" <<<"$deps"
    done
    X=$T_TMP/deb-root
    dpkg-deb -x "$deb" "$X"
    check "the packaged binary finds its packaged workloads" \
        grep -q "^bundled workloads in $X/usr/share/lockstorm/workloads" <<<"$("$X/usr/bin/lockstorm" list workloads)"
fi

t_finish
