#!/usr/bin/env bash
# Installs what lockstorm needs to build, run and test, when it is missing:
# a C toolchain, CMake, pkg-config, hiredis, libyaml, redis-server (and
# redis-tools: redis-benchmark is bench/'s reference), gnuplot
# (the charts; without it they are skipped with one line) and xmllint (the
# tests validate junit.xml against tests/junit.xsd) -- Debian packages via
# apt-get. Idempotent: does nothing when all is there. Used by
# scripts/demo.sh and scripts/test.sh (the README's two commands).
# LS_WITH_CHROMIUM=1 adds chromium (headless, for tests/e2e/test_html.sh,
# which asks for it itself when it is missing).
set -euo pipefail

pkgs=(build-essential cmake pkg-config libhiredis-dev libyaml-dev redis-server redis-tools
      gnuplot-nox libxml2-utils)
# docker-compose: its `config` checks docker/compose.yaml against the Compose
# schema with no Docker engine (tests/e2e/test_docker.sh); brings python3-yaml.
# git: tests/e2e/test_ci_examples.sh clones lockstorm as the CI examples do.
pkgs+=(docker-compose git)
# clang: the libFuzzer targets (scripts/fuzz.sh, run by CI); strace: the
# bad-input test proves nothing was forked or bound (tests/e2e/test_bad_input.sh)
pkgs+=(clang strace)
# postgresql-15 (initdb, postgres; postgresql-client-15: psql for the tests) and
# libpq-dev: lock.impl pg-advisory on cluster.topology postgres
# (backends/postgres.c starts its own server; as root it runs it as the
# package's `postgres` user). policy-rc.d below keeps the package's own
# server from starting.
pkgs+=(postgresql-15 postgresql-client-15 libpq-dev)
# iptables: the failover fault's `cut: iptables` (faults/failover.c;
# tests/e2e/test_failover_iptables.sh), which only root can use: asked for
# only when running as root, so a user without sudo is not stopped by it
if [ "$(id -u)" -eq 0 ]; then pkgs+=(iptables); fi
if [ "${LS_WITH_CHROMIUM:-0}" = 1 ]; then pkgs+=(chromium); fi

missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
# redis-server must also be runnable (a package may be half-installed)
if ! command -v redis-server >/dev/null 2>&1; then
    case " ${missing[*]-} " in *" redis-server "*) ;; *) missing+=(redis-server) ;; esac
fi
[ ${#missing[@]} -eq 0 ] && exit 0

echo "lockstorm: installing missing packages: ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "lockstorm: error: need root (or sudo) to install: ${missing[*]}" >&2
        exit 3
    fi
fi
# One apt-get at a time: tests that install what they lack can run at once
# (test_html and test_html_scale both want chromium on a new machine), and
# dpkg refuses a second install while one holds its lock. So lockstorm's
# installs queue on a lock of their own, and wait for anyone else's apt.
# Inside that lock, and only there: do not let the redis-server or
# postgresql package start a system-wide server (lockstorm starts its own,
# on free loopback ports, and a stray daemon is a leftover). policy-rc.d is
# made and removed in the lock, so one install cannot remove it while
# another one's packages are still being set up, and a killed install
# removes what it made (the trap).
$SUDO env DEBIAN_FRONTEND=noninteractive flock /var/lock/lockstorm-apt.lock sh -c '
    made=0
    trap "[ \$made = 1 ] && rm -f /usr/sbin/policy-rc.d" EXIT
    trap "exit 130" INT
    trap "exit 143" TERM
    trap "exit 129" HUP
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d
        chmod +x /usr/sbin/policy-rc.d
        made=1
    fi
    apt-get -o DPkg::Lock::Timeout=600 update -qq &&
        apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@" >/dev/null
' sh "${missing[@]}"
echo "lockstorm: packages installed" >&2
