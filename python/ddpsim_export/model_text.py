"""The model file from two traces of the same step, at batch B and 2B (models/README.md).

Each number of each op is fitted as C + N*B from the two traces; the parameters and the ready
points must be the same in both. Version 5 of the format is written: its `saved` line (what autograd
kept for backward, from saved-tensor hooks) and `optim` line."""

import math

from . import ExportError, Summary
from .trace import dtype_tag

# The optimizer step as PyTorch runs it on CUDA by default: the foreach implementation
# (torch/optim/optimizer.py, _default_to_fused_or_foreach: foreach where every parameter is a CUDA
# tensor and fused was not asked for). Each optimizer is its list of _foreach_ ops over the fp32
# parameters, as its _multi_tensor_* function calls them with the default hyperparameters
# (torch/optim/adam.py, rmsprop.py, sgd.py, torch 2.15: not capturable, so the step counters stay on
# the host and their _foreach_add_ launches no kernel): (op, tensor lists it takes, arrays moved
# per parameter element, takes a list of scalars). AdamW's weight decay (default 0.01) is a
# _foreach_mul_ of the parameters; Adam, RMSprop and SGD default to none. RMSprop and SGD are
# written with momentum, as DeepLearningExamples' runs use them.
OPTIMIZERS = {
    "adamw": [("mul_", 1, 2, False), ("lerp_", 2, 3, False), ("mul_", 1, 2, False), ("addcmul_", 3, 4, False),
              ("sqrt", 2, 2, False), ("div_", 1, 2, True), ("add_", 1, 2, False), ("addcdiv_", 3, 4, True)],
    "adam": [("lerp_", 2, 3, False), ("mul_", 1, 2, False), ("addcmul_", 3, 4, False), ("sqrt", 2, 2, False),
             ("div_", 1, 2, True), ("add_", 1, 2, False), ("addcdiv_", 3, 4, True)],
    "rmsprop": [("mul_", 1, 2, False), ("addcmul_", 3, 4, False), ("sqrt", 2, 2, False), ("add_", 1, 2, False),
                ("mul_", 1, 2, False), ("addcdiv_", 3, 4, False), ("add_", 2, 3, False)],
    "sgd": [("mul_", 1, 2, False), ("add_", 2, 3, False), ("add_", 2, 3, False)],
    "none": None,
}

# The for-loop implementation (foreach=False; before PyTorch 2.0 the only default): name ->
# (arrays moved per parameter element, kernels per parameter tensor) of an fp32 step: read param,
# grad (and momentum, or m and v, or the square average and momentum); write param (and the state).
# RMSprop with momentum, as torch.optim.RMSprop's for-loop runs it: square_avg mul_ and addcmul_,
# sqrt, add_ eps, buf mul_ and addcdiv_, param add_.
FORLOOP = {"adamw": (7, 7), "adam": (7, 7), "rmsprop": (7, 7), "sgd": (5, 3)}
IMPLS = ("foreach", "forloop")

# multi_tensor_apply's launches (aten/src/ATen/native/cuda/MultiTensorApply.cuh, the CUDA 13 build
# that torch 2.15+cu132 is: 32 KB of kernel arguments): a kernel covers kChunkSize = 65536
# elements per block, at most depth_to_max_blocks blocks and depth_to_max_tensors tensors (the
# scalar-list variant, depth_to_max_tensors_scalarlist) per launch, by depth (the tensor lists).
_MTA_CHUNK = 65536
_MTA_MAX_BLOCKS = 2240
_MTA_MAX_TENSORS = (770, 448, 336, 252, 210)
_MTA_MAX_TENSORS_SCALARLIST = (672, 448, 336, 252, 210)


def mta_launches(numels, depth, scalarlist=False):
    """Kernels multi_tensor_apply launches over tensors of `numels` elements: a launch when its
    blocks are full, when its tensor list is full at a tensor's last chunk, and after the last chunk
    (a tensor cut by a full launch carries on in the next)."""
    max_t = (_MTA_MAX_TENSORS_SCALARLIST if scalarlist else _MTA_MAX_TENSORS)[depth - 1]
    launches = tensors = blocks = 0
    live = [n for n in numels if n > 0]
    for i, n in enumerate(live):
        tensors += 1
        chunks = -(-n // _MTA_CHUNK)
        for c in range(chunks):
            blocks += 1
            last = c == chunks - 1
            if blocks == _MTA_MAX_BLOCKS or (last and tensors == max_t) or (last and i == len(live) - 1):
                launches += 1
                blocks = 0
                tensors = 0 if last else 1
    return launches


NAME_MAX = 63  # sim/model.h MODEL_NAME_MAX - 1
# The `optim` line's name of each (models/README.md): the exporter's sgd and rmsprop have momentum.
OPTIM_LINE = {"adamw": "adamw", "adam": "adam", "rmsprop": "rmsprop-momentum", "sgd": "sgd-momentum", "none": "none"}


def _saved(one, two, batch, run, notes):
    """The `saved` line: what autograd kept at the traced batch and twice it, as run-precision
    elements and other bytes, each fitted as C + N*B."""
    from .trace import dtype_tag
    size = {"fp16": 2, "bf16": 2, "fp32": 4}[run]

    def split(tr):
        elems = sum(b for dt, b in tr.saved.items() if dtype_tag(dt) == run and dt.itemsize == size) // size
        return elems, sum(b for dt, b in tr.saved.items() if not (dtype_tag(dt) == run and dt.itemsize == size))

    parts = []
    for key, a, b in zip(("elems", "bytes"), split(one), split(two)):
        f = _fit(a, b, batch)
        if f is None:
            f = (a, 0)
            notes.add("the tensors saved for backward do not scale linearly with the batch: written at batch %d" % batch)
        if f != (0, 0):
            parts.append("%s=%s" % (key, _dim(f)))
    return "saved " + " ".join(parts) if parts else None


def _fit(v1, v2, batch):
    """(C, N) with v = C + N*batch at the traced batch and v2 at twice it, or None if no such
    non-negative integers exist."""
    n, r = divmod(v2 - v1, batch)
    c = v1 - n * batch
    if r != 0 or n < 0 or c < 0:
        return None
    return c, n


def _dim(cn):
    c, n = cn
    if n == 0:
        return str(c)
    nb = "B" if n == 1 else "%d*B" % n
    return nb if c == 0 else "%d+%s" % (c, nb)


# Characters a name keeps as they are; every other byte of its UTF-8 is written %XX. common/txt.c's
# txt_split ends a word at white space and a line at '#'; a ready= list is split at ','; an op's
# name may not hold '='; '~' marks a shortened name and '@' a repeated one: all are escaped.
_NAME_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+:/[]()")


def _units(name):
    """encode_name(name) as a list of its units: safe characters and %XX escapes."""
    return [c if c in _NAME_SAFE else "".join("%%%02X" % b for b in c.encode("utf-8")) for c in name]


def encode_name(name):
    """A module path as the model format can hold it: '%XX' for each UTF-8 byte of a character outside
    _NAME_SAFE ('%' included), so that decode_name gives the name back."""
    return "".join(_units(name))


def decode_name(text):
    """encode_name's inverse (of a name that was not shortened)."""
    out, i = bytearray(), 0
    while i < len(text):
        if text[i] == "%" and len(text[i + 1:i + 3]) == 2 and all(c in "0123456789ABCDEF" for c in text[i + 1:i + 3]):
            out.append(int(text[i + 1:i + 3], 16))
            i += 3
        else:
            out.extend(text[i].encode("utf-8"))
            i += 1
    return out.decode("utf-8", errors="replace")


def _fit_units(units, limit, tail):
    """As many whole units (a character's escape is never cut) as fit in `limit` characters: the last
    ones if tail, else the first ones."""
    kept, n = [], 0
    for u in (reversed(units) if tail else units):
        if n + len(u) > limit:
            break
        kept.append(u)
        n += len(u)
    return "".join(reversed(kept) if tail else kept)


def _short(name, taken):
    """A name the model format reads back (encode_name) of at most NAME_MAX characters: the tail of a
    long one, '~' first; '@2', '@3'... after a repeated one (a shortened tail can repeat another)."""
    units = _units(name or "op")
    enc = "".join(units)
    if len(enc) > NAME_MAX:
        enc = "~" + _fit_units(units, NAME_MAX - 1, tail=True)
    if taken is not None:
        k, base = 2, enc
        while enc in taken:
            suffix = "@%d" % k
            enc = _fit_units(_split_escaped(base), NAME_MAX - len(suffix), tail=False) + suffix
            k += 1
        taken.add(enc)
    return enc


def _split_escaped(text):
    """An encoded name back into its units."""
    units, i = [], 0
    while i < len(text):
        n = 3 if text[i] == "%" else 1
        units.append(text[i:i + n])
        i += n
    return units


def _shape(t, notes):
    dims = [int(d) for d in t.shape] or [1]
    if len(dims) > 4:
        dims = dims[:3] + [math.prod(dims[3:])]
        notes.add("parameters of more than 4 dimensions are written with their trailing dimensions merged")
    return "x".join(str(d) for d in dims)


def build(module, one, two, batch, *, amp, precision, optimizer, tokens, name, source, torch_version, mode,
          optimizer_impl="foreach", measured=None):
    """The file's text (a Summary). measured: timing.Measured, whose times the lines of `one` carry
    (Line.times): version 6, its `measured` line and each line's time_s= and host_s=; the traces are
    then of the step as the measured device runs it, the optimizer's included (step.trace with opt)."""
    notes = set()
    if one.names != two.names:
        raise ExportError("the parameters differ between the traces at batch %d and %d" % (batch, 2 * batch))
    if one.unused:
        notes.add("%d parameter(s) got no gradient (%s%s): written `unused`, ready at the end of backward; real DDP "
                  "needs find_unused_parameters=True for them, and ddpsim warns without --find-unused-parameters" % (len(one.unused), ", ".join(one.unused[:3]),
                                                              ", ..." if len(one.unused) > 3 else ""))
    # What every export approximates, and what this one met (docs/export.md lists them all).
    if measured is None:
        notes.add("the step is traced on the CPU with CUDA's kernel choices applied to RNNs, dropout, attention and "
                  "the optimizer; every other op is written as the CPU's ATen op (one kernel each)")
    else:
        notes.add("the ops are those %s ran in real training steps, the optimizer's traced too (no CUDA kernel "
                  "choices applied%s); each carries its mean time over %d steps (time_s, host_s: docs/export.md); "
                  "ddpsim prices them by these times only with a profile of that device at batch %d"
                  % (measured.device, ": these are the CPU's kernels" if measured.kind == "cpu" else "", measured.steps,
                     batch))
        for n in measured.notes:
            notes.add(n)
        untimed = sum(1 for a in one.lines if a.times is None)
        if untimed:
            notes.add("%d op(s) had no event in the trace: written without times, priced by the profile" % untimed)
        srcs = [a.src for a in one.lines]
        if len(set(srcs)) < len(srcs):
            notes.add("an ATen call written as several lines shares its measured time among them by their FLOPs "
                      "(elementwise lines by their elements)")
    if amp:
        notes.add("autocast casts by the CPU's op lists, which are close to but not CUDA's")
    if one.sdpa_counts:
        notes.add("scaled_dot_product_attention as CUDA selects it on an sm80+ GPU (%s); a fused one is written as "
                  "one attn op a pass (format version 8: no S x S tensor; priced by a profile's attention table, else as "
                  "its GEMMs)"
                  % ", ".join("%d %s" % (one.sdpa_counts[k], k) for k in sorted(one.sdpa_counts)
                              if one.sdpa_counts[k]))
    if any(a.aten in ("lstm", "gru", "rnn_tanh", "rnn_relu") for a in one.lines):
        notes.add("nn.LSTM/GRU/RNN as cuDNN's kernels (per layer and direction: input GEMM, per-step recurrent GEMM "
                  "and pointwise kernel); the pointwise kernels' bytes are the arrays they must move, dropout between "
                  "layers is not written")
    if one.rnn_fallback:
        notes.add("%d RNN call(s) on packed sequences are written as the CPU runs them, not as cuDNN's kernels"
                  % one.rnn_fallback)
    if one.sparse:
        names = [one.names[i] for i in one.sparse]
        notes.add("%d parameter(s) get a sparse gradient (%s): DDP reduces each alone through the process group's "
                  "sparse all-reduce, which NCCL does not support, so ddpsim refuses to predict this file "
                  "(models/README.md)" % (len(names), ", ".join(names[:3])))
    notes.add("integer tensors count as 4-byte elements; views launch nothing")
    recorded_opt = any(a.phase == "optimizer" for a in one.lines)
    if OPTIMIZERS[optimizer] and not recorded_opt:
        notes.add("the optimizer is %s's %s step with its default hyperparameters, not traced; its first step's state "
                  "allocation is not written" % (optimizer, optimizer_impl))
    if one.value_reads:
        notes.add("the forward read tensor values (%d value-dependent ops: .item(), a branch on a tensor, nonzero...): "
                  "the file records the one path the example inputs took" % one.value_reads)
    same = len(one.lines) == len(two.lines) and all(
        a.kind == b.kind and a.name == b.name and a.phase == b.phase and a.ready == b.ready and a.count == b.count
        for a, b in zip(one.lines, two.lines))
    if not same:
        notes.add("the ops differ between batch %d and %d: every dimension is written at batch %d (ddpsim's "
                  "--batch does not rescale this file)" % (batch, 2 * batch, batch))

    # Element types: the parameters' main type (or autocast's) follows the run precision.
    pdt = {}
    for t in one.tensors:
        pdt[dtype_tag(t.dtype)] = pdt.get(dtype_tag(t.dtype), 0) + t.numel()
    param_main = max(pdt, key=pdt.get)
    op_main = amp or param_main
    run = precision or amp or param_main or "fp32"
    if "torch.float64" in one.dtypes:
        notes.add("float64 ops are written as fp32")

    saved = _saved(one, two, batch, run, notes)
    ready_at = {}
    lines_out = []
    for i, a in enumerate(one.lines):
        b = two.lines[i] if same else a
        fits = []
        for j, (x, y) in enumerate(zip(a.dims, b.dims)):
            f = _fit(x, y, batch) if same else (x, 0)
            if f is not None and a.kind == "conv" and j > 0 and f[1]:
                f = None  # a conv's geometry beside its images (n) is a plain number
            if f is None:
                f = (x, 0)
                notes.add("some op dimensions do not scale linearly with the batch: written at batch %d" % batch)
            fits.append(f)
        if any(f[0] == 0 and f[1] == 0 for f in (fits[:7] if a.kind == "conv" else fits)):
            notes.add("ops with an empty operand are left out")
            if a.ready:
                raise ExportError("an empty op carries a gradient-ready point (%s)" % a.name)
            continue
        lines_out.append((a, fits))
        for idx in a.ready:
            ready_at[idx] = len(lines_out) - 1
    if one.pending:
        notes.add("gradients final before any backward kernel are written ready after the next one")

    taken = set()
    pnames = [_short(n, taken) for n in one.names]
    if any(len(encode_name(n)) > NAME_MAX for n in one.names):
        notes.add("parameter names longer than %d characters are shortened to their tail" % NAME_MAX)
    if any(encode_name(n) != n for n in one.names + [a.name for a, _ in lines_out]):
        notes.add("names with characters the model format reserves are written with %XX escapes of their UTF-8")
    # Parameters that never became ready: after the last backward op.
    last_bwd = max((j for j, (a, _) in enumerate(lines_out) if a.phase == "backward"), default=None)
    if last_bwd is None:
        raise ExportError("backward launched no kernel: nothing to write")
    for idx in range(len(one.names)):
        ready_at.setdefault(idx, last_bwd)

    total = sum(t.numel() for t in one.tensors)
    flops = {"forward": 0, "backward": 0, "optimizer": 0}
    for a in one.lines:
        flops[a.phase] += a.flops()
    out = []
    w = out.append
    convs = any(a.kind == "conv" for a, _ in lines_out)
    if convs:
        votes = {k: v for k, v in one.layouts.items() if k}
        layout = max(sorted(votes), key=votes.get) if votes else "nchw"
        if len(votes) > 1:
            notes.add("the convolutions' inputs are in both layouts (%s): the file says %s, the majority's"
                      % (", ".join("%d %s" % (votes[k], k) for k in sorted(votes)), layout))
    # version 5: the saved and optim lines, sparse/unused markers (v2's dimensions, v4's conv and layout too);
    # version 6: the measured line and times; version 7: frozen lines (parameters with requires_grad=False,
    # which DDP never sees and FSDP shards and all-gathers)
    frozen = [(n, p) for n, p in module.named_parameters() if not p.requires_grad]
    # the modules holding parameters whose forward inputs took no gradient (version 7, FSDP's)
    holders = {n.rsplit(".", 1)[0] for n, _ in module.named_parameters() if "." in n}
    no_grad = [n for n in getattr(one, "no_input_grad", []) if any(h == n or h.startswith(n + ".") for h in holders)]
    # version 8: attn lines (fused attention)
    attn = any(a.kind == "attn" for a, _ in lines_out)
    w("ddpsim-model %d" % (8 if attn else 7 if frozen or no_grad else 6 if measured is not None else 5))
    w("# Exported by ddpsim_export (torch %s, %s tensors) from %s." % (torch_version, mode, source or name))
    w("#   %d parameters in %d tensors that require gradients; traced at batch %d (and %d to fit the batch scaling)."
      % (total, len(one.names), batch, 2 * batch))
    for ph in ("forward", "backward"):
        w("#   %s: %d framework ops, %d kernel launches, %.4g GFLOP per sample in GEMMs."
          % (ph, one.framework_ops[ph], one.launches[ph], flops[ph] / batch / 1e9))
    w("#   Op names: module path, ATen op. Derivation: docs/export.md.")
    if amp:
        w("# torch.autocast %s: parameters and gradients fp32; ops in fp32 under autocast say dtype=fp32."
          % {"fp16": "float16", "bf16": "bfloat16"}[amp])
    for n in sorted(notes):
        w("# Approximated: " + n + ".")
    w("name %s" % _short(name, None))
    w("batch %d" % batch)
    w("tokens %d %s" % (tokens[0], tokens[1]))
    if one.input_bytes:
        per = one.input_bytes // batch
        w("input %d" % per if per > 0 else "# input: under one byte per sample")
    if one.output_elems:
        w("output %d" % max(1, one.output_elems // batch))
    # DDP(broadcast_buffers=True) broadcasts every buffer of the module before each forward.
    buffer_bytes = sum(b.numel() * b.element_size() for b in module.buffers())
    if buffer_bytes:
        w("buffers %d" % buffer_bytes)
    w("precision %s" % run)
    if convs:
        w("layout %s" % layout)
    if saved:
        w(saved + "  # saved for backward (saved-tensor hooks): run-precision elements, other bytes")
    w("optim %s" % OPTIM_LINE[optimizer])
    if no_grad:
        w("no_input_grad %s  # modules whose forward inputs took no gradient (FSDP reduces them last)" % ",".join(no_grad))
    if measured is not None:
        # step_rel_sd: the timed steps' spread (sample standard deviation over mean), the measured
        # part of ddpsim's interval (docs/memory.md, "How sure"); only from two steps on.
        spread = ""
        st = [s for s in getattr(measured, "step_s", []) if s > 0]
        if len(st) >= 2:
            mean = sum(st) / len(st)
            sd = (sum((s - mean) ** 2 for s in st) / (len(st) - 1)) ** 0.5
            spread = " step_rel_sd=%.4g" % min(sd / mean, 2.0)
        w("measured device=%s torch=%s steps=%d date=%s%s" % (encode_name(measured.device), encode_name(measured.torch),
                                                            measured.steps, measured.date, spread))
    w("")
    w("# Parameters in registration order (named_parameters(), requires_grad only, tied weights once).")
    for i, (n, t) in enumerate(zip(pnames, one.tensors)):
        tag = dtype_tag(t.dtype)
        fixed = amp or tag != param_main
        w("param %s %s%s%s%s" % (n, _shape(t, notes), " " + (tag or "fp32") if fixed else "",
                                 " sparse" if i in one.sparse else "", " unused" if one.names[i] in one.unused else ""))
    if frozen:
        w("# Frozen parameters (requires_grad=False): no gradient; FSDP still shards and all-gathers them.")
    for n, t in frozen:
        tag = dtype_tag(t.dtype)
        fixed = amp or tag != param_main
        w("frozen %s %s%s" % (n, _shape(t, notes), " " + (tag or "fp32") if fixed else ""))
    ready_lists = {}
    for idx, j in ready_at.items():
        ready_lists.setdefault(j, []).append(idx)
    order = {idx: k for k, idx in enumerate(one.ready)}
    phase = None
    for j, (a, fits) in enumerate(lines_out):
        if a.phase != phase:
            phase = a.phase
            w("")
            w(phase)
        dt = "" if a.dtype in (None, op_main) else " dtype=%s" % a.dtype
        nm = _short(a.name, None)
        if a.kind == "gemm":
            m, n, k, g = fits
            s = "gemm  %s m=%s n=%s k=%s" % (nm, _dim(m), _dim(n), _dim(k))
            if g != (1, 0):
                s += " gemms=%s" % _dim(g)
            if a.count != 1:
                s += " count=%d" % a.count
        elif a.kind == "attn":
            g, q, kv, d, gkv = fits
            s = "attn  %s heads=%s q=%s kv=%s d=%s" % (nm, _dim(g), _dim(q), _dim(kv), _dim(d))
            if gkv != g:
                s += " kv_heads=%s" % _dim(gkv)
            if a.causal:
                s += " causal=1"
            s += " pass=%s" % a.cpass
            if a.count != 1:
                s += " count=%d" % a.count
        elif a.kind == "conv":
            n, c, h, wd, k, r, sz, sh, sw, ph, pw = fits
            s = "conv  %s pass=%s n=%s c=%d h=%d w=%d k=%d r=%d s=%d" % (nm, a.cpass, _dim(n), c[0], h[0], wd[0], k[0],
                                                                       r[0], sz[0])
            for key, (y, x) in (("stride", (sh[0], sw[0])), ("pad", (ph[0], pw[0]))):
                if y != x:
                    s += " %s_h=%d %s_w=%d" % (key, y, key, x)
                elif y != (1 if key == "stride" else 0):
                    s += " %s=%d" % (key, y)
        else:
            s = "ewise %s elems=%s arrays=1" % (nm, _dim(fits[0]))
            if a.count != 1:
                s += " count=%d" % a.count
        s += dt
        if a.times is not None:
            s += " time_s=%.6g host_s=%.6g" % a.times
        if j in ready_lists:
            idxs = sorted(ready_lists[j], key=lambda i: order.get(i, len(order)))
            s += " ready=" + ",".join(pnames[i] for i in idxs)
        w(s)
    if not recorded_opt:
        w("")
        w("optimizer")
    opt = OPTIMIZERS[optimizer] if not recorded_opt else None
    if opt and optimizer_impl == "forloop":
        arrays, kernels = FORLOOP[optimizer]
        w("# %s on fp32 weights (%d arrays moved per parameter element), the for-loop implementation: %d kernels "
          "per tensor." % (optimizer, arrays, kernels))
        w("ewise %s elems=%d arrays=%d dtype=fp32 launches=%d" % (optimizer, total, arrays, kernels * len(one.names)))
    elif opt:
        numels = [t.numel() for t in one.tensors]
        w("# %s as torch.optim runs it on CUDA by default: foreach, one multi_tensor_apply op per line over the"
          % optimizer)
        w("# fp32 parameters (launches: the kernels it takes for %d tensors; docs/export.md)." % len(numels))
        for op, depth, arrays, scalarlist in opt:
            w("ewise %s._foreach_%s elems=%d arrays=%d dtype=fp32 launches=%d fwops=1"
              % (optimizer, op, total, arrays, mta_launches(numels, depth, scalarlist)))
    text = "\n".join(out) + "\n"
    ready_names = [one.names[i] for i in one.ready]
    return Summary(text=text, params=list(one.names), numel=total, ready=ready_names, flops=flops, batch=batch,
                   framework_ops=dict(one.framework_ops), launches=dict(one.launches), notes=sorted(notes),
                   unused=list(one.unused), ops=len(lines_out), timed=sum(1 for a, _ in lines_out if a.times is not None),
                   measured=measured)
