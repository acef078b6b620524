/*
 * adapter_init.c: `lockstorm adapter init node|python DIR` (see
 * adapter_init.h): writes a working adapter skeleton around a sample lock
 * (SET NX PX, compare-and-delete, compare-and-pexpire) on the SDK of this
 * checkout (adapters/node/sdk, adapters/python/lockstorm_adapter.py), a
 * workload that runs it, and for Node a package.json; then prints what to
 * run next. The texts are kept here so an installed binary needs no
 * template files. Not here: the SDKs themselves, workload semantics.
 */
#include "harness/adapter_init.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/init_text.h"
#include "harness/workload.h"
#include "util/err.h"
#include "util/exedir.h"
#include "util/strbuf.h"

/* ioredis as pinned in adapters/node/package.json (tests/e2e/test_adapter_init.sh
 * checks they agree): what the Node sample lock uses. */
#define IOREDIS_VERSION "5.11.1"

static const char NODE_ADAPTER[] =
    "#!/usr/bin/env node\n"
    "// adapter.js: a lockstorm adapter for your lock, written by `lockstorm\n"
    "// adapter init node` on the SDK @lockstorm/adapter (docs/adapters.md, \"Quick\n"
    "// start: your own lock\"). The sample lock is the single-node Redis lock done\n"
    "// right: SET key token NX PX ttl to acquire, a Lua compare-and-delete to\n"
    "// release, a Lua compare-and-pexpire to extend. Replace the three calls\n"
    "// between the YOUR LOCK markers with your library's; keep the rest.\n"
    "//   lockstorm adapter-test -- node adapter.js     (the protocol, in seconds)\n"
    "//   lockstorm run workload.yaml                   (the verdict, under faults)\n"
    "'use strict';\n"
    "const { randomUUID } = require('node:crypto');\n"
    "let sdk;\n"
    "try {\n"
    "  sdk = require('@lockstorm/adapter'); // from here on, a missing package is reported by it\n"
    "} catch (err) {\n"
    "  process.stderr.write(`lockstorm adapter error: ${err.message.split('\\n')[0]}: run npm "
    "install in ${__dirname}\\n`);\n"
    "  process.exit(1);\n"
    "}\n"
    "const { serve, BUSY } = sdk;\n"
    "const Redis = require('ioredis');\n"
    "\n"
    "const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('DEL', KEYS[1]) else return 0 end`;\n"
    "const EXTEND = `if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;\n"
    "let redis = null;\n"
    "\n"
    "serve({\n"
    "  name: 'my-lock',\n"
    "  version: '0.1.0',\n"
    "  // hello: the harness's handshake. nodes ([{host, port}]) are the addresses\n"
    "  // of lockstorm's fault proxy: connect there and nowhere else.\n"
    "  async hello({ nodes, options }) {\n"
    "    redis = new Redis({\n"
    "      ...nodes[0],\n"
    "      commandTimeout: 500,       // never wait forever (a blackhole partition)\n"
    "      enableOfflineQueue: false, // fail at once while disconnected\n"
    "      maxRetriesPerRequest: 0,   // one attempt per request: the harness retries\n"
    "    });\n"
    "    redis.on('error', () => {}); // ioredis reconnects by itself\n"
    "    await new Promise((ok) => redis.once('ready', ok));\n"
    "  },\n"
    "  // A thrown error is an unknown outcome (the lock may or may not be held)\n"
    "  // unless this says nothing was sent: then it is a definite failure.\n"
    "  definite: (err) => /Stream isn't writeable|ECONNREFUSED/.test(err.message),\n"
    "\n"
    "  // One attempt to take `res` for ttl_ms. Return a token string (or\n"
    "  // {token, fence, validity_ms}) when granted, BUSY when someone holds it.\n"
    "  async acquire({ res, ttl_ms }) {\n"
    "    const token = randomUUID();\n"
    "    // ---- YOUR LOCK: acquire ----\n"
    "    const granted = (await redis.set(res, token, 'PX', ttl_ms, 'NX')) === 'OK';\n"
    "    // ---- end ----\n"
    "    return granted ? token : BUSY;\n"
    "  },\n"
    "\n"
    "  // Release the grant `token` holds. Return false when the lock was no\n"
    "  // longer this grant's (expired, or someone else holds it now).\n"
    "  async release({ res, token }) {\n"
    "    // ---- YOUR LOCK: release ----\n"
    "    const deleted = await redis.eval(RELEASE, 1, res, token);\n"
    "    // ---- end ----\n"
    "    return deleted === 1;\n"
    "  },\n"
    "\n"
    "  // Extend the grant to ttl_ms from now. Return false when it was lost.\n"
    "  async extend({ res, token, ttl_ms }) {\n"
    "    // ---- YOUR LOCK: extend ----\n"
    "    const extended = await redis.eval(EXTEND, 1, res, token, ttl_ms);\n"
    "    // ---- end ----\n"
    "    return extended === 1;\n"
    "  },\n"
    "\n"
    "  async close() {\n"
    "    await redis.quit().catch(() => redis.disconnect());\n"
    "  },\n"
    "});\n";

static const char PY_ADAPTER[] =
    "#!/usr/bin/python3\n"
    "\"\"\"adapter.py: a lockstorm adapter for your lock, written by `lockstorm\n"
    "adapter init python` on the SDK lockstorm_adapter (docs/adapters.md, \"Quick\n"
    "start: your own lock\"). The sample lock is the single-node Redis lock done\n"
    "right (redis-py, Debian's python3-redis): SET key token NX PX ttl to\n"
    "acquire, a Lua compare-and-delete to release, a Lua compare-and-pexpire to\n"
    "extend. Replace the three calls between the YOUR LOCK markers with your\n"
    "library's; keep the rest.\n"
    "  lockstorm adapter-test -- /usr/bin/python3 adapter.py   (the protocol)\n"
    "  lockstorm run workload.yaml                             (the verdict)\n"
    "\"\"\"\n"
    "import sys\n"
    "import uuid\n"
    "\n"
    "sys.path.insert(0, \"@PYSDK@\")  # the SDK in your lockstorm checkout\n"
    "from lockstorm_adapter import BUSY, serve  # noqa: E402\n"
    "\n"
    "import redis  # noqa: E402\n"
    "from redis.exceptions import ConnectionError as RedisConnectionError  # noqa: E402\n"
    "from redis.exceptions import ResponseError, TimeoutError as RedisTimeout  # noqa: E402\n"
    "\n"
    "RELEASE = \"\"\"if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('DEL', KEYS[1]) else return 0 end\"\"\"\n"
    "EXTEND = \"\"\"if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
    "  return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end\"\"\"\n"
    "client = None\n"
    "\n"
    "\n"
    "def hello(h):\n"
    "    \"\"\"The harness's handshake: h[\"nodes\"] ([(host, port)]) are the\n"
    "    addresses of lockstorm's fault proxy: connect there and nowhere else.\"\"\"\n"
    "    global client\n"
    "    host, port = h[\"nodes\"][0]\n"
    "    client = redis.Redis(host=host, port=port, socket_timeout=0.5,  # never wait forever\n"
    "                         socket_connect_timeout=1.0)\n"
    "\n"
    "\n"
    "def definite(err):\n"
    "    \"\"\"An exception is an unknown outcome unless this says nothing happened.\"\"\"\n"
    "    if isinstance(err, ResponseError):\n"
    "        return True\n"
    "    return isinstance(err, RedisConnectionError) and not isinstance(err, RedisTimeout) and \\\n"
    "        \"refused\" in str(err)\n"
    "\n"
    "\n"
    "def acquire(req):\n"
    "    \"\"\"One attempt to take req[\"res\"] for req[\"ttl_ms\"]: a token, or BUSY.\"\"\"\n"
    "    token = uuid.uuid4().hex\n"
    "    # ---- YOUR LOCK: acquire ----\n"
    "    granted = client.set(req[\"res\"], token, nx=True, px=req[\"ttl_ms\"])\n"
    "    # ---- end ----\n"
    "    return token if granted else BUSY\n"
    "\n"
    "\n"
    "def release(req):\n"
    "    \"\"\"Release the grant req[\"token\"] holds; False when it was no longer ours.\"\"\"\n"
    "    # ---- YOUR LOCK: release ----\n"
    "    deleted = client.eval(RELEASE, 1, req[\"res\"], req[\"token\"])\n"
    "    # ---- end ----\n"
    "    return deleted == 1\n"
    "\n"
    "\n"
    "def extend(req):\n"
    "    \"\"\"Extend the grant to req[\"ttl_ms\"] from now; False when it was lost.\"\"\"\n"
    "    # ---- YOUR LOCK: extend ----\n"
    "    extended = client.eval(EXTEND, 1, req[\"res\"], req[\"token\"], req[\"ttl_ms\"])\n"
    "    # ---- end ----\n"
    "    return extended == 1\n"
    "\n"
    "\n"
    "if __name__ == \"__main__\":\n"
    "    serve(hello=hello, acquire=acquire, release=release, extend=extend, definite=definite,\n"
    "          close=lambda: client.close(), name=\"my-lock\", version=\"0.1.0\")\n";

static const char WORKLOAD[] =
    "# @FILE@: runs your adapter (@ADAPTER@) under faults; written by\n"
    "# `lockstorm adapter init @LANG@`. run it: lockstorm run @FILE@\n"
    "# Whoever holds the lock is paused (SIGSTOP, as a long GC pause would) for\n"
    "# longer than the TTL, so a paused holder overstays its lease (stale-holder:\n"
    "# no lock without fencing can prevent that, and it is not what this gates).\n"
    "# A correct lock is still never granted twice: lock-broken stays 0. A\n"
    "# release without the token check (a plain DEL) frees the next holder's lock\n"
    "# when the paused holder wakes, and lock-broken shows it.\n"
    "# The adapter command is resolved next to this file first (then in the\n"
    "# directory lockstorm runs in): run it from anywhere.\n"
    "name: my-lock\n"
    "description: my lock under holder pauses longer than its TTL; never granted twice\n"
    INIT_TEXT_RUN_4S
    "  impl: external            # an adapter process per worker (docs/protocol.md)\n"
    INIT_TEXT_TTL_RETRY
    "  options:\n"
    "    command: @COMMAND@\n"
    "    adapter: {}             # handed to your hello as options\n"
    INIT_TEXT_PAUSED_HOLDERS
    INIT_TEXT_GRANTS_GATE;

static const char PACKAGE_JSON[] =
    "{\n"
    "  \"name\": \"my-lock-adapter\",\n"
    "  \"version\": \"0.1.0\",\n"
    "  \"private\": true,\n"
    "  \"description\": \"a lockstorm adapter for my lock (lockstorm adapter init node)\",\n"
    "  \"main\": \"adapter.js\",\n"
    "  \"dependencies\": {\n"
    "    \"@lockstorm/adapter\": \"file:@SDK@\",\n"
    "    \"ioredis\": \"@IOREDIS@\"\n"
    "  }\n"
    "}\n";

/* Contract: the bundled adapters directory (realpath) into out (PATH_MAX
 * bytes): share/lockstorm/adapters of an install, the source tree's
 * adapters/ next to the build tree, or LS_SOURCE_DIR's. Returns 0, or -1
 * when none exists. */
static int find_adapters(char *out)
{
    static const char *const rel[] = {"/../share/lockstorm/adapters", "/../adapters"};
    if (exe_relative(rel, sizeof(rel) / sizeof(rel[0]), 1, out))
        return 0;
#ifdef LS_SOURCE_DIR
    char buf[PATH_MAX];
    snprintf(buf, sizeof(buf), "%s/adapters", LS_SOURCE_DIR);
    if (realpath(buf, out))
        return 0;
#endif
    return -1;
}

/* text with each "@KEY@" of keys[i] replaced by vals[i] (caller frees). */
static char *fill(const char *text, const char *const *keys, const char *const *vals, size_t n)
{
    struct strbuf sb;
    sb_init(&sb);
    for (const char *p = text; *p;) {
        size_t i = 0;
        for (; i < n; i++)
            if (strncmp(p, keys[i], strlen(keys[i])) == 0)
                break;
        if (i < n) {
            sb_puts(&sb, vals[i]);
            p += strlen(keys[i]);
        } else {
            sb_putc(&sb, *p++);
        }
    }
    return sb_steal(&sb);
}

/* Contract: DIR made (with missing parents) or found empty. Returns 0; 2
 * with a message when it holds anything; 3 when it cannot be made. */
static int empty_dir(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
        fprintf(stderr, "lockstorm: adapter init: %s: path too long\n", dir);
        return 2;
    }
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "lockstorm: error: adapter init: create %s: %s\n", path,
                    strerror(errno));
            return 3;
        }
        *p = '/';
    }
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "lockstorm: error: adapter init: create %s: %s\n", dir, strerror(errno));
        return 3;
    }
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "lockstorm: error: adapter init: %s: %s; give a directory\n", dir,
                strerror(errno));
        return 3;
    }
    int used = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            used = 1;
    closedir(d);
    if (used) {
        fprintf(stderr, "lockstorm: adapter init: %s is not empty; give a new or empty "
                        "directory (nothing was written)\n", dir);
        return 2;
    }
    return 0;
}

/* Contract: writes text to DIR/name (new file, mode). Returns 0 or 3. */
static int write_new(const char *dir, const char *name, const char *text, mode_t mode)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    size_t len = strlen(text), off = 0;
    while (fd >= 0 && off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    if (fd < 0 || off < len || close(fd) != 0) {
        fprintf(stderr, "lockstorm: error: adapter init: write %s: %s\n", path, strerror(errno));
        if (fd >= 0 && off < len)
            close(fd);
        return 3;
    }
    return 0;
}

static int init_usage(const char *msg)
{
    fprintf(stderr, "lockstorm: adapter: %s; usage: lockstorm adapter init node|python DIR "
                    "(see 'lockstorm help adapter')\n", msg);
    return 2;
}

static int adapter_init(const char *lang, const char *dir)
{
    int node = strcmp(lang, "node") == 0;
    if (!node && strcmp(lang, "python") != 0)
        return init_usage("init: the language is node or python");
    char adapters[PATH_MAX], sdk[PATH_MAX + 32];
    struct stat st;
    if (find_adapters(adapters) != 0) {
        fprintf(stderr, "lockstorm: error: adapter init: the bundled adapters directory (the "
                        "SDK) is not next to this lockstorm binary; run the lockstorm of a "
                        "checkout or an installed package\n");
        return 3;
    }
    snprintf(sdk, sizeof(sdk), "%s/%s", adapters,
             node ? "node/sdk" : "python/lockstorm_adapter.py");
    if (stat(sdk, &st) != 0) {
        fprintf(stderr, "lockstorm: error: adapter init: the SDK %s is missing; reinstall "
                        "lockstorm or update the checkout\n", sdk);
        return 3;
    }
    if (!node)
        snprintf(sdk, sizeof(sdk), "%s/python", adapters);
    const char *file = node ? "adapter.js" : "adapter.py";
    const char *command = node ? "[node, adapter.js]      # relative to this file's directory"
                               : "[/usr/bin/python3, adapter.py]   # relative to this file's "
                                 "directory (python3-redis is installed for /usr/bin/python3)";
    char wlpath[PATH_MAX];
    snprintf(wlpath, sizeof(wlpath), "%s/workload.yaml", dir);
    const char *wkeys[] = {"@FILE@", "@ADAPTER@", "@LANG@", "@COMMAND@"};
    const char *wvals[] = {"workload.yaml", file, lang, command};
    char *workload = fill(WORKLOAD, wkeys, wvals, 4);
    /* the workload must load before anything is written */
    struct workload *w = NULL;
    struct ls_err err = {0};
    int rc = workload_load_string(wlpath, workload, NULL, 0, &w, NULL, &err);
    workload_free(w);
    if (rc != 0) {
        fprintf(stderr, "lockstorm: error: adapter init: the workload does not load in this "
                        "build: %s\n", err.msg);
        free(workload);
        return 3;
    }
    rc = empty_dir(dir);
    const char *skeys[] = {"@SDK@", "@PYSDK@", "@IOREDIS@"};
    const char *svals[] = {sdk, sdk, IOREDIS_VERSION};
    char *adapter = fill(node ? NODE_ADAPTER : PY_ADAPTER, skeys, svals, 3);
    char *package = node ? fill(PACKAGE_JSON, skeys, svals, 3) : NULL;
    if (rc == 0)
        rc = write_new(dir, file, adapter, 0755);
    if (rc == 0 && node)
        rc = write_new(dir, "package.json", package, 0644);
    if (rc == 0)
        rc = write_new(dir, "workload.yaml", workload, 0644);
    free(workload);
    free(adapter);
    free(package);
    if (rc != 0)
        return rc;
    printf("lockstorm: wrote %s, %sworkload.yaml in %s (sample lock: SET NX PX, "
           "compare-and-delete)\nnext:\n", file, node ? "package.json, " : "", dir);
    printf("  cd %s\n", dir);
    if (node)
        printf("  npm install                                 # the SDK (from %s) and "
               "ioredis\n", sdk);
    printf("  lockstorm adapter-test -- %-17s # the protocol, in seconds\n",
           node ? "node adapter.js" : "/usr/bin/python3 adapter.py");
    printf("  lockstorm run workload.yaml                 # the verdict under faults\n");
    printf("then put your lock between the YOUR LOCK markers of %s\n", file);
    return 0;
}

int adapter_cli_main(int argc, char **argv)
{
    if (argc < 1)
        return init_usage("a subcommand is needed");
    if (strcmp(argv[0], "init") != 0)
        return init_usage("unknown subcommand");
    if (argc != 3)
        return init_usage(argc < 3 ? "init needs a language and a DIR" : "init: too many arguments");
    if (argv[2][0] == '\0')
        return init_usage("init: DIR is empty");
    return adapter_init(argv[1], argv[2]);
}
