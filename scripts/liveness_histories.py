#!/usr/bin/env python3
"""liveness_histories.py: JSONL histories (the format of `lockstorm log
export`, docs/checkers.md) of the shapes that make the liveness checker's
holders many: grants never released, workers crashing with grants,
renewals, grants replaced before their enter, releases of grants nobody
has. For comparing two builds' `lockstorm check --history` result.json
byte for byte and for timing them (docs/performance.md "Time of holds
that never end, many workers").

  liveness_histories.py random SEED           a random mix; prints the capacity
                                              to check it with on stderr
  liveness_histories.py crash GRANTS [SEED]   3,000 workers on 7 resources: each
                                              step one invokes, is granted and
                                              enters, a third of them exit and
                                              release; every tenth grant is
                                              followed by that worker's crash
                                              (SEED 0: workers in turn, each on
                                              one resource; else at random)
  liveness_histories.py hoard GRANTS [SEED]   2,000 workers on 4 resources that
                                              never release, one step in 20
                                              renewing; one worker in 50 crashes
  liveness_histories.py renew SEED            a random mix with hundreds to
                                              thousands of live grants a
                                              resource (the mutex checker's index
                                              of them, checkers/liveix.h), leases
                                              that run out, renewals late and
                                              again, some releases, losses,
                                              crashes (now and then of everyone),
                                              grants replaced, enters without a
                                              grant; prints the capacity to check
                                              it with on stderr
The history goes to stdout.
"""
import random
import sys


def out(lines, t, w, typ, res=None, **kw):
    s = '{"t":%d,"w":%d,"type":"%s"' % (t, w, typ)
    if res is not None:
        s += ',"res":"r%d"' % res
    for k, v in kw.items():
        s += ',"%s":%s' % (k, "null" if v is None else str(v))
    lines.append((t, w, len(lines), s + "}"))


def emit(lines):
    # each worker's records in its own order, workers interleaved by time
    lines.sort(key=lambda x: (x[0], x[1], x[2]))
    w = sys.stdout.write
    for rec in lines:
        w(rec[3] + "\n")


def lease(rng, t, scale):
    k = rng.randrange(10)
    if k == 0:
        return None                     # no expiry
    if k == 1:
        return t - rng.randrange(0, scale)  # expired when granted
    return t + rng.randrange(0, 4 * scale)


def random_history(seed):
    rng = random.Random(seed)
    nw = rng.choice([2, 5, 20, 60, 200])
    nres = rng.choice([1, 1, 2, 3, 7])
    cap = rng.choice([1, 1, 1, 2, 3, 5])
    coarse = rng.randrange(3) == 0
    step = 1000 if coarse else 1
    scale = rng.choice([50, 500, 5000]) * step
    hoarders = set(w for w in range(nw) if rng.randrange(100) < rng.choice([0, 20, 60, 100]))
    lines = []
    for w in range(nw):
        t = rng.randrange(0, 20) * step
        held = []                   # this worker's grants (resource, entered)
        for _ in range(rng.randrange(5, 60)):
            t += rng.randrange(0, 30) * step
            res = rng.randrange(nres)
            x = rng.randrange(100)
            if x < 6:               # a release of a grant it may not have
                out(lines, t, w, rng.choice(["release_ok", "release_not_owner",
                                             "release_fail", "lost"]), rng.randrange(nres))
                continue
            if x < 9:
                out(lines, t, w, "crash")
                held = []
                continue
            if x < 16 and held:     # a renewal of the grants of one resource
                r = rng.choice(held)[0]
                v = lease(rng, t, scale)
                out(lines, t, w, "renew_invoke", r)
                out(lines, t, w, "renew_ok", r, valid_until=v)
                continue
            out(lines, t, w, "acquire_invoke", res)
            t += rng.randrange(0, 3) * step
            y = rng.randrange(100)
            if y < 10:
                out(lines, t, w, rng.choice(["acquire_busy", "acquire_fail", "acquire_unknown"]),
                    res)
                continue
            out(lines, t, w, "acquire_ok", res, valid_until=lease(rng, t, scale))
            if y < 20:              # not entered: a later grant of res replaces it
                held.append((res, 0))
                continue
            t += rng.randrange(0, 2) * step
            out(lines, t, w, "enter", res)
            held.append((res, 1))
            if w in hoarders and rng.randrange(4):
                continue            # never released
            t += rng.randrange(0, 10) * step
            out(lines, t, w, "exit", res)
            out(lines, t, w, "release_invoke", res)
            t += rng.randrange(0, 3) * step
            out(lines, t, w, rng.choice(["release_ok"] * 6 + ["release_not_owner", "lost",
                                                                "release_fail"]), res)
    emit(lines)
    return cap


def renew_history(seed):
    rng = random.Random(seed)
    nw = rng.choice([3, 20, 100, 400, 1500])
    nres = rng.choice([1, 1, 2, 3])
    cap = rng.choice([1, 1, 2, 3])
    step = 1000 if rng.randrange(3) == 0 else 1     # a coarse clock: ties
    scale = rng.choice([20, 200, 2000, 20000]) * step
    p_rel = rng.choice([0, 2, 10, 30])              # % of steps: a release
    p_renew = rng.choice([5, 15, 40])
    p_crash = rng.choice([0, 1, 3])
    p_all = rng.choice([0, 0, 1])                   # per mille: every worker crashes
    lines = []
    held = [[] for _ in range(nw)]                  # per worker: [resource, entered]
    t = 0
    for _ in range(rng.choice([2000, 5000, 15000, 40000])):
        if rng.randrange(3):
            t += rng.randrange(0, 4) * step
        if rng.randrange(1000) < p_all:
            for w in range(nw):
                if held[w]:
                    out(lines, t, w, "crash")
                    held[w] = []
            continue
        w = rng.randrange(nw)
        x = rng.randrange(100)
        if x < p_crash:
            out(lines, t, w, "crash")
            held[w] = []
            continue
        x -= p_crash
        if x < p_rel:
            if not held[w]:
                out(lines, t, w, "lost", rng.randrange(nres))
                continue
            res, ent = held[w][rng.randrange(len(held[w]))]
            if ent and rng.randrange(5):
                out(lines, t, w, "exit", res)
            out(lines, t, w, "release_invoke", res)
            out(lines, t, w, rng.choice(["release_ok"] * 5 + ["lost", "release_not_owner",
                                                               "release_fail"]), res)
            for i, g in enumerate(held[w]):     # (roughly the grant the checker ends)
                if g[0] == res:
                    del held[w][i]
                    break
            continue
        x -= p_rel
        if x < p_renew:
            if held[w] or rng.randrange(10) == 0:
                res = rng.choice(held[w])[0] if held[w] else rng.randrange(nres)
                k = rng.randrange(10)
                v = None if k == 0 else t - rng.randrange(0, scale) if k == 1 else \
                    t + rng.randrange(0, 4 * scale)
                out(lines, t, w, "renew_invoke", res)
                out(lines, t, w, "renew_ok", res, valid_until=v)
            continue
        res = rng.randrange(nres)
        if rng.randrange(40) == 0:
            out(lines, t, w, "enter", res)
            held[w].append([res, 1])
            continue
        k = rng.randrange(12)
        v = None if k == 0 else t - rng.randrange(0, scale) if k == 1 else \
            t + rng.randrange(0, scale // 4 + 1) if k < 6 else t + rng.randrange(0, 4 * scale)
        out(lines, t, w, "acquire_invoke", res)
        out(lines, t, w, "acquire_ok", res, valid_until=v)
        if rng.randrange(6) == 0:               # not entered: a later grant replaces it
            if not any(g[0] == res and not g[1] for g in held[w]):
                held[w].append([res, 0])
            continue
        out(lines, t, w, "enter", res)
        for g in held[w]:
            if g[0] == res and not g[1]:
                g[1] = 1
                break
        else:
            held[w].append([res, 1])
    emit(lines)
    return cap


def crash_history(grants, seed):
    rng = random.Random(seed)
    nw, nres = 3000, 7
    lines = []
    t = 0
    for i in range(grants):
        t += 1000
        w = i % nw if seed == 0 else rng.randrange(nw)
        res = w % nres if seed == 0 else rng.randrange(nres)
        out(lines, t, w, "acquire_invoke", res)
        out(lines, t + 10, w, "acquire_ok", res, valid_until=t + 500)
        out(lines, t + 20, w, "enter", res)
        if rng.randrange(3) == 0:
            out(lines, t + 30, w, "exit", res)
            out(lines, t + 40, w, "release_invoke", res)
            out(lines, t + 50, w, "release_ok", res)
        if i % 10 == 9:
            out(lines, t + 60, w, "crash")
    emit(lines)


def hoard_history(grants, seed):
    rng = random.Random(seed)
    nw, nres = 2000, 4
    lines = []
    t = 0
    for i in range(grants):
        t += 1000
        w = i % nw
        res = rng.randrange(nres)
        out(lines, t, w, "acquire_invoke", res)
        out(lines, t + 10, w, "acquire_ok", res, valid_until=t + rng.randrange(1, 5000000))
        out(lines, t + 20, w, "enter", res)
        if rng.randrange(20) == 0:
            r = rng.randrange(nres)
            out(lines, t + 30, w, "renew_invoke", r)
            out(lines, t + 40, w, "renew_ok", r, valid_until=t + rng.randrange(1, 8000000))
        if w % 50 == 0 and rng.randrange(20) == 0:
            out(lines, t + 50, w, "crash")
    emit(lines)


def main():
    a = sys.argv[1:]
    if len(a) >= 2 and a[0] in ("random", "renew"):
        cap = (random_history if a[0] == "random" else renew_history)(int(a[1]))
        sys.stderr.write("%d\n" % cap)
    elif len(a) >= 2 and a[0] in ("crash", "hoard"):
        seed = int(a[2]) if len(a) > 2 else 1
        (crash_history if a[0] == "crash" else hoard_history)(int(a[1]), seed)
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
