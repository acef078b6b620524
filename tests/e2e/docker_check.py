#!/usr/bin/env python3
"""Static checks of docker/Dockerfile and docker/compose.yaml (no Docker
engine runs on our machines; tests/e2e/test_docker.sh runs this). Prints one
"ok - ..." or "not ok - ..." line per check, for the shell test to count.

usage: docker_check.py SRC_DIR LIB_PACKAGES DEV_PACKAGES
  LIB_PACKAGES: comma-separated Debian packages of the shared libraries the
  lockstorm binary links (the runtime image must install each).
  DEV_PACKAGES: comma-separated Debian packages of the pkg-config modules
  CMakeLists.txt requires (the builder must install each).
"""
import os
import re
import shlex
import sys

import yaml

SRC = sys.argv[1]
LIB_PKGS = [p for p in sys.argv[2].split(",") if p]
DEV_PKGS = [p for p in sys.argv[3].split(",") if p]


def check(desc, cond):
    print(("ok - " if cond else "not ok - ") + desc)
    return cond


# ---- Dockerfile -------------------------------------------------------------
def instructions(path):
    """(line, INSTRUCTION, text) with continuations joined, comments dropped."""
    out, buf, start = [], "", 0
    with open(path) as f:
        for n, line in enumerate(f, 1):
            s = line.rstrip("\n")
            if not buf and (not s.strip() or s.lstrip().startswith("#")):
                continue
            if buf and s.lstrip().startswith("#"):
                continue
            if not buf:
                start = n
            if s.endswith("\\"):
                buf += s[:-1] + " "
                continue
            buf += s
            word, _, rest = buf.strip().partition(" ")
            out.append((start, word.upper(), rest.strip()))
            buf = ""
    return out


def apt_packages(run_text):
    """Packages named by every `apt-get install` in one RUN."""
    pkgs = []
    for part in re.split(r"&&|;", run_text):
        words = shlex.split(part)
        if "apt-get" in words and "install" in words:
            pkgs += [w for w in words[words.index("install") + 1:]
                     if not w.startswith("-") and not w.startswith("$")]  # $ARG: optional extras
    return pkgs


df = os.path.join(SRC, "docker", "Dockerfile")
ins = instructions(df)
stages, args, cur = [], {}, None
for line, word, text in ins:
    if word == "ARG" and cur is None:
        k, _, v = text.partition("=")
        args[k] = v
    if word == "FROM":
        m = re.match(r"(\S+)(?:\s+AS\s+(\S+))?$", text, re.I)
        image = re.sub(r"\$\{(\w+)\}", lambda g: args.get(g.group(1), ""), m.group(1))
        cur = {"image": image, "name": m.group(2), "ins": [], "line": line}
        stages.append(cur)
    elif cur is not None:
        cur["ins"].append((line, word, text))

check("Dockerfile: two stages, builder then runtime (%d)" % len(stages),
      len(stages) == 2 and stages[0]["name"] == "builder")
for st in stages:
    check("Dockerfile line %d: FROM %s is Debian bookworm" % (st["line"], st["image"]),
          re.match(r"debian:bookworm(-slim)?$", st["image"]) is not None)
names = {st["name"] for st in stages if st["name"]}
for st in stages:
    for line, word, text in st["ins"]:
        if word == "COPY":
            m = re.search(r"--from=(\S+)", text)
            if m:
                check("Dockerfile line %d: COPY --from=%s names an earlier stage" % (line, m.group(1)),
                      m.group(1) in names)
            else:
                srcs = shlex.split(text)[:-1]
                for s in srcs:
                    check("Dockerfile line %d: COPY source %s exists in the build context" % (line, s),
                          os.path.exists(os.path.join(SRC, s)))
        if word == "RUN" and "apt-get install" in text:
            check("Dockerfile line %d: apt-get update in the same RUN as install" % line,
                  "apt-get update" in text)
            check("Dockerfile line %d: install -y --no-install-recommends" % line,
                  "-y" in text.split() and "--no-install-recommends" in text)
            check("Dockerfile line %d: apt lists removed in the same layer" % line,
                  "rm -rf /var/lib/apt/lists/*" in text)

builder, runtime = stages[0], stages[-1]
brun = " ".join(t for _, w, t in builder["ins"] if w == "RUN")
for cmd in ("cmake -S /src -B /build", "-DCMAKE_INSTALL_PREFIX=/usr", "cmake --build /build",
            "DESTDIR=/stage cmake --install /build",
            "cd /stage/usr/share/lockstorm/adapters/node", "npm ci"):
    check("builder runs '%s' (tests/e2e/test_install.sh runs the same install)" % cmd, cmd in brun)
check("adapters/node/package-lock.json exists (npm ci needs it)",
      os.path.exists(os.path.join(SRC, "adapters/node/package-lock.json")))
bpkgs = [p for _, w, t in builder["ins"] if w == "RUN" for p in apt_packages(t)]
rpkgs = [p for _, w, t in runtime["ins"] if w == "RUN" for p in apt_packages(t)]
for p in ("build-essential", "cmake", "pkg-config", "npm") + tuple(DEV_PKGS):
    check("builder installs %s" % p, p in bpkgs)
for p in ("redis-server", "redis-sentinel", "gnuplot-nox", "nodejs") + tuple(LIB_PKGS):
    check("runtime installs %s" % p, p in rpkgs)
rtext = [(w, t) for _, w, t in runtime["ins"]]
check("runtime copies the staged install: COPY --from=builder /stage/ /",
      ("COPY", "--from=builder /stage/ /") in rtext)
users = [t for w, t in rtext if w == "USER"]
check("runtime runs as a non-root user (%s)" % users, bool(users) and users[-1] not in ("root", "0"))
ep = [t for w, t in rtext if w == "ENTRYPOINT"]
cmd = [t for w, t in rtext if w == "CMD"]
check("entrypoint is lockstorm under an init (tini)", bool(ep) and "tini" in ep[-1] and "lockstorm" in ep[-1])
check("default command runs the demo", bool(cmd) and re.search(r'"run",\s*"demo"', cmd[-1]) is not None)
check("the demo workload exists", os.path.exists(os.path.join(SRC, "workloads/demo.yaml")))
with open(os.path.join(SRC, ".dockerignore")) as f:
    ign = f.read().split()
for p in ("build*/", "runs/", "adapters/node/node_modules/", ".git"):
    check(".dockerignore keeps %s out of the build context" % p, p in ign)
print("#packages " + " ".join(sorted(set(bpkgs + rpkgs))))

# ---- compose.yaml -----------------------------------------------------------
with open(os.path.join(SRC, "docker", "compose.yaml")) as f:
    c = yaml.safe_load(f)
svc = c.get("services", {})
nets = c.get("networks", {})
check("compose: a private network (internal: true)",
      any(isinstance(v, dict) and v.get("internal") is True for v in nets.values()))
check("compose: no port published anywhere", all("ports" not in s for s in svc.values()))
for name, s in svc.items():
    check("compose: %s is on the private network" % name,
          set(s.get("networks", [])) <= {k for k, v in nets.items() if v and v.get("internal")})
redlock = ["redlock-%d" % i for i in range(1, 6)]
for n in redlock + ["redis-primary", "redis-replica-1"]:
    s = svc.get(n, {})
    check("compose: %s runs redis-server with a healthcheck" % n,
          s.get("entrypoint") == ["redis-server"] and "healthcheck" in s)
check("compose: redis-replica-1 replicates redis-primary",
      "--replicaof" in svc.get("redis-replica-1", {}).get("command", []) and
      "redis-primary" in svc["redis-replica-1"]["command"])
for i in (1, 2, 3):
    s = svc.get("sentinel-%d" % i, {})
    text = " ".join(s.get("command", []))
    check("compose: sentinel-%d monitors redis-primary and runs redis-sentinel" % i,
          "sentinel monitor lockstorm redis-primary 6379 2" in text and "redis-sentinel" in text)
ls = svc.get("lockstorm", {})
b = ls.get("build", {})
check("compose: lockstorm builds docker/Dockerfile from the repository root",
      b.get("context") == ".." and b.get("dockerfile") == "docker/Dockerfile")
check("compose: lockstorm runs under an init", ls.get("init") is True)
check("compose: run directories on the runs volume",
      "runs:/work/runs" in ls.get("volumes", []) and "runs" in c.get("volumes", {}))
for n in redlock:
    check("compose: lockstorm waits for %s to be healthy" % n,
          ls.get("depends_on", {}).get(n, {}).get("condition") == "service_healthy")


def node_addresses(services):
    return ["%s:%s" % (n, services[n]["command"][services[n]["command"].index("--port") + 1])
            for n in services]


runs = {}
for name in ("lockstorm", "lockstorm-primary"):
    argv = svc.get(name, {}).get("command", [])
    check("compose: %s runs a bundled workload (%s)" % (name, argv),
          len(argv) >= 2 and argv[0] == "run" and
          os.path.exists(os.path.join(SRC, "workloads", argv[1] + ".yaml")))
    if len(argv) >= 2:
        runs[name] = argv[1]
        with open(os.path.join(SRC, "workloads", argv[1] + ".yaml")) as f:
            wl = yaml.safe_load(f)
        want = node_addresses({n: svc[n] for n in (redlock if name == "lockstorm" else ["redis-primary"])})
        cl = wl.get("cluster", {})
        check("compose: %s's workload uses topology external with the services' addresses" % name,
              cl.get("topology") == "external" and cl.get("addresses") == want)
print("#workloads " + " ".join(runs.get(n, "") for n in ("lockstorm", "lockstorm-primary")))
print("#node-command " + shlex.join(c["x-node"]["command"]))
print("#replica-command " + shlex.join(svc["redis-replica-1"]["command"]))
print("#sentinel-command " + svc["sentinel-1"]["command"][0])
