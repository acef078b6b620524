/*
 * cli_help.c: lockstorm's command table and everything printed from it
 * (see cli_help.h). To add a command: add a row to `commands` (its
 * synopsis lines, summary, description and options), dispatch it in
 * harness/main.c, then regenerate docs/lockstorm.1 and
 * contrib/lockstorm.bash-completion (`lockstorm help --man`, `lockstorm
 * help --bash-completion`); tests/e2e/test_cli.sh fails until both match.
 */
#include "harness/cli_help.h"

#include <hiredis/hiredis.h>
#include <limits.h>
#include <string.h>
#include <yaml.h>

#include "harness/cli_init.h"
#include "util/clockctl.h"
#include "util/err.h"
#include "util/json.h"
#include "util/strbuf.h"

#ifdef __clang__
#define COMPILER "clang"
#else
#define COMPILER "gcc"
#endif

#ifndef LS_BUILD_TYPE
#define LS_BUILD_TYPE "unknown"
#endif

struct cli_opt {
    const char *flag;   /* "--out", or "--quiet, -q" */
    const char *arg;    /* "DIR", or NULL for a switch */
    const char *help;
    const char *values; /* completion: space-separated choices; "@dir" / "@file" */
};

struct cli_cmd {
    const char *name;
    const char *synopsis[4];  /* after "lockstorm " */
    const char *summary;      /* one line */
    const char *description;  /* paragraphs separated by '\n' */
    const struct cli_opt *opts;
    const char *positional;   /* completion of positional words: "@workload", "@dir", a list */
};

#define O_FORMAT {"--format", "LIST", "reports to write, comma-separated: text, json, junit, " \
                  "charts, html, md (or markdown), or all (summary.txt, result.json, junit.xml, " \
                  "*.svg, report.html, summary.md)", "text json junit charts html md markdown all"}
#define O_CHECK_JOBS {"--jobs, -j", "N", "threads of the checkers' pass (1..256; default one " \
                      "per usable CPU, at most 4; the result is the same for every N)", NULL}
#define O_JSON {"--json", NULL, "print the result model (the document result.json holds) on " \
                "stdout instead of the text summary", NULL}
#define O_QUIET {"--quiet, -q", NULL, "print only the result (no progress, no file list)", NULL}
#define O_QUIET_VERDICT {"--quiet, -q", NULL, "print only the verdict line on stdout (no " \
                         "summary, progress or file list; errors still go to stderr; --json and " \
                         "--md still print their document)", NULL}
#define O_MD {"--md", NULL, "print the Markdown summary (the text of summary.md: verdict, " \
              "evidence, incidents, expectations, first story of each class) on stdout instead " \
              "of the text summary, e.g. >> $GITHUB_STEP_SUMMARY", NULL}
#define O_SET {"--set", "KEY.PATH=VALUE", "override one workload key before validation (any " \
               "number; e.g. --set lock.ttl=500ms, --set 'faults[0].at=2s')", NULL}
#define O_HELP {"--help, -h", NULL, "print this help", NULL}
#define O_END {NULL, NULL, NULL, NULL}

static const struct cli_opt run_opts[] = {
    {"--out", "DIR", "the run directory (created; refused if it exists and is not empty); "
                     "default runs/NAME-UTCTIME/ with runs/latest pointing at it", "@dir"},
    {"--seed", "N", "override the workload's seed (everything random derives from it)", NULL},
    O_SET,
    {"--replay", "RUN_DIR", "run RUN_DIR/workload.yaml again with the nemesis schedule that run "
                            "drew (RUN_DIR/nemesis.yaml) instead of drawing one", "@dir"},
    O_FORMAT,
    {"--progress", "MODE", "progress on stderr: auto (a live line on a terminal, else none), "
                           "plain (one line per second, for CI logs) or off", "auto plain off"},
    O_JSON, O_MD, O_QUIET_VERDICT, O_HELP, O_END,
};
static const struct cli_opt check_opts[] = {
    {"--history", "FILE.jsonl", "check a history made elsewhere (the JSONL of `lockstorm log "
                                "export`) instead of a run directory", "@file"},
    {"--capacity", "N", "holds allowed at once per resource (1 = mutex; N = semaphore)", NULL},
    {"--near-miss", "DURATION", "a next enter within this of the previous exit is a near miss",
     NULL},
    {"--out", "DIR", "with --history and --format: where the report files go", "@dir"},
    O_CHECK_JOBS, O_FORMAT, O_JSON, O_MD, O_QUIET_VERDICT, O_HELP, O_END,
};
static const struct cli_opt report_opts[] = {O_CHECK_JOBS, O_FORMAT, O_QUIET, O_HELP, O_END};
static const struct cli_opt validate_opts[] = {
    O_SET,
    {"--reference", NULL, "print the workload reference (every key, type, default, range) as "
                          "markdown: docs/workload-reference.md", NULL},
    O_HELP, O_END,
};
static const struct cli_opt init_opts[] = {
    {"--scenario", "NAME", "the starter to write (default correct-lock); `lockstorm init --list` "
                           "names them", "@scenario"},
    {"--force", NULL, "overwrite FILE if it exists", NULL},
    {"--list", NULL, "list the scenarios and whether each loads in this build", NULL},
    O_HELP, O_END,
};
static const struct cli_opt help_opts[] = {
    {"--man", NULL, "print the man page (roff): docs/lockstorm.1", NULL},
    {"--bash-completion", NULL, "print the bash completion script", NULL},
    O_HELP, O_END,
};
static const struct cli_opt version_opts[] = {
    {"--json", NULL, "print the version and build information as one JSON object "
                     "(format lockstorm-version, version 1)", NULL},
    O_HELP, O_END,
};
static const struct cli_opt adapter_test_opts[] = {
    {"--nodes", "N", "lock nodes of the scratch cluster (default 1)", NULL},
    {"--options", "JSON", "the hello options handed to the adapter (default {})", NULL},
    {"--keep", NULL, "keep the scratch directory (node logs, adapter stderr)", NULL},
    O_HELP, O_END,
};
static const struct cli_opt sweep_opts[] = {
    {"--out", "DIR", "the sweep directory (one run directory per cell under it)", "@dir"},
    {"--jobs, -j", "N", "cells run at once (1..256)", NULL},
    {"--report", "SWEEP_DIR", "rebuild the report of a sweep directory without running anything",
     "@dir"},
    {"--progress", "MODE", "progress on stderr: auto, plain or off", "auto plain off"},
    O_JSON, O_QUIET, O_HELP, O_END,
};
static const struct cli_opt stress_opts[] = {
    {"--seeds", "N", "runs of the stress phase, seeds S, S+1, ... (default 10)", NULL},
    {"--time", "DURATION", "instead of --seeds: start runs until this much time has passed",
     NULL},
    {"--until", "CLASS", "stop at the first run that shows CLASS (lock_broken, stale_holder, "
                         "fenced_lost_updates, duplicates, ..., a checker's name such as mutex "
                         "or fencing, or fail); default: the first FAIL verdict",
     "lock_broken stale_holder fenced_lost_updates fence_regressions renewed_after_loss "
     "duplicates extra_effects plain_lost_updates missed stuck_resources "
     "crashes_without_next_grant mutex fencing liveness stats jobs commands fail"},
    {"--jobs, -j", "N", "runs at once (1..256; default max(1, cores / 2))", NULL},
    {"--out", "DIR", "the stress directory (created; refused if it exists and is not empty); "
                     "default runs/stress-NAME-UTCTIME/", "@dir"},
    {"--seed", "N", "the first seed (default: the workload's seed)", NULL},
    O_SET,
    {"--tries", "N", "runs of each reduction candidate, stopping at the first that shows the "
                     "class (1..20, default 3)", NULL},
    {"--confirm", "N", "runs of reduced.yaml itself once written, all counted in its header "
                       "(0..20, default 3)", NULL},
    {"--max-runs", "N", "budget of reduction runs (default 40; 0: do not reduce)", NULL},
    {"--reduce-time", "DURATION", "time budget of the reduction (default 15m)", NULL},
    {"--min-duration", "DURATION", "the shortest duration a candidate is cut to (default 1s)",
     NULL},
    {"--format", "LIST", "reports each run writes (default json,text; json is always added)",
     "text json junit charts html md markdown all"},
    O_QUIET, O_HELP, O_END,
};
static const struct cli_opt compare_opts[] = {
    {"--json", NULL, "print the comparison document (compare.json) instead of the tables", NULL},
    {"--format", "LIST", "with --out: the files to write (compare.txt and compare.json always; "
                         "md: compare.md, html: compare.html); without: what stdout gets, one of "
                         "text, json, md, html", "text json md html"},
    {"--out", "DIR", "write compare.txt, compare.json and the --format files into DIR", "@dir"},
    {"--quiet, -q", NULL, "print only the conclusion lines (one per fault kind, then the whole "
                          "run)", NULL},
    O_HELP, O_END,
};
static const struct cli_opt help_only[] = {O_HELP, O_END};

static const struct cli_cmd commands[] = {
    {"run",
     {"run WORKLOAD [--out DIR] [--seed N] [--set KEY.PATH=VALUE]... [--format LIST] "
      "[--progress MODE] [--json|--md] [--quiet]",
      "run --replay RUN_DIR [--out DIR] [--set KEY.PATH=VALUE]... [--json|--md] [--quiet]"},
     "run a workload and print its verdict",
     "WORKLOAD is a .yaml file or the name of a bundled workload (`lockstorm list workloads`); a "
     "directory runs every workload in it, one line per workload (a suite, e.g. "
     "workloads/stories/). "
     "The harness starts its own redis-server nodes on free loopback ports (or, with "
     "cluster.topology external, uses the servers at cluster.addresses), runs the worker "
     "processes for the workload's duration while it injects the faults, then replays the event "
     "logs through the checkers and writes the run directory: workload.yaml, events/, "
     "faults.jsonl, result.json, summary.txt, summary.md, junit.xml, report.html and charts.\n"
     "The text summary on stdout ends with one greppable verdict line, `lockstorm: PASS` (or "
     "FAIL or UNKNOWN) followed by key=value fields; --quiet prints that line alone, --md the "
     "Markdown summary (for $GITHUB_STEP_SUMMARY and pull-request comments). With an expect: "
     "block the run passes "
     "exactly when every expectation holds; without one, when no checker found a violation.\n"
     "A workload with a compare: block runs once per variant (the same seed and schedule, "
     "another lock) into sibling run directories under --out DIR, and prints the table of "
     "`lockstorm compare` (docs/compare.md).\n"
     "WORKLOAD may also be a directory: every *.yaml in it runs in turn (each into --out "
     "DIR/NAME), one line per scenario, then a count; workloads/stories/ is the suite of the "
     "reference articles' stories (docs/stories.md).",
     run_opts, "@workload"},
    {"check",
     {"check RUN_DIR [--jobs N] [--format LIST] [--json|--md] [--quiet]",
      "check --history FILE.jsonl [--capacity N] [--near-miss DURATION] [--out DIR] "
      "[--jobs N] [--format LIST] [--json|--md] [--quiet]"},
     "re-check a run directory (or a history made elsewhere) offline",
     "Replays the event logs of RUN_DIR through the checkers and prints the verdict; the "
     "checkers read only the directory, so a copied run directory gives the same verdict on "
     "another machine. With --format it also rewrites the named report files. The pass "
     "over the logs runs on --jobs threads (default: one per usable CPU, at most 4; a history under "
     "100,000 events on one); result.json is the same byte for byte for every N.",
     check_opts, "@dir"},
    {"report",
     {"report RUN_DIR [--jobs N] [--format LIST] [--quiet]"},
     "rewrite the report files of a run directory",
     "Checks RUN_DIR again and rewrites its reports (all of them, or those --format names): "
     "summary.txt, summary.md, result.json, junit.xml, the gnuplot charts and report.html. The "
     "exit status "
     "is the run's verdict.",
     report_opts, "@dir"},
    {"validate",
     {"validate WORKLOAD [--set KEY.PATH=VALUE]...", "validate --reference"},
     "check a workload file and print it fully resolved",
     "Loads WORKLOAD exactly as run would, reports every error as FILE:LINE:COL (exit 2), or "
     "prints the resolved workload with every default filled in. Nothing is started.",
     validate_opts, "@workload"},
    {"sweep",
     {"sweep SWEEP.yaml [--out DIR] [--jobs N] [--progress MODE] [--json] [--quiet]",
      "sweep --report SWEEP_DIR"},
     "run a matrix of runs of one workload (TTL tuning)",
     "A sweep file names a base workload and axes of values (e.g. lock.ttl against "
     "faults[0].duration), each cell run `repeats` times as its own `lockstorm run` into its "
     "own run directory under the sweep directory, several at once. The report recommends the "
     "smallest safe TTL and shows what it costs (docs/sweep.md).",
     sweep_opts, "@file"},
    {"stress",
     {"stress WORKLOAD [--seeds N | --time DURATION] [--until CLASS] [--jobs N] [--out DIR] "
      "[--set KEY.PATH=VALUE]... [--quiet]"},
     "run a workload over seeds until it fails, then reduce the failing workload",
     "Runs WORKLOAD with seeds S, S+1, ... (each its own `lockstorm run` into DIR/runs/seed-N, "
     "several at once) and stops at the first run whose verdict is FAIL, or with --until at the "
     "first that shows that class; runs still going are stopped by pid. Then it reduces the "
     "failing workload: candidates one change smaller (half the duration, a fault left out, "
     "fewer workers, resources or fault occurrences) each run up to --tries times on the "
     "reproducing seed and its neighbours, the first that shows the class again accepted, "
     "until none does or the budget is spent. It writes DIR/reduced.yaml (a workload `lockstorm "
     "run` loads, its header naming what it was reduced from, the class and the evidence) and "
     "DIR/stress.json (every run and every reduction step), and prints a summary "
     "(docs/stress.md).\n"
     "Exit status: 1 a run failed (reduced or not), 0 no run failed and every run was judged "
     "(no failure in N runs is not a proof), 2 bad input (nothing started), 3 a run could not "
     "run, 4 no run failed but some could not be judged (UNKNOWN), 128 + N when stopped by "
     "signal N (130 SIGINT, 143 SIGTERM; the runs are stopped by pid and stress.json keeps "
     "what is known).",
     stress_opts, "@workload"},
    {"compare",
     {"compare RUN_DIR... [--json | --format FMT | -q] [--out DIR [--format LIST]]"},
     "print several runs side by side (single-node vs Redlock)",
     "One row per run directory, read from its result.json: what its checkers found (clean, "
     "violations, or unknown with the reason on a line under the table), grants/s, acquire "
     "p99, mutex violations by class, plain and fenced lost updates, fence regressions, unknown "
     "outcomes; then one column group per fault kind from the runs' fault windows. Meant for "
     "runs of the same workload, seed and fault schedule with different locks: a workload with "
     "a compare: block makes them in one `lockstorm run` (docs/compare.md). A warning says when "
     "the runs' seeds or schedules differ. The text fits 100 columns (wide tables are split) and "
     "ends with a conclusion per fault kind made from the counts alone (\"under kill: "
     "redis-single lock-broken 2; redlock-3, redlock-5 clean\"; unknown where a run is).\n"
     "A comparison is a report, not a gate: violations in a row are what it is there to show. "
     "Its exit status is 0 when every run was judged (clean or violations), 4 when some run is "
     "unknown (evidence missing, no fault took effect, a checker could not decide), 2 when a "
     "directory has no readable result.json. To gate CI, give the workload an expect: block "
     "and use `lockstorm run`.",
     compare_opts, "@dir"},
    {"init",
     {"init [--scenario NAME] [--force] [FILE]", "init --list"},
     "write a commented starter workload",
     "Writes a starter workload for a scenario to FILE (default: the scenario's name with "
     ".yaml, in the current directory), with a comment on every key, loaded once before it is "
     "written so that it is known to load. A scenario that needs a feature this build does not "
     "have is refused with the reason, and nothing is written. Without --scenario it writes "
     "correct-lock: a correct lock under holder pauses that passes its expect: block. The "
     "starter's header names its own file and the command that runs it.",
     init_opts, NULL},
    {"list",
     {"list [locks|faults|workloads]"},
     "list lock implementations, fault kinds and bundled workloads",
     "Prints each lock implementation with its capabilities, each fault kind with its targets "
     "and options, and each bundled workload with its description; all three without an "
     "argument.",
     help_only, "locks faults workloads"},
    {"log",
     {"log export RUN_DIR"},
     "print every event of a run as JSONL",
     "Prints the merged event history of RUN_DIR, one JSON object per line, times in ns since "
     "the run start; `lockstorm check --history` reads the same format.",
     help_only, "export"},
    {"adapter-test",
     {"adapter-test [--nodes N] [--options JSON] [--keep] -- COMMAND [ARGS...]"},
     "check a lock adapter against the adapter protocol",
     "Starts COMMAND (no shell) on a scratch cluster of its own and checks it against the "
     "adapter protocol (docs/protocol.md): handshake, grant, busy, release, "
     "release with a stale token, renew, unknown op, garbage input. One pass/fail line per "
     "check; the exit status is 1 when any check fails.",
     adapter_test_opts, "@file"},
    {"adapter",
     {"adapter init node|python DIR"},
     "write an adapter skeleton for your own lock, and a workload that runs it",
     "Writes into DIR (new or empty) a working adapter on this checkout's SDK (Node: adapter.js "
     "and a package.json depending on adapters/node/sdk by path; Python: adapter.py on "
     "adapters/python/lockstorm_adapter.py) around a sample lock (SET NX PX, compare-and-delete, "
     "compare-and-pexpire), with a marked place for your own lock calls, and workload.yaml, "
     "which runs it under holder pauses and passes for a correct lock. Prints the commands to "
     "run next. A DIR that is not empty is refused (exit 2) and nothing is written. Quick "
     "start: docs/adapters.md.",
     help_only, "init"},
    {"get",
     {"get RUN_DIR|FILE.json PATH..."},
     "print values of result.json by JSON path (for scripts)",
     "Prints one line per PATH (e.g. checks.mutex.violations, verdict): strings raw, other "
     "values as compact JSON, null when absent. The exit status is 1 when any PATH is absent.",
     help_only, "@dir"},
    {"help",
     {"help [COMMAND]", "help --man", "help --bash-completion"},
     "print help for lockstorm or one of its commands",
     "`lockstorm COMMAND --help` prints the same as `lockstorm help COMMAND`.",
     help_opts, "@command"},
    {"version",
     {"version [--json]"},
     "print the version, build and library versions",
     "Also `lockstorm --version`. The JSON form is stable: format lockstorm-version, version 1.",
     version_opts, NULL},
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char EXIT_CODES[] =
    "0 pass; 1 fail; 2 usage or workload error (nothing was started); 3 environment error "
    "(redis-server missing, a node unreachable, port exhaustion); 4 unknown verdict (a checker "
    "could not decide)";

static const struct cli_cmd *find_cmd(const char *name)
{
    for (size_t i = 0; name && i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

int cli_is_command(const char *cmd)
{
    return find_cmd(cmd) != NULL;
}

int cli_wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "--set") == 0) {
            i++;
            continue;
        }
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    }
    return 0;
}

/* ---- plain text -------------------------------------------------------- */

/* Contract: text (one paragraph, no newlines) word-wrapped at 79 columns,
 * every line indented by indent spaces, the first line by first (so a
 * caller can start it after a label). Backquotes are dropped. */
static void wrap(FILE *out, const char *text, size_t len, int indent, int first)
{
    int col = first;
    fprintf(out, "%*s", first, "");
    const char *p = text, *end = text + len;
    int line_empty = 1;
    while (p < end) {
        while (p < end && *p == ' ')
            p++;
        const char *w = p;
        while (p < end && *p != ' ')
            p++;
        int n = (int)(p - w), shown = n;
        for (const char *q = w; q < p; q++)
            shown -= *q == '`';
        if (!n)
            break;
        if (!line_empty && col + 1 + shown > 79) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
            line_empty = 1;
        }
        if (!line_empty) {
            fputc(' ', out);
            col++;
        }
        for (const char *q = w; q < p; q++)
            if (*q != '`')
                fputc(*q, out);
        col += shown;
        line_empty = 0;
    }
    fputc('\n', out);
}

static void wrap_paragraphs(FILE *out, const char *text, int indent)
{
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        wrap(out, p, len, indent, indent);
        p += len;
        if (*p == '\n') {
            p++;
            fputc('\n', out);
        }
    }
}

void cli_usage(FILE *out)
{
    fprintf(out, "usage: lockstorm COMMAND [ARGS]\n\n"
                 "lockstorm runs worker processes against a distributed lock while it\n"
                 "injects faults, then checks their event logs for mutual-exclusion\n"
                 "violations.\n\n"
                 "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-13s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nsynopsis:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        for (int k = 0; k < 4 && commands[i].synopsis[k]; k++)
            wrap(out, commands[i].synopsis[k], strlen(commands[i].synopsis[k]), 6, 2);
    fprintf(out, "\n'lockstorm help COMMAND' or 'lockstorm COMMAND --help' explains one "
                 "command;\n'man lockstorm' has them all; docs/getting-started.md starts "
                 "from zero.\n\nexit codes:\n");
    wrap(out, EXIT_CODES, strlen(EXIT_CODES), 2, 2);
}

int cli_help_command(const char *cmd, FILE *out, FILE *err)
{
    const struct cli_cmd *c = find_cmd(cmd);
    if (!c) {
        fprintf(err, "lockstorm: help: unknown command '%s'; commands:", cmd ? cmd : "");
        for (size_t i = 0; i < NCOMMANDS; i++)
            fprintf(err, " %s", commands[i].name);
        fprintf(err, "\n");
        return 2;
    }
    fprintf(out, "usage:\n");
    for (int k = 0; k < 4 && c->synopsis[k]; k++) {
        char line[512];
        snprintf(line, sizeof(line), "lockstorm %s", c->synopsis[k]);
        wrap(out, line, strlen(line), 6, 2);
    }
    fprintf(out, "\n");
    wrap(out, c->summary, strlen(c->summary), 0, 0);
    fprintf(out, "\n");
    wrap_paragraphs(out, c->description, 0);
    if (c->opts && c->opts->flag) {
        fprintf(out, "\noptions:\n");
        for (const struct cli_opt *o = c->opts; o->flag; o++) {
            char head[96];
            snprintf(head, sizeof(head), "%s%s%s", o->flag, o->arg ? " " : "",
                     o->arg ? o->arg : "");
            fprintf(out, "  %s\n", head);
            wrap(out, o->help, strlen(o->help), 6, 6);
        }
    }
    fprintf(out, "\nexit codes:\n");
    wrap(out, EXIT_CODES, strlen(EXIT_CODES), 2, 2);
    return 0;
}

/* ---- man page ---------------------------------------------------------- */

/* Contract: s as roff text: backslashes escaped, '-' as \-, backquoted
 * spans in bold, a leading '.' or '\'' protected. */
static void roff(FILE *out, const char *s, size_t len)
{
    int bold = 0;
    if (len && (s[0] == '.' || s[0] == '\''))
        fputs("\\&", out);
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if (ch == '\\')
            fputs("\\e", out);
        else if (ch == '-')
            fputs("\\-", out);
        else if (ch == '`')
            fputs((bold = !bold) ? "\\fB" : "\\fR", out);
        else
            fputc(ch, out);
    }
    if (bold)
        fputs("\\fR", out);
}

static void roff_line(FILE *out, const char *s)
{
    roff(out, s, strlen(s));
    fputc('\n', out);
}

static void roff_paragraphs(FILE *out, const char *text)
{
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        roff(out, p, len);
        fputc('\n', out);
        p += len;
        if (*p == '\n') {
            p++;
            fputs(".PP\n", out);
        }
    }
}

static void print_man(FILE *out)
{
    fprintf(out, ".\\\" generated by `lockstorm help --man` from harness/cli_help.c; do not edit\n");
    fprintf(out, ".TH LOCKSTORM 1 \"\" \"lockstorm %s\" \"User Commands\"\n", LS_VERSION);
    fputs(".SH NAME\nlockstorm \\- verification and chaos\\-testing harness for distributed locks\n",
          out);
    fputs(".SH SYNOPSIS\n", out);
    for (size_t i = 0; i < NCOMMANDS; i++)
        for (int k = 0; k < 4 && commands[i].synopsis[k]; k++) {
            fputs(".B lockstorm\n", out);
            roff_line(out, commands[i].synopsis[k]);
            fputs(".br\n", out);
        }
    fputs(".SH DESCRIPTION\n", out);
    roff_paragraphs(out,
                    "lockstorm hammers a lock (Redis SET NX PX with a Lua release, Redlock, "
                    "deliberately broken variants, or a library in another language through an "
                    "adapter) with worker processes under a YAML workload while it injects "
                    "faults: pauses of the holder, kills, network latency and partitions through "
                    "its own TCP proxy. Every worker writes a timestamped event log; checkers "
                    "replay the logs and report each mutual-exclusion violation as stale-holder "
                    "(the holder overstayed its lease) or lock-broken (the lock was granted "
                    "twice), lost updates with and without fencing tokens, and liveness.\n"
                    "Start with `lockstorm run demo`, or `lockstorm init` to write a workload of "
                    "your own.");
    fputs(".SH COMMANDS\n", out);
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const struct cli_cmd *c = &commands[i];
        fprintf(out, ".SS %s\n", c->name);
        for (int k = 0; k < 4 && c->synopsis[k]; k++) {
            fputs(".B lockstorm\n", out);
            roff_line(out, c->synopsis[k]);
            fputs(".br\n", out);
        }
        fputs(".PP\n", out);
        roff_line(out, c->summary);
        fputs(".PP\n", out);
        roff_paragraphs(out, c->description);
        for (const struct cli_opt *o = c->opts; o && o->flag; o++) {
            fputs(".TP\n.B ", out);
            roff(out, o->flag, strlen(o->flag));
            if (o->arg) {
                fputs(" \\fI", out);
                roff(out, o->arg, strlen(o->arg));
                fputs("\\fR", out);
            }
            fputc('\n', out);
            roff_line(out, o->help);
        }
    }
    fputs(".SH EXIT STATUS\n", out);
    roff_line(out, EXIT_CODES);
    fputs(".SH ENVIRONMENT\n.TP\n.B NO_COLOR\n", out);
    roff_line(out, "lockstorm prints no colour, with or without it. The live progress line (only "
                   "when stderr is a terminal) redraws itself with a carriage return and an "
                   "erase-line sequence; --progress plain or off avoids even that.");
    fputs(".TP\n.B " LS_CLOCKSHIM_ENV "\n", out);
    roff_line(out, "where the clock shim of clock faults is (default: " LS_CLOCKSHIM_NAME
                   " next to the binary, else ../lib/lockstorm/ of it).");
    static const char *const env[][2] = {
        {"TMPDIR", "where check --history spills a JSONL history past 32 MB of records, "
                   "packed, in a file without a name (default /tmp); a history of up to 96 "
                   "MB spills into memory first, and here once its packed records pass 12 MB. "
                   "Also where adapter-test makes its scratch directory."},
        {"LS_GNUPLOT", "the gnuplot program the reports' charts are drawn with (default: "
                       "gnuplot in PATH)."},
        {"LS_PG_BINDIR", "where initdb and postgres are, for cluster.topology: postgres "
                         "(default: the newest /usr/lib/postgresql/N/bin)."},
        {"LS_PG_USER", "the user the PostgreSQL server runs as when lockstorm runs as root "
                       "(default: postgres, else nobody)."},
        {"LS_LIBPQ", "the libpq file loaded at the first PostgreSQL connection (default: the "
                     "system's libpq.so.5)."},
        {"LS_CHECK_READ", "map: the checkers' pass reads the event logs through their "
                          "mappings instead of with pread (the same result; for comparing "
                          "the two)."},
        {"LS_JSONL_READ", "read: a JSONL history is read into a buffer instead of where it is "
                          "mapped (the same result; the way a file that cannot be mapped is "
                          "read, for the tests)."},
    };
    for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
        fprintf(out, ".TP\n.B %s\n", env[i][0]);
        roff_line(out, env[i][1]);
    }
    fputs(".SH FILES\n.TP\n.I PREFIX/share/lockstorm/workloads/\n", out);
    roff_line(out, "bundled workloads, run by name (found relative to the binary).");
    fputs(".TP\n.I PREFIX/lib/lockstorm/" LS_CLOCKSHIM_NAME "\n", out);
    roff_line(out, "the clock shim preloaded into redis-server for clock faults.");
    fputs(".TP\n.I runs/NAME\\-UTCTIME/\n", out);
    roff_line(out, "run directories, under the current directory unless --out names one; "
                   "runs/latest points at the newest.");
    fputs(".SH EXAMPLES\n.nf\n", out);
    static const char *const ex[] = {
        "lockstorm run demo",
        "lockstorm init my-lock.yaml",
        "lockstorm run my-lock.yaml --out run1 --progress plain",
        "lockstorm get run1 verdict checks.mutex.violations",
        "lockstorm check run1 --json",
        NULL};
    for (int i = 0; ex[i]; i++)
        roff_line(out, ex[i]);
    fputs(".fi\n.SH SEE ALSO\n", out);
    roff_line(out, "redis-server(1); the documentation in PREFIX/share/doc/lockstorm/: "
                   "getting-started.md, workloads.md, workload-reference.md, faults.md, "
                   "checkers.md, reports.md, result-format.md, ci.md, docker.md, faq.md.");
}

/* ---- bash completion --------------------------------------------------- */

static void print_words(FILE *out, const char *values)
{
    if (strcmp(values, "@dir") == 0)
        fputs("_lockstorm_dirs", out);
    else if (strcmp(values, "@file") == 0)
        fputs("_lockstorm_files", out);
    else if (strcmp(values, "@workload") == 0)
        fputs("_lockstorm_workloads", out);
    else if (strcmp(values, "@command") == 0)
        fputs("_lockstorm_words \"$commands\"", out);
    else if (strcmp(values, "@scenario") == 0) {
        fputs("_lockstorm_words \"", out);
        const char *const *sc = cli_init_scenarios();
        for (int i = 0; sc[i]; i++)
            fprintf(out, "%s%s", i ? " " : "", sc[i]);
        fputs("\"", out);
    } else {
        fprintf(out, "_lockstorm_words \"%s\"", values);
    }
}

/* Contract: the flag's first spelling ("--quiet, -q" -> "--quiet") and
 * the rest, written space-separated. */
static void print_flags(FILE *out, const char *flag)
{
    for (const char *p = flag; *p; p++)
        fputc(*p == ',' ? ' ' : *p, out);
}

static void print_completion(FILE *out)
{
    fputs("# bash completion for lockstorm\n"
          "# generated by `lockstorm help --bash-completion` from harness/cli_help.c; do not "
          "edit\n"
          "_lockstorm_add() { mapfile -t -O \"${#COMPREPLY[@]}\" COMPREPLY; }\n"
          "_lockstorm_words() { _lockstorm_add < <(compgen -W \"$1\" -- \"$cur\"); }\n"
          "_lockstorm_dirs() { _lockstorm_add < <(compgen -d -- \"$cur\"); }\n"
          "_lockstorm_files() { _lockstorm_add < <(compgen -f -- \"$cur\"); }\n"
          "_lockstorm_workloads() {\n"
          "    _lockstorm_add < <(compgen -f -X '!*.y*ml' -- \"$cur\"; compgen -d -- \"$cur\")\n"
          "    local names\n"
          "    names=$(\"${COMP_WORDS[0]}\" list workloads 2>/dev/null | awk 'NR > 1 {print $1}')\n"
          "    _lockstorm_words \"$names\"\n"
          "}\n"
          "_lockstorm() {\n"
          "    local cur prev cmd i\n"
          "    COMPREPLY=()\n"
          "    cur=${COMP_WORDS[COMP_CWORD]}\n"
          "    prev=${COMP_WORDS[COMP_CWORD-1]}\n",
          out);
    fputs("    local commands=\"", out);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "%s%s", i ? " " : "", commands[i].name);
    fputs("\"\n"
          "    cmd=\n"
          "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
          "        case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac\n"
          "    done\n"
          "    if [ -z \"$cmd\" ]; then\n"
          "        _lockstorm_words \"$commands --help --version\"\n"
          "        return 0\n"
          "    fi\n"
          "    case $cmd in\n",
          out);
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const struct cli_cmd *c = &commands[i];
        fprintf(out, "    %s)\n        case $prev in\n", c->name);
        for (const struct cli_opt *o = c->opts; o && o->flag; o++) {
            if (!o->arg)
                continue;
            fputs("        ", out);
            for (const char *q = o->flag; *q; q++) /* "--a, -b" -> "--a|-b" */
                if (*q != ' ')
                    fputc(*q == ',' ? '|' : *q, out);
            fputs(") ", out);
            if (o->values)
                print_words(out, o->values);
            else
                fputc(':', out); /* a value nobody can guess: offer nothing */
            fputs("; return 0 ;;\n", out);
        }
        fputs("        esac\n        if [[ $cur == -* ]]; then\n            _lockstorm_words \"",
              out);
        for (const struct cli_opt *o = c->opts; o && o->flag; o++) {
            if (o != c->opts)
                fputc(' ', out);
            print_flags(out, o->flag);
        }
        fputs("\"\n", out);
        if (c->positional) {
            fputs("        else\n            ", out);
            print_words(out, c->positional);
            fputc('\n', out);
        }
        fputs("        fi ;;\n", out);
    }
    fputs("    esac\n"
          "    return 0\n"
          "}\n"
          "complete -o filenames -F _lockstorm lockstorm\n",
          out);
}

int cli_help_main(int argc, char **argv, FILE *out, FILE *err)
{
    if (argc == 0) {
        cli_usage(out);
        return 0;
    }
    if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)
        return cli_help_command("help", out, err); /* lockstorm help --help */
    if (argc > 1) {
        fprintf(err, "lockstorm: help takes one COMMAND, --man or --bash-completion; see "
                     "'lockstorm --help'\n");
        return 2;
    }
    if (strcmp(argv[0], "--man") == 0) {
        print_man(out);
        return 0;
    }
    if (strcmp(argv[0], "--bash-completion") == 0) {
        print_completion(out);
        return 0;
    }
    return cli_help_command(argv[0], out, err);
}

/* ---- version ----------------------------------------------------------- */

int cli_version(int argc, char **argv, FILE *out, FILE *err)
{
    int as_json = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            as_json = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            return cli_help_command("version", out, err);
        } else {
            fprintf(err, "lockstorm: version: unknown argument '%s'; see 'lockstorm help "
                         "version'\n", argv[i]);
            return 2;
        }
    }
    char hiredis[32];
    snprintf(hiredis, sizeof(hiredis), "%d.%d.%d", HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH);
    const char *yaml = yaml_get_version_string();
#if defined(__SANITIZE_ADDRESS__)
    const char *san = "address,undefined";
#else
    const char *san = "none";
#endif
    char shim[PATH_MAX];
    struct ls_err e = {0};
    int have_shim = clockctl_shim_path(shim, sizeof(shim), &e) == 0;
    if (as_json) {
        struct json *j = json_new_obj();
        json_obj_set_str(j, "format", "lockstorm-version");
        json_obj_set_int(j, "version", 1);
        json_obj_set_str(j, "tool_version", LS_VERSION);
        json_obj_set_str(j, "build_type", LS_BUILD_TYPE);
        json_obj_set_str(j, "compiler", COMPILER " " __VERSION__);
        json_obj_set_str(j, "sanitizers", san);
        json_obj_set_str(j, "hiredis", hiredis);
        json_obj_set_str(j, "libyaml", yaml);
        json_obj_set(j, "clock_shim", have_shim ? json_new_str(shim) : json_new_null());
        struct strbuf sb = STRBUF_INIT;
        json_write(&sb, j, 2);
        sb_putc(&sb, '\n');
        fwrite(sb.buf, 1, sb.len, out);
        sb_free(&sb);
        json_free(j);
        return 0;
    }
    fprintf(out, "lockstorm %s\n", LS_VERSION);
    fprintf(out, "build: %s, C11, %s %s, sanitizers %s\n", LS_BUILD_TYPE, COMPILER, __VERSION__,
            san);
    fprintf(out, "hiredis %s (compiled against), libyaml %s (loaded)\n", hiredis, yaml);
    fprintf(out, "clock shim: %s\n", have_shim ? shim : "not found (clock faults unavailable)");
    return 0;
}

int cli_usage_errorv(const char *tail, const char *fmt, va_list ap)
{
    fprintf(stderr, "lockstorm: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "%s\n", tail);
    return 2;
}
