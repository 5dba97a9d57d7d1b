#!/usr/bin/env python3
"""Checks a `ddpsim trace` file: the trace-event format's rules, then its content.

usage: check_trace.py TRACE.json [--model FILE.model] [--predict FILE.json] [--ranks N]
                      [--buckets N] [--dataparallel]

Format (the Trace Event Format, as Perfetto and chrome://tracing read it):
  - a top-level object with a traceEvents list; every event has name, ph, pid, tid;
  - X: numeric ts and dur (microseconds), dur >= 0, finite; i: ts and scope s in g/p/t;
  - s/f: ts, cat, id; every id has exactly one s and one f, same name and cat, f not before s;
  - M: a known metadata name with its argument; every pid with events has a process_name and
    every (pid, tid) with events a thread_name;
  - X spans on one thread nest: each lies inside the enclosing one or starts after it ends.
Content:
  - every rank shown has every bucket's all-reduce exactly once in each iteration that
    all-reduces (--buckets), and the trace shows --ranks ranks;
  - the op spans inside forward, backward and the optimizer are the model's ops in its order
    (--model);
  - every span of an iteration lies inside that iteration's span, every span inside the run;
  - the last iteration's span is as long as predict's buckets_iteration_s (--predict): the
    trace's unit is the microsecond.
Prints one line per check; exits 1 if any failed, 2 on misuse.
"""
import json
import math
import sys
from collections import defaultdict

TOL_US = 1e-3  # a nanosecond: the writer's sums of doubles, in microseconds
META = {"process_name": "name", "thread_name": "name", "process_sort_index": "sort_index",
        "thread_sort_index": "sort_index", "process_labels": "labels"}

failures = 0


def check(what, ok, detail=""):
    global failures
    print(("ok    " if ok else "FAIL  ") + what + ("" if ok or not detail else ": " + detail))
    if not ok:
        failures += 1
    return ok


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def model_ops(path):
    """The model's op names per section, in file order."""
    ops = {"forward": [], "backward": [], "optimizer": []}
    section = None
    with open(path) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if words[0] in ops and len(words) == 1:
                section = words[0]
            elif section and words[0] in ("gemm", "conv", "ewise") and len(words) > 1:
                ops[section].append(words[1])
    return ops


def format_checks(events, dataparallel):
    bad = []
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            bad.append(f"event {i} is not an object")
            continue
        for k in ("name", "ph", "pid", "tid"):
            if k not in e:
                bad.append(f"event {i} lacks {k}")
        if not isinstance(e.get("name"), str) or not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            bad.append(f"event {i}: name must be a string, pid and tid integers")
        ph = e.get("ph")
        if ph == "X":
            if not num(e.get("ts")) or not num(e.get("dur")) or e["dur"] < 0:
                bad.append(f"event {i} ({e.get('name')}): X needs numeric ts and dur >= 0")
        elif ph == "i":
            if not num(e.get("ts")) or e.get("s") not in ("g", "p", "t"):
                bad.append(f"event {i}: i needs numeric ts and scope g/p/t")
        elif ph in ("s", "f"):
            if not num(e.get("ts")) or "id" not in e or "cat" not in e:
                bad.append(f"event {i}: {ph} needs ts, id and cat")
        elif ph == "M":
            key = META.get(e.get("name"))
            if key is None or key not in e.get("args", {}):
                bad.append(f"event {i}: metadata {e.get('name')} unknown or without args.{key}")
        else:
            bad.append(f"event {i}: phase {ph!r} is not one ddpsim writes")
        if "args" in e and not isinstance(e["args"], dict):
            bad.append(f"event {i}: args must be an object")
    check("every event has the fields its phase requires", not bad, "; ".join(bad[:5]))

    flows = defaultdict(list)
    for e in events:
        if e.get("ph") in ("s", "f"):
            flows[e["id"]].append(e)
    unmatched = [k for k, v in flows.items()
                 if sorted(x["ph"] for x in v) != ["f", "s"] or len({(x["name"], x["cat"]) for x in v}) != 1]
    backwards = [k for k, v in flows.items() if len(v) == 2 and
                 next(x for x in v if x["ph"] == "f")["ts"] + TOL_US < next(x for x in v if x["ph"] == "s")["ts"]]
    # DataParallel has no buckets: no flows.
    check(f"{len(flows)} flows: every id one s and one f of the same name and category",
          (not flows if dataparallel else flows) and not unmatched,
          f"unmatched ids {unmatched[:5]}")
    check("no flow ends before it starts", not backwards, f"ids {backwards[:5]}")

    named_p = {e["pid"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"}
    named_t = {(e["pid"], e["tid"]) for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
    used = {(e["pid"], e["tid"]) for e in events if e.get("ph") in ("X", "i", "s", "f")}
    check(f"every one of {len({p for p, _ in used})} processes with events has a process_name",
          {p for p, _ in used} <= named_p, str(sorted({p for p, _ in used} - named_p)[:5]))
    check(f"every one of {len(used)} threads with events has a thread_name", used <= named_t,
          str(sorted(used - named_t)[:5]))

    by_thread = defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            by_thread[(e["pid"], e["tid"])].append(e)
    crossing = []
    for key, spans in by_thread.items():
        stack = []
        for e in sorted(spans, key=lambda x: (x["ts"], -x["dur"])):
            while stack and e["ts"] >= stack[-1]["ts"] + stack[-1]["dur"] - TOL_US:
                stack.pop()
            if stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"] + TOL_US:
                crossing.append(f"{key}: {e['name']} crosses the end of {stack[-1]['name']}")
            stack.append(e)
    check(f"X spans nest on each of {len(by_thread)} threads", not crossing, "; ".join(crossing[:3]))


def content_checks(doc, events, args):
    xs = [e for e in events if e.get("ph") == "X"]
    pids = sorted({e["pid"] for e in xs})
    if args.get("ranks") is not None:
        check(f"the trace shows {args['ranks']} ranks", len(doc.get("otherData", {}).get("ranks_shown", [])) == args["ranks"],
              str(doc.get("otherData", {}).get("ranks_shown")))
    iters = {}
    for e in xs:
        if e["name"].startswith("iteration "):
            iters[(e["pid"], e["tid"], e["args"]["iteration"])] = e
    check("every rank's compute stream has its iterations", iters and all(
        any(k[0] == p for k in iters) for p in pids))

    if args.get("buckets") is not None:
        nb = args["buckets"]
        counts = defaultdict(int)
        for e in xs:
            if e["name"].startswith("all-reduce bucket "):
                counts[(e["pid"], e["args"]["iteration"], e["args"]["bucket"])] += 1
        synced = defaultdict(set)
        for (p, _, it), e in iters.items():
            if e["args"].get("all_reduces") == "yes":
                synced[p].add(it)
        missing = [(p, it, b) for p in pids for it in synced[p] for b in range(nb) if counts.get((p, it, b)) != 1]
        extra = [k for k in counts if k[2] >= nb or k[1] not in synced[k[0]]]
        check(f"every one of {nb} buckets' all-reduce once per rank and synchronising iteration",
              any(synced.values()) and not missing and not extra, f"missing {missing[:5]} extra {extra[:5]}")

    if args.get("model"):
        ops = model_ops(args["model"])
        by_thread = defaultdict(list)
        for e in xs:
            by_thread[(e["pid"], e["tid"])].append(e)
        wrong = []
        for key, spans in by_thread.items():
            spans.sort(key=lambda x: (x["ts"], -x["dur"]))
            for (p, t, it), ie in iters.items():
                if (p, t) != key:
                    continue
                inside = [e for e in spans if e.get("cat") == "op" and e["args"].get("iteration") == it]
                for phase in ("forward", "backward", "optimizer"):
                    seen = [e["name"] for e in inside if e["args"].get("phase") == phase]
                    # DataParallel steps the optimizer on GPU 0 (its thread 1) only
                    want = [] if phase == "optimizer" and args.get("dataparallel") and t != 1 else ops[phase]
                    if seen != want:
                        wrong.append(f"{key} iteration {it} {phase}: {len(seen)} ops, expected {len(ops[phase])}")
        check("forward, backward and optimizer ops appear in the model's order in every iteration",
              not wrong and iters, "; ".join(wrong[:3]))
        unmarked = [e["name"] for e in xs if e.get("cat") == "op" and not e["args"].get("source", "").startswith("derived")]
        check("every op span says it is derived", not unmarked, str(unmarked[:3]))

    outside = []
    run_start = min(e["ts"] for e in iters.values()) if iters else 0
    run_end = max(e["ts"] + e["dur"] for e in iters.values()) if iters else 0
    for e in xs + [x for x in events if x.get("ph") == "i"]:
        end = e["ts"] + e.get("dur", 0)
        it = e.get("args", {}).get("iteration")
        home = iters.get((e["pid"], e["tid"], it))
        if e["ts"] < run_start - TOL_US or end > run_end + TOL_US:
            outside.append(f"{e['name']} outside the run")
        elif home is not None and (e["ts"] < home["ts"] - TOL_US or end > home["ts"] + home["dur"] + TOL_US):
            outside.append(f"{e['name']} (pid {e['pid']}) outside iteration {it}")
    check("every span lies inside its iteration, and inside the run", iters and not outside, "; ".join(outside[:3]))

    if args.get("predict"):
        with open(args["predict"]) as f:
            pj = json.load(f)
        # rank 0's (predict reports rank 0; under jitter the ranks' iterations differ); DataParallel
        # has one iteration, its iteration_s
        last = max((e for (p, _, _), e in iters.items() if p == 0), key=lambda e: e["ts"])
        want = pj.get("buckets_iteration_s", pj["iteration_s"]) * 1e6
        check(f"rank 0's last iteration spans {last['dur']:.3f} us = predict's {want:.3f} us",
              abs(last["dur"] - want) <= 1e-6 * want + TOL_US)


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    args, i = {}, 2
    while i < len(argv):
        k = argv[i]
        if k == "--dataparallel":
            args["dataparallel"] = True
            i += 1
            continue
        if k not in ("--model", "--predict", "--ranks", "--buckets") or i + 1 >= len(argv):
            print(f"check_trace.py: bad argument {k}", file=sys.stderr)
            return 2
        args[k[2:]] = int(argv[i + 1]) if k in ("--ranks", "--buckets") else argv[i + 1]
        i += 2
    try:
        with open(argv[1]) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        check(f"{argv[1]} is JSON", False, str(e))
        return 1
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not check("a top-level object with a traceEvents list", isinstance(events, list) and events):
        return 1
    format_checks(events, args.get("dataparallel", False))
    content_checks(doc, events, args)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
