"""Measured op times: real training steps under torch.profiler (--time), or a profiler trace a user
recorded (--from-trace), matched to the ops of the recorded step (docs/export.md, "Measured times").

Both read a Kineto JSON trace (torch.profiler's export_chrome_trace) the same way:

- a step is a `ProfilerStep#N` event (what torch.profiler.profile.step() records, and what --time
  records around each timed step); a trace without one is one step;
- in each step, the recorded step's ATen calls (trace.Line.src, in order) are matched to the
  trace's `aten::NAME` cpu_op events in time order: each call takes the first event of its name that
  starts after the previous match ended, so that calls nested inside a matched one (addmm's copy_,
  sum's inner sum) are never taken for the next, within LOOKAHEAD events of the previous match;
- a matched call's host time is from the previous match's end to its own end (its dispatch and
  kernel launches, and the framework's work before it: Python, autograd, views); its device time
  is, on a GPU, the summed duration of the kernels, copies and sets its launches started (the
  runtime events inside it on its thread, joined to the GPU's by their `correlation`), and on a
  CPU, which runs the op itself, the same span as the host time, of which the host's own share is
  only the gap before the op;
- each call's times are the mean over the steps where it was matched (ddpsim predicts the mean
  iteration, and the mean step's ops are the sum of the ops' means, where the sum of medians leaves
  out the slow steps every run pays its share of); a call written as several
  lines (a convolution's backward: dgrad, wgrad, dbias; attention's GEMMs; a convolution's bias)
  shares them in proportion to the lines' FLOPs (an elementwise line's elements)."""

import bisect
import contextlib
import datetime
import json
import os
import statistics
import sys
import tempfile

import torch

from . import ExportError

STEP = "ProfilerStep#"
# How far past the last match a call's event is looked for: a call the trace lacks (a user's step
# that builds its loss otherwise) must not take an event of its name from far later in the step
# (the optimizer's), which would leave every call between unmatched. Between two recorded calls
# the trace holds their composites, views and nested ops: tens of events, not a thousand.
LOOKAHEAD = 1000
_GPU = {"kernel", "gpu_memcpy", "gpu_memset"}
_RUNTIME = {"cuda_runtime", "cuda_driver"}


class Measured:
    """What the trace gave: `device` (its name, as ddpsim's profile names it: docs/profile.md's
    device.name), `kind` ("cpu" or "cuda"), `torch` (the release), `steps` (steps timed), `date`
    (YYYY-MM-DD), `times` (per recorded call, (device s, host s) or None where unmatched), `step_s`
    (each step's length), `notes`."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def cpu_name():
    """This machine's CPU as /proc/cpuinfo names it (what ddpcalib writes as a CPU profile's
    device.name: calib/computebench.c), or "cpu"."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip() or "cpu"
    except OSError:
        pass
    return "cpu"


def device_name(device):
    """A torch.device's name: a GPU's torch.cuda.get_device_name (cudaDeviceProp.name), else the CPU's."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return cpu_name()


def read_trace(path):
    """A Kineto JSON trace: the document, or ExportError naming the file."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise ExportError("--from-trace %s: cannot read: %s" % (path, exc.strerror or exc)) from None
    if path.endswith(".gz") or raw[:2] == b"\x1f\x8b":
        import gzip
        try:
            raw = gzip.decompress(raw)
        except OSError as exc:
            raise ExportError("--from-trace %s: not gzip: %s" % (path, exc)) from None
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise ExportError("--from-trace %s: not JSON: %s" % (path, exc)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise ExportError("--from-trace %s: not a torch.profiler trace (no traceEvents list)" % path)
    return doc


def _spans(doc):
    """The complete events ("ph": "X") with a start and a duration, sorted by start (the outer of
    two equal starts first)."""
    ev = [e for e in doc["traceEvents"] if isinstance(e, dict) and e.get("ph") == "X"
          and isinstance(e.get("ts"), (int, float)) and isinstance(e.get("dur"), (int, float))]
    ev.sort(key=lambda e: (e["ts"], -e["dur"]))
    return ev


def _event_names(name):
    """The trace's names for a recorded ATen call: its own, and its in-place or out-of-place twin.
    Eager PyTorch may run the other one: nn.Linear's bias on a 3-D input is recorded as `add` and
    runs as `add_` on the matmul's output (torch 2.15's profiler: aten::linear > matmul > mm, then
    aten::add_)."""
    base = name[:-1] if name.endswith("_") and not name.endswith("__") else name
    return {"aten::" + base, "aten::" + base + "_"}


def op_times(doc, lines, origin):
    """Measured for the recorded step's lines (trace.Line, with .src) from a trace document."""
    ev = _spans(doc)
    ops = [e for e in ev if e.get("cat") in ("cpu_op", "Operator") and str(e.get("name", "")).startswith("aten::")]
    if not ops:
        raise ExportError("%s: the trace has no aten:: operator events (record it with torch.profiler's "
                          "ProfilerActivity.CPU)" % origin)
    # (a CUDA trace repeats each step's annotation on the GPU's timeline, gpu_user_annotation: not a step)
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in ev
             if str(e.get("name", "")).startswith(STEP) and not str(e.get("cat", "")).startswith("gpu_")]
    if not steps:
        steps = [(ops[0]["ts"], max(e["ts"] + e["dur"] for e in ops))]
    gpu = [e for e in ev if e.get("cat") in _GPU]
    by_corr = {}
    for e in gpu:
        c = (e.get("args") or {}).get("correlation")
        if c is not None:
            by_corr[c] = by_corr.get(c, 0.0) + e["dur"]
    runtime = {}  # thread -> its launches' (start, correlation), by start (ev is sorted)
    for e in ev:
        if e.get("cat") in _RUNTIME:
            runtime.setdefault(e.get("tid"), []).append((e["ts"], (e.get("args") or {}).get("correlation")))
    starts = {tid: [t for t, _ in r] for tid, r in runtime.items()}

    def kernels_us(op):
        r, t = runtime.get(op.get("tid"), []), starts.get(op.get("tid"), [])
        lo, hi = bisect.bisect_left(t, op["ts"]), bisect.bisect_right(t, op["ts"] + op["dur"])
        return sum(by_corr.get(c, 0.0) for _, c in r[lo:hi])

    calls = []  # (src, aten name), in order
    for ln in lines:
        if not calls or calls[-1][0] != ln.src:
            calls.append((ln.src, ln.aten))
    per_call = [[] for _ in calls]
    for lo, hi in steps:
        win = [e for e in ops if lo <= e["ts"] and e["ts"] + e["dur"] <= hi]
        j, prev_end = 0, lo
        for i, (_, name) in enumerate(calls):
            want = _event_names(name)
            k, stop = j, min(len(win), j + LOOKAHEAD)
            while k < stop and not (win[k]["name"] in want and win[k]["ts"] >= prev_end):
                k += 1
            if k == stop:
                continue  # not in this step: left unmatched, the next call searches from here
            e = win[k]
            end = e["ts"] + e["dur"]
            host = end - prev_end
            dev = kernels_us(e) if gpu else host
            own = host if gpu else e["ts"] - prev_end
            per_call[i].append((dev * 1e-6, own * 1e-6))
            j, prev_end = k + 1, end
    times = {}
    for (src, _), got in zip(calls, per_call):
        if got:
            times[src] = (statistics.fmean(t[0] for t in got), statistics.fmean(t[1] for t in got))
    return times, [(hi - lo) * 1e-6 for lo, hi in steps], bool(gpu)


def attach(lines, times):
    """Each line's share of its call's measured times (Line.times); returns the lines left without."""
    group = {}
    for ln in lines:
        group.setdefault(ln.src, []).append(ln)
    missing = 0
    for src, lns in group.items():
        t = times.get(src)
        if t is None:
            missing += len(lns)
            continue
        w = [max(ln.share(), 0) for ln in lns]
        total = sum(w)
        for ln, x in zip(lns, w):
            f = x / total if total > 0 else 1.0 / len(lns)
            ln.times = (t[0] * f, t[1] * f)
    return missing


def from_trace(path, lines):
    """Measured from a user's trace of the recorded step (--from-trace)."""
    doc = read_trace(path)
    times, step_s, gpu = op_times(doc, lines, path)
    notes = []
    props = doc.get("deviceProperties") or []
    if gpu:
        name = next((p.get("name") for p in props if isinstance(p, dict) and p.get("name")), None)
        if not name:
            raise ExportError("%s: the trace has GPU kernels but no deviceProperties naming the GPU" % path)
        kind = "cuda"
    else:
        name, kind = cpu_name(), "cpu"
        notes.append("the trace has no GPU events: its times are taken as this machine's CPU's (%s)" % name)
    # The file's modification time: the trace holds no wall-clock date (its baseTimeNanoseconds is
    # Kineto's own clock base, not the epoch's).
    when = datetime.datetime.fromtimestamp(os.path.getmtime(path), datetime.timezone.utc)
    return Measured(device=name, kind=kind, torch=torch.__version__, steps=len(step_s), date=when.strftime("%Y-%m-%d"),
                    times=times, step_s=step_s, notes=notes)


@contextlib.contextmanager
def _quiet_stderr():
    """Kineto's own log lines (profiler_start, profiler_stop, "gpuGetDeviceCount failed" without a
    GPU) go to file descriptor 2 from C++: sent to /dev/null while the profiler runs, so that the
    exporter's output stays its own (__main__.py: one line per failure)."""
    sys.stderr.flush()
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def run_steps(module, args, kwargs, loss_fn, amp, opt, warmup, steps, lines):
    """--time: `warmup` training steps, then `steps` under torch.profiler, each in a ProfilerStep#
    event (a GPU synchronized before it ends), read back as from_trace reads a user's trace."""
    from .step import train_step

    device = next(module.parameters()).device
    cuda = device.type == "cuda"
    acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
    module.train()
    try:
        for _ in range(warmup):
            train_step(module, args, kwargs, loss_fn, amp, opt)
        if cuda:
            torch.cuda.synchronize(device)
        with _quiet_stderr(), torch.profiler.profile(activities=acts) as prof:
            for i in range(steps):
                with torch.profiler.record_function(STEP + str(i)):
                    train_step(module, args, kwargs, loss_fn, amp, opt)
                    if cuda:
                        torch.cuda.synchronize(device)
    except ExportError:
        raise
    except Exception as exc:
        raise ExportError("a timed training step failed: %s: %s" % (type(exc).__name__, exc)) from exc
    fd, path = tempfile.mkstemp(prefix="ddpsim_export.", suffix=".pt.trace.json")
    os.close(fd)
    try:
        with _quiet_stderr():
            prof.export_chrome_trace(path)
        doc = read_trace(path)
    finally:
        os.unlink(path)
    times, step_s, _ = op_times(doc, lines, "the timed steps' trace")
    return Measured(device=device_name(device), kind=device.type, torch=torch.__version__, steps=len(step_s),
                    date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"), times=times,
                    step_s=step_s, notes=[])
