"""The exporter's measured mode (python/ddpsim_export/timing.py; docs/export.md, "Measured times").

  python3 test_measured.py CASE DDPSIM

CASE: time (an MLP and a CNN exported with --time on the CPU: the file loads, every op carries its
times, positive, their sum within a two-sided bound of the training step's wall time measured here;
ddpsim predict prices them with a profile of this CPU and ignores them, saying why, with one that
names no device), from-trace (a torch.profiler trace recorded here of the same step gives the
same op list as --time, every op timed; the command line's misuses and failures), gpu-trace (a
made-up CUDA trace, worked out by hand: kernels joined to their ops through the launches'
correlation ids, the step's annotation repeated on the GPU, a backward thread, a nested op, a call
written as two lines, a call not in the trace; this machine has no GPU to record a real one; and a
made-up CPU trace whose op ran as its in-place twin).
Exit 0: every check passed; 1: a check failed; 77: torch is not installed.
"""

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.path.join(HERE, "..", "..", "python")
sys.path.insert(0, HERE)
sys.path.insert(0, PYTHON)
sys.path.insert(0, os.path.join(HERE, ".."))
from modelfile import ModelFile  # noqa: E402
from pycheck import Checks  # noqa: E402
from ddpsim_export.model_text import encode_name  # noqa: E402  (the header's %XX escapes)

_checks = Checks()

# Sum of the ops' measured device times (each op's mean over the timed steps) over the real
# step's wall time here (the fastest of 15 steps): the ops and the framework's work between them
# make up the step (timing.py: a CPU op's time is from the previous op's end to its own; they
# covered 96-98% of each profiled step of the CNN here), so the ratio is near 1 but for what lies
# outside every op (the step's first gap, the end of opt.step()), the profiler's own cost per op,
# and this machine's noise: on 2 cores shared with other jobs, steps of the same CNN took 18 to 72
# ms in one run, so the step is taken at its fastest (against its median, with per-op medians,
# ratios of 0.50 and 0.75 were seen). A file that
# lost ops (unmatched, or matched in another step) comes out low, one that counted ops twice high.
# The load on such a machine changes between the export's timed steps and the test's (ratios of
# 1.28 and 2.11 in one run of this test): an attempt whose ratio falls outside the bound is
# repeated, export and wall time both, at most ATTEMPTS times; the check passes when one attempt's
# ratio is inside, and prints them all. The sum is of each op's mean over the timed steps, which a
# burst of load raises while the fastest step does not: the upper bound is taken against the median
# step (beside a full build the CNN's sum came out 2.2-3.2 times its fastest step and 1.47-1.53 times
# its median in three attempts), the lower one against the fastest.
RATIO_LO, RATIO_HI = 0.5, 2.0
ATTEMPTS = 3


def check(ok, msg):
    _checks(msg, ok)


def run(cmd):
    # CUDA_VISIBLE_DEVICES="": the CPU is timed, as the case says, wherever a GPU is present.
    env = dict(os.environ, PYTHONPATH=PYTHON, CUDA_VISIBLE_DEVICES="")
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def export(name, out, *extra):
    import measured
    _, shape, batch = measured.MODELS[name]
    return run([sys.executable, "-m", "ddpsim_export", "--model", os.path.join(HERE, "measured.py") + ":" + name,
                "--input", "x".join(map(str, shape)), "--batch", str(batch), "-o", out] + list(extra))


def parse(path):
    """(header lines {first word: other words}, [(phase, op line's words but its times, {time_s, host_s} or None)])."""
    f = ModelFile(path)
    return f.header, [(ph, words, t) for (ph, words), t in zip(f.lines, f.times)]


def wall_s(name, steps=15, warmup=3):
    """The wall time of the case's real training step here, as --time runs it: the fastest of
    `steps` (RATIO_LO's comment), and their median."""
    import torch

    import measured
    module, x, opt = measured.setup(name)
    for _ in range(warmup):
        measured.step(module, x, opt)
    ts = []
    for _ in range(steps):
        t = time.perf_counter()
        measured.step(module, x, opt)
        ts.append(time.perf_counter() - t)
    del torch
    return min(ts), statistics.median(ts)


def profile_of(device, path):
    """A CPU profile (rooflines of a slow core, ddpcalib machine's link class shm), naming `device`
    (None: naming none)."""
    roof = {"model": "roofline", "launch_s": 1e-6, "peak_flops": 5e10, "efficiency": 0.5, "mem_bw_Bps": 1e10}
    d = {"format": "ddpsim-profile", "version": 1, "name": "this-cpu",
         "compute": {"fp32": {"gemm": roof, "ewise": {k: v for k, v in roof.items() if k in ("model", "launch_s",
                                                                                           "mem_bw_Bps")}}},
         "comm": {"links": {"shm": {"lat_s": 1e-6, "bw_Bps": 1e10}}}}
    if device is not None:
        d["device"] = {"name": device}
    with open(path, "w") as f:
        json.dump(d, f)


TOPO = "ddpsim-topology 1\nname one-cpu\ngpus_per_node 1\nintra shm links=1 bw=10GBps\nnic none\n"


def predict(ddpsim, model, profile, topo):
    r = subprocess.run([ddpsim, "predict", "--model", model, "--profile", profile, "--topology", topo, "--nodes", "1",
                        "--json"], capture_output=True, text=True)
    try:
        return r, json.loads(r.stdout)
    except ValueError:
        return r, None


def case_time(ddpsim):
    import measured
    from ddpsim_export.timing import cpu_name
    cpu = cpu_name()
    with tempfile.TemporaryDirectory() as tmp:
        topo = os.path.join(tmp, "one.topo")
        with open(topo, "w") as f:
            f.write(TOPO)
        named, unnamed = os.path.join(tmp, "named.json"), os.path.join(tmp, "unnamed.json")
        profile_of(cpu, named)
        profile_of(None, unnamed)
        for name in ("mlp", "cnn"):
            out = os.path.join(tmp, name + ".model")
            r = export(name, out, "--time", "7", "--warmup", "3")
            check(r.returncode == 0 and "ops timed on %s" % cpu in r.stdout,
                  "%s: exported with --time 7 on the CPU: %s" % (name, (r.stdout + r.stderr).strip().splitlines()[0]
                                                               if r.returncode == 0 else r.stderr.strip()[-300:]))
            if r.returncode:
                continue
            rp = subprocess.run([ddpsim, "plan", "--model", out], capture_output=True, text=True)
            check(rp.returncode == 0, "%s: ddpsim loads the file%s" % (name, "" if rp.returncode == 0 else ": " + rp.stderr))
            head, ops = parse(out)
            with open(out) as f:
                first = f.readline().split()
            m = dict(w.split("=", 1) for w in head.get("measured", []))
            import torch
            check(first == ["ddpsim-model", "7"] and m.get("device") == encode_name(cpu) and
                  m.get("steps") == "7" and m.get("torch") == torch.__version__,
                  "%s: format 7 (measured, and no_input_grad), measured on %s, torch %s, 7 steps, %s" % (name, m.get("device"), m.get("torch"),
                                                                         m.get("date")))
            untimed = [o[1][1] for o in ops if o[2] is None]
            check(ops and not untimed, "%s: every one of the %d ops carries time_s and host_s%s"
                  % (name, len(ops), "" if not untimed else " (not: %s)" % ", ".join(untimed[:5])))
            timed = [o[2] for o in ops if o[2]]
            check(all(t["time_s"] > 0 and 0 <= t["host_s"] <= t["time_s"] for t in timed),
                  "%s: every device time > 0, every host time in [0, the device time] (on a CPU the host's share is "
                  "the gap before the op)" % name)
            check(sum(1 for o in ops if o[0] == "optimizer") >= 8,
                  "%s: the optimizer's steps are traced and timed (%d foreach ops)" % (name, sum(1 for o in ops if o[0] == "optimizer")))
            total = sum(t["time_s"] for t in timed)
            tries = []
            for attempt in range(ATTEMPTS):
                if attempt:
                    again = os.path.join(tmp, "%s.%d.model" % (name, attempt))
                    if export(name, again, "--time", "7", "--warmup", "3").returncode:
                        break
                    t_sum = sum(o[2]["time_s"] for o in parse(again)[1] if o[2])
                else:
                    t_sum = total
                wall, median = wall_s(name)
                tries.append("%.3f ms against %.3f ms (median %.3f): %.2f, %.2f of the median" %
                             (t_sum * 1e3, wall * 1e3, median * 1e3, t_sum / wall, t_sum / median))
                if RATIO_LO * wall <= t_sum <= RATIO_HI * median:
                    break
            check(RATIO_LO * wall <= t_sum <= RATIO_HI * median,
                  "%s: the ops' device times sum against the real step here, at least %.1f of its fastest and at most "
                  "%.1f of its median: %s" % (name, RATIO_LO, RATIO_HI, "; ".join(tries)))
            # ddpsim prices the ops by their times with a profile of this CPU ...
            r, j = predict(ddpsim, out, named, topo)
            meas = (j or {}).get("measured") or {}
            check(r.returncode == 0 and meas.get("ops") == len(ops) and meas.get("device") == cpu and
                  meas.get("ignored") is None and "warning" not in r.stderr,
                  "%s: predict with a profile of %s prices %s of %d ops from their times" % (name, cpu, meas.get("ops"),
                                                                                          len(ops)))
            # The steps' spread: on the measured line, and the interval's measured part (docs/memory.md).
            sd = float(m.get("step_rel_sd", "nan"))
            iv = (j or {}).get("interval") or {}
            z = 1.6448536269514722  # the standard normal's 95% point: the default 90% level
            want_hi = math.exp(z * math.sqrt(math.log1p(sd * sd))) if sd == sd else float("nan")
            check(0 < sd <= 2 and iv.get("measured_steps") == 7 and abs(iv.get("measured_rel_sd", -1) - sd) <= 1e-12 and
                  abs(iv.get("measured_hi_factor", 0) - want_hi) <= 1e-9 * want_hi and
                  abs(iv.get("measured_lo_factor", 0) * want_hi - 1) <= 1e-9 and
                  iv["iteration_s"]["hi"] >= j["iteration_s"] * want_hi * (1 - 1e-9),
                  "%s: step_rel_sd=%g of the 7 steps, the interval's measured part a lognormal's 90%% (hi %.4f) inside "
                  "the whole: %s" % (name, sd, want_hi, {k: v for k, v in iv.items() if k.startswith("measured")}))
            if j:
                it = j["iteration_s"]
                host = sum(t["host_s"] for t in timed)
                # One rank: the ops' device times in a row, the host issuing each after its own share.
                check(total <= it <= total + host + 1e-3,
                      "%s: predicted iteration %.3f ms between the device times' sum %.3f ms and it plus the host's %.3f ms"
                      % (name, it * 1e3, total * 1e3, host * 1e3))
            rt = subprocess.run([ddpsim, "predict", "--model", out, "--profile", named, "--topology", topo, "--nodes", "1"],
                                capture_output=True, text=True)
            check(rt.returncode == 0 and "# measured: %d of %d ops priced from their times measured on %s" % (
                len(ops), len(ops), cpu) in rt.stdout, "%s: the table says so" % name)
            # ... and not with one that names no device, nor at another batch: saying why, on stderr too.
            r, j = predict(ddpsim, out, unnamed, topo)
            meas = (j or {}).get("measured") or {}
            check(r.returncode == 0 and meas.get("ops") == 0 and meas.get("recorded_ops") == len(ops) and
                  "does not name its device (device.name)" in (meas.get("ignored") or "") and
                  "measured op times (%d ops, on %s) are ignored" % (len(ops), cpu) in r.stderr,
                  "%s: a profile without device.name: ignored (%s), warned on stderr" % (name, meas.get("ignored")))
            rb = subprocess.run([ddpsim, "predict", "--model", out, "--profile", named, "--topology", topo, "--nodes", "1",
                                 "--batch", "3"], capture_output=True, text=True)
            check(rb.returncode == 0 and "# warning: the model's measured times" in rb.stdout and
                  "the run's is 3" in rb.stdout, "%s: at --batch 3 the table warns they were ignored" % name)
            _, _, batch = measured.MODELS[name]
            rs = subprocess.run([ddpsim, "sweep", "--model", out, "--profile", named, "--topology", topo, "--nodes", "1",
                                 "--batch", "%d,3,5" % batch], capture_output=True, text=True)
            check(rs.returncode == 0 and rs.stderr.count("measured op times") == 1 and "the run's is 3" in rs.stderr,
                  "%s: sweep over batches %d, 3, 5 warns once, at the first that ignores them: %s"
                  % (name, batch, rs.stderr.strip()[:200]))


def case_from_trace(ddpsim):
    import torch

    import measured
    from ddpsim_export.timing import cpu_name
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("mlp", "cnn"):
            # The user's own profiling of their training loop: a schedule, two active steps.
            module, x, opt = measured.setup(name)
            trace = os.path.join(tmp, name + ".pt.trace.json")
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                        schedule=torch.profiler.schedule(wait=1, warmup=2, active=2)) as prof:
                for _ in range(5):
                    measured.step(module, x, opt)
                    prof.step()
            prof.export_chrome_trace(trace)
            a, b = os.path.join(tmp, name + ".trace.model"), os.path.join(tmp, name + ".time.model")
            r = export(name, a, "--from-trace", trace)
            check(r.returncode == 0, "%s: exported --from-trace a torch.profiler trace: %s" % (
                name, r.stdout.strip() if r.returncode == 0 else r.stderr.strip()[-300:]))
            r2 = export(name, b, "--time", "3", "--warmup", "2")
            if r.returncode or r2.returncode:
                check(False, "%s: --time export: %s" % (name, r2.stderr.strip()[-300:]))
                continue
            ha, oa = parse(a)
            hb, ob = parse(b)
            check([o[:2] for o in oa] == [o[:2] for o in ob] and oa,
                  "%s: the same %d op lines as --time's (kinds, names, dimensions, ready points)" % (name, len(oa)))
            check(all(o[2] for o in oa), "%s: every op timed from the trace" % name)
            m = dict(w.split("=", 1) for w in ha.get("measured", []))
            check(m.get("steps") == "2" and m.get("device") == encode_name(cpu_name()),
                  "%s: the trace's 2 active steps, on this CPU (%s)" % (name, m.get("device")))
            check({k: v for k, v in ha.items() if k != "measured"} == {k: v for k, v in hb.items() if k != "measured"},
                  "%s: the same header lines but the measured one" % name)
        # Misuse (2) and failure (1), each one line.
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            f.write('{"traceEvents": "no"}')
        out = os.path.join(tmp, "x.model")
        cases = [(("--from-trace", bad), 1, "not a torch.profiler trace (no traceEvents list)"),
                 (("--from-trace", os.path.join(tmp, "absent.json")), 2, "no such file"),
                 (("--time", "--meta"), 2, "--time runs the module: it cannot be built with --meta"),
                 (("--time", "3", "--mode", "fake"), 2, "--time runs real training steps: --mode fake does not"),
                 (("--time", "3", "--from-trace", bad), 2, "two sources of the times"),
                 (("--time", "0"), 2, "--time takes a number of steps >= 1, got 0"),
                 (("--time", "3", "--warmup", "-1"), 2, "--warmup takes a number of steps >= 0, got -1")]
        for args, rc, msg in cases:
            r = export("mlp", out, *args)
            lines = r.stderr.strip().splitlines()
            check(r.returncode == rc and len(lines) == 1 and msg in lines[0] and not os.path.exists(out),
                  "%s: exit %d, one line: %s" % (" ".join(os.path.basename(a) for a in args), r.returncode,
                                                 lines[-1] if lines else "(nothing)"))


def case_gpu_trace(ddpsim):
    from ddpsim_export import timing
    from ddpsim_export.trace import Line

    def op(name, ts, dur, tid=1, cat="cpu_op", **args):
        return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 7, "tid": tid, "args": args}

    ev = [op("ProfilerStep#4", 0, 1000, cat="user_annotation"),
          op("ProfilerStep#4", 40, 700, tid=9, cat="gpu_user_annotation"),  # its copy on the GPU's timeline
          # forward on thread 1: addmm launches one kernel (100 us); relu, with clamp_min inside it, one (30 us)
          op("aten::addmm", 10, 20), op("cudaLaunchKernel", 15, 5, cat="cuda_runtime", correlation=7),
          op("gemm_kernel", 40, 100, tid=9, cat="kernel", correlation=7, device=0),
          op("aten::relu", 50, 10), op("aten::clamp_min", 52, 5),
          op("cudaLaunchKernel", 54, 2, cat="cuda_runtime", correlation=8),
          op("relu_kernel", 140, 30, tid=9, cat="kernel", correlation=8, device=0),
          # backward on the autograd thread 2: mm launches two kernels (50 and 60 us) and a copy (5 us)
          op("aten::mm", 100, 30, tid=2), op("cudaLaunchKernel", 105, 3, tid=2, cat="cuda_runtime", correlation=9),
          op("cudaLaunchKernel", 110, 3, tid=2, cat="cuda_runtime", correlation=10),
          op("cudaMemcpyAsync", 120, 3, tid=2, cat="cuda_runtime", correlation=11),
          op("mm_kernel", 170, 50, tid=9, cat="kernel", correlation=9, device=0),
          op("mm_kernel", 220, 60, tid=9, cat="kernel", correlation=10, device=0),
          op("Memcpy DtoD", 280, 5, tid=9, cat="gpu_memcpy", correlation=11, device=0),
          # a kernel launched outside every op (the step's synchronize) belongs to none
          op("cudaLaunchKernel", 140, 2, cat="cuda_runtime", correlation=12),
          op("other_kernel", 300, 400, tid=9, cat="kernel", correlation=12, device=0)]
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}], "traceEvents": ev}
    lines = [Line("forward", "gemm", "fc.addmm", "addmm", [8, 4, 2, 1], "fp32", src=1),
             Line("forward", "ewise", "relu", "relu", [32], "fp32", src=2),
             Line("backward", "gemm", "fc.mm.a", "mm", [8, 4, 2, 1], "fp32", src=3),   # 128 FLOPs
             Line("backward", "gemm", "fc.mm.b", "mm", [8, 4, 6, 1], "fp32", src=3),   # 384 FLOPs
             Line("backward", "ewise", "absent", "sigmoid", [32], "fp32", src=4)]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gpu.pt.trace.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        m = timing.from_trace(path, lines)
    check(m.device == "NVIDIA H100 80GB HBM3" and m.kind == "cuda" and m.steps == 1 and m.step_s == [1e-3],
          "the GPU deviceProperties names, one step of 1 ms: %s, %s, %d, %s" % (m.device, m.kind, m.steps, m.step_s))
    us = 1e-6
    # (device, host): addmm its kernel, from the step's start to its end; relu its kernel (not
    # clamp_min's launch twice), from addmm's end (30) to its own (60); mm its two kernels and the
    # copy, from relu's end to its own (130); sigmoid nowhere.
    want = {1: (100 * us, 30 * us), 2: (30 * us, 30 * us), 3: (115 * us, 70 * us)}
    got = {k: tuple(round(x / us, 6) * us for x in v) for k, v in m.times.items()}
    check(got == want, "per call (device s, host s): %s, by hand %s" % (got, want))
    missing = timing.attach(lines, m.times)
    check(missing == 1 and lines[4].times is None, "the call not in the trace stays without times")
    a, b = lines[2].times, lines[3].times
    check(abs(a[0] - 115 * us / 4) < 1e-12 and abs(b[0] - 115 * us * 3 / 4) < 1e-12 and abs(a[1] + b[1] - 70 * us) < 1e-12,
          "mm's two lines share its times by their FLOPs, 1:3 (%.4g, %.4g s)" % (a[0], b[0]))
    # A CPU trace where eager ran the in-place twin of a recorded call (nn.Linear's bias on a 3-D
    # input: recorded `add`, run as aten::add_): it is matched, so the backward's mm after it is too
    # (taking a later aten::add instead left both backward calls without times: a 2-layer LSTM LM
    # was predicted 23% slow from its measured ops, docs/validation.md).
    cpu = [op("aten::mm", 0, 300), op("aten::add_", 310, 10), op("aten::sum", 330, 5), op("aten::mm", 340, 400),
           op("aten::add", 800, 20)]
    cl = [Line("forward", "gemm", "dec.mm", "mm", [8, 4, 2, 1], "fp32", src=1),
          Line("forward", "ewise", "dec.add", "add", [32], "fp32", src=2),
          Line("backward", "gemm", "dec.mm.grad", "mm", [8, 4, 2, 1], "fp32", src=3)]
    t, _, _ = timing.op_times({"traceEvents": cpu}, cl, "cpu.json")
    got = {k: tuple(round(x / us, 6) for x in v) for k, v in t.items()}
    check(got == {1: (300, 0), 2: (20, 10), 3: (420, 20)},  # each from the previous match's end (sum's 20 us inside mm's)
          "CPU: the recorded add matches the trace's add_, the backward mm after it is timed (us, device and own host): %s" % got)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import torch  # noqa: F401
    except Exception as exc:
        print("skip: torch is not importable (%s)" % exc)
        return 77
    case, ddpsim = sys.argv[1:]
    cases = {"time": case_time, "from-trace": case_from_trace, "gpu-trace": case_gpu_trace}
    if case not in cases:
        print("unknown case %r" % case, file=sys.stderr)
        return 2
    cases[case](ddpsim)
    return _checks.finish()


if __name__ == "__main__":
    sys.exit(main())
