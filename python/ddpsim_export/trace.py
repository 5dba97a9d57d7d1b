"""One training step of a module, recorded at the dispatcher.

`trace_step` runs forward, the loss and backward once (on fake tensors, or on the module's real
tensors) under a TorchDispatchMode that sees every ATen op after autograd and autocast have done
their work, in the order the ops run; post-accumulate-grad hooks on the parameters say after which
op each gradient became final. Every op is turned into the model format's terms (models/README.md):

- matrix products (mm, addmm, bmm, baddbmm, _scaled_mm) as GEMMs in cuBLAS's column-major view:
  torch's A[M,K] @ B[K,N] is `m=N n=M k=K`, with `batch=` the bmm batch count;
- 2-D convolutions without groups, dilation or transposition as `conv` lines (forward, and
  backward's input gradient and weight gradient as output_mask asks for them), so that a profile's
  convolution tables and its kernels' layout price them; other convolutions as implicit GEMMs,
  groups as the batch count; a forward bias as the separate add cuDNN leaves to PyTorch;
- fused attention (the _scaled_dot_product_*_attention ops) as the model format's fused attention
  op, one `attn` line a pass (format version 8): its heads, lengths, head size, key/value heads
  and is_causal, as the op's schema names them;
- an embedding lookup as the gather it is (the rows it reads and writes, not the table);
- kernels cuda.py states in place of the CPU's ops (cuDNN's RNN kernels), through emit_op;
- every other op that launches a kernel as elementwise work by the bytes it reads and writes;
- views, allocations and detach launch nothing: counted as framework ops only.

docs/export.md says what each choice rests on.
"""

import contextlib
import math

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .cuda import sdpa_key

aten = torch.ops.aten

# Ops that launch no kernel: allocations, metadata, host-side reads. Views are found by their schema
# (OpOverload.is_view); _unsafe_view has no alias annotation but is one.
_NO_KERNEL = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "_unsafe_view", "detach", "alias",
    "lift_fresh", "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "is_same_size", "_local_scalar_dense",
    "set_", "resize_", "_reshape_alias", "is_nonzero", "_has_compatible_shallow_copy_type", "unbind", "split",
    "split_with_sizes", "chunk", "_sparse_coo_tensor_with_dims_and_tensors", "_coalesced_",
}

# Ops whose result depends on tensor values (a Python branch on `.item()` or `if tensor:` reads one
# through _local_scalar_dense; the others size their output by the values).
_VALUE_OPS = {"_local_scalar_dense", "nonzero", "masked_select", "_unique2", "unique_dim", "unique_consecutive"}

_MM = {"mm", "addmm", "_scaled_mm"}
_BMM = {"bmm", "baddbmm"}
_SDPA_FWD = {
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
}
_SDPA_BWD = {name + "_backward" for name in _SDPA_FWD}


def _flat_tensors(x, out):
    if isinstance(x, torch.Tensor):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for y in x:
            _flat_tensors(y, out)
    elif isinstance(x, dict):
        for y in x.values():
            _flat_tensors(y, out)
    return out


def _footprint(t):
    """Elements a kernel reads or writes for tensor t: a broadcast (stride 0) dimension once."""
    n = 1
    for size, stride in zip(t.shape, t.stride()):
        if stride != 0:
            n *= size
    return n


def dtype_tag(dt):
    """The model format's element type for a torch dtype: fp16, bf16, fp32 for the others (fp64 is
    written as fp32, an approximation the exporter reports); None if not floating."""
    if dt == torch.float16:
        return "fp16"
    if dt == torch.bfloat16:
        return "bf16"
    if dt in (torch.float32, torch.float64):
        return "fp32"
    return None


class Line:
    """One line of the model file: a GEMM (m, n, k, batch), a convolution pass (`cpass`, its geometry)
    or elementwise work (elems, in elements of the op's own floating type; bytes of integer tensors
    as 4-byte elements)."""

    __slots__ = ("phase", "kind", "name", "aten", "dims", "dtype", "ready", "cpass", "count", "src", "times", "causal")

    def __init__(self, phase, kind, name, aten_name, dims, dtype, src=0):
        self.phase = phase
        self.kind = kind
        self.name = name
        self.aten = aten_name
        self.dims = dims  # gemm: [m, n, k, batch]; ewise: [elems]; conv: _conv_geometry's; attn: [heads, q, kv, d, kv_heads]
        self.dtype = dtype
        self.ready = []
        self.cpass = None  # a conv line's pass: "fwd", "dgrad" or "wgrad"; an attn line's: "fwd" or "bwd"
        self.causal = False  # an attn line's is_causal
        self.count = 1     # runs in a row (an RNN's per-step kernels: count=T)
        self.src = src     # the recorded ATen call it comes from (lines of one call share it)
        self.times = None  # (device s, host s) of one run, measured (timing.py), or None

    def flops(self):
        if self.kind == "conv":
            return _conv_flops(self.cpass, self.dims) * self.count
        if self.kind == "attn":
            # FlashAttention's count (sim/model.c, model_op_flops): 4 heads q kv d, causal half,
            # backward 2.5 times the forward
            g, q, kv, d, _ = self.dims
            f = 4 * g * q * kv * d
            return f * (0.5 if self.causal else 1) * (2.5 if self.cpass == "bwd" else 1) * self.count
        if self.kind != "gemm":
            return 0
        m, n, k, g = self.dims
        return 2 * m * n * k * g * self.count

    def share(self):
        """What the line weighs when one call's measured time is shared among its lines: its FLOPs,
        an elementwise line its elements."""
        return self.flops() or self.dims[0] * self.count


def _gemm_mm(a, b):
    """torch A[M,K] @ B[K,N] (each maybe with a leading batch) in cuBLAS's view: m=N, n=M, k=K."""
    if a.dim() == 3:
        g, mm, kk = a.shape
        return [b.shape[-1], mm, kk, g]
    mm, kk = a.shape
    return [b.shape[1], mm, kk, 1]


def _conv_gemms(func_name, args, out):
    """Implicit GEMMs of a convolution op: a list of (suffix, [m, n, k, groups])."""
    if func_name == "convolution":
        x, w = args[0], args[1]
        transposed, groups = args[6], args[8]
        nb = x.shape[0]
        ksz = math.prod(w.shape[2:])
        if not transposed:
            return [("", [w.shape[0] // groups, nb * math.prod(out.shape[2:]), w.shape[1] * ksz, groups])]
        return [("", [w.shape[1] * ksz, nb * math.prod(x.shape[2:]), w.shape[0] // groups, groups])]
    # convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
    #                      output_padding, groups, output_mask)
    gy, x, w = args[0], args[1], args[2]
    transposed, groups, mask = args[7], args[9], args[10]
    nb = x.shape[0]
    ksz = math.prod(w.shape[2:])
    res = []
    if not transposed:
        pix = nb * math.prod(gy.shape[2:])
        cin_g, cout_g = w.shape[1], w.shape[0] // groups
        if mask[0]:
            res.append(("dgrad", [cin_g * ksz, pix, cout_g, groups]))
        if mask[1]:
            res.append(("wgrad", [cout_g, cin_g * ksz, pix, groups]))
    else:
        pix = nb * math.prod(x.shape[2:])
        cin_g, cout_g = w.shape[0] // groups, w.shape[1]
        if mask[0]:
            res.append(("dgrad", [cin_g, pix, cout_g * ksz, groups]))
        if mask[1]:
            res.append(("wgrad", [cin_g, cout_g * ksz, pix, groups]))
    return res


def _conv_geometry(x, w, stride, padding, dilation, transposed, groups):
    """[n, c, h, w, k, r, s, stride_h, stride_w, pad_h, pad_w] of a convolution the model format's
    `conv` line states (2-D, not transposed, one group, no dilation; models/README.md), else None."""
    if transposed or groups != 1 or x.dim() != 4 or w.dim() != 4 or any(d != 1 for d in dilation):
        return None
    if len(stride) != 2 or len(padding) != 2 or max(padding) > 65536 or max(stride) > 65536:
        return None
    n, c, h, wd = (int(d) for d in x.shape)
    return [n, c, h, wd, int(w.shape[0]), int(w.shape[2]), int(w.shape[3]), int(stride[0]), int(stride[1]),
            int(padding[0]), int(padding[1])]


def _conv_flops(cpass, dims):
    """2mnk of a `conv` line's implicit GEMM, as sim/model.c's model_conv_gemm forms it."""
    n, c, h, w, k, r, s, sh, sw, ph, pw = dims
    pq = ((h + 2 * ph - r) // sh + 1) * ((w + 2 * pw - s) // sw + 1)
    if cpass == "dgrad":
        return 2 * c * n * h * w * (-(-k * r * s // (sh * sw)))
    return 2 * k * n * pq * c * r * s


def _layout(x):
    """The memory format of a 4-D activation: "nhwc" (torch.channels_last), "nchw" (contiguous), or
    None where both or neither hold (one channel, one pixel, or other strides)."""
    last, plain = x.is_contiguous(memory_format=torch.channels_last), x.is_contiguous()
    if last != plain:
        return "nhwc" if last else "nchw"
    return None


def _sdpa_attn(func, args, kwargs, bwd):
    """A fused attention op's `attn` dimensions and is_causal: q [b,h,sq,d], k [b,hkv,sk,d] (its
    forward's q, k, v are the first arguments, its backward's follow the output's gradient);
    is_causal where the op's schema has it (aten/src/ATen/native/native_functions.yaml), else False."""
    q, k = (args[1], args[2]) if bwd else (args[0], args[1])
    b, h, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    names = [a.name for a in func._schema.arguments]
    causal = False
    if "is_causal" in names:
        i = names.index("is_causal")
        causal = bool(kwargs["is_causal"] if "is_causal" in kwargs else args[i] if i < len(args) else False)
    return [b * h, sq, sk, d, b * hkv], causal


class Recorder(TorchDispatchMode):
    """Records the ops of one step into lines. `phase` is set by the caller; `where()` names the
    module running (a ModuleTracker's deepest module) or ''."""

    def __init__(self, where):
        super().__init__()
        self.where = where
        self.phase = "forward"
        self.lines = []
        self.framework_ops = {"forward": 0, "backward": 0, "optimizer": 0}
        self.launches = {"forward": 0, "backward": 0, "optimizer": 0}
        self.calls = 0         # ATen calls recorded (Line.src)
        self.scope = None      # a name for the ops' module in place of where() (the optimizer's)
        self.unknown = {}      # aten ops counted as elementwise work although they may not be
        self.dtypes = {}       # floating dtypes seen on ops, name -> count
        self.pending_ready = []
        self.layouts = {}      # forward conv lines per activation layout ("nchw", "nhwc", None)
        self.value_reads = 0   # ops whose result depends on tensor values (_VALUE_OPS)
        self.mute = 0          # > 0: ops run unrecorded (cuda.py writes CUDA's kernels in their place)
        self.autocast_dtype = None  # torch.float16 or bfloat16 under --amp: what cuda.py's RNN kernels run in
        self.sdpa_names = {}   # cuda.sdpa_key -> "flash" or "efficient": the CUDA op a CPU fused op stands for
        self.sdpa_counts = {}  # attention calls per backend CUDA selects
        self.rnn_fallback = 0  # RNN calls left as the CPU runs them (packed sequences)
        self.sparse_grads = set()  # ids of parameters whose gradient was sparse

    def _emit(self, kind, suffix, aten_name, dims, dtype):
        mod = self.scope if self.scope is not None else self.where()
        name = aten_name + ("." + suffix if suffix else "")
        if mod:
            name = mod + "." + name
        line = Line(self.phase, kind, name, aten_name, dims, dtype, self.calls)
        if self.pending_ready and self.phase == "backward":
            line.ready.extend(self.pending_ready)
            self.pending_ready = []
        self.lines.append(line)
        self.launches[self.phase] += 1
        return line

    @contextlib.contextmanager
    def muted(self):
        self.mute += 1
        try:
            yield
        finally:
            self.mute -= 1

    def emit_op(self, kind, suffix, aten_name, dims, torch_dtype, count=1):
        """A line for a kernel cuda.py states (its module, `aten_name.suffix`), as the ops recorded."""
        self._count_dtype(torch_dtype)
        self.calls += 1
        line = self._emit(kind, suffix, aten_name, dims, dtype_tag(torch_dtype))
        line.count = count
        self.framework_ops[self.phase] += 1
        return line

    def ready(self, index):
        """Parameter `index`'s gradient is final now: after the last op recorded in backward."""
        if self.lines and self.lines[-1].phase == "backward":
            self.lines[-1].ready.append(index)
        else:
            self.pending_ready.append(index)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func.namespace not in ("aten",) or self.mute:
            return out
        self.framework_ops[self.phase] += 1
        self.calls += 1
        name = func.__name__.split(".")[0]
        if name in _VALUE_OPS and self.phase != "optimizer":  # (torch.optim reads its step counts)
            self.value_reads += 1
        if func.is_view or name in _NO_KERNEL:
            return out
        if name in _MM or name in _BMM:
            a, b = (args[1], args[2]) if name in ("addmm", "baddbmm") else (args[0], args[1])
            dt = dtype_tag(a.dtype)
            self._count_dtype(a.dtype)
            self._emit("gemm", "", name, _gemm_mm(a, b), dt)
            return out
        if name in ("convolution", "convolution_backward"):
            self._convolution(name, args, out)
            return out
        if name in _SDPA_FWD or name in _SDPA_BWD:
            bwd = name in _SDPA_BWD
            q, k, v = args[1:4] if bwd else args[0:3]
            self._count_dtype(q.dtype)
            shown = name
            if name.endswith("_for_cpu") or name.endswith("_for_cpu_backward"):
                mask = kwargs.get("attn_mask", args[8] if bwd and len(args) > 8 else None)
                choice = self.sdpa_names.get(sdpa_key(q, k, v, mask is not None))
                if choice:  # a fused op CUDA runs (cuda.py): written under its name
                    shown = "_scaled_dot_product_%s_attention%s" % (choice, "_backward" if bwd else "")
            dims, causal = _sdpa_attn(func, args, kwargs, bwd)
            line = self._emit("attn", "", shown, dims, dtype_tag(q.dtype))
            line.cpass, line.causal = ("bwd" if bwd else "fwd"), causal
            return out
        if name == "embedding":
            # A lookup is a gather: it reads the indices and the rows they name and writes them
            # (aten/src/ATen/native/Embedding.cpp: index_select of the weight), not the whole table.
            w, idx = args[0], args[1]
            rows = _footprint(out)
            self._count_dtype(w.dtype)
            self._emit("ewise", "", name, [2 * rows + (_footprint(idx) * idx.element_size() + 3) // 4],
                       dtype_tag(w.dtype))
            return out
        tensors = _flat_tensors(args, [])
        _flat_tensors(kwargs, tensors)
        outs = _flat_tensors(out, [])
        elems, dt = 0, None
        for t in tensors + outs:
            tag = dtype_tag(t.dtype)
            if tag:
                elems += _footprint(t)
                dt = dt or t.dtype
            else:
                elems += (_footprint(t) * t.element_size() + 3) // 4
        if dt is not None:
            self._count_dtype(dt)
        if elems == 0:
            return out
        self._emit("ewise", "", name, [elems], dtype_tag(dt) if dt is not None else None)
        return out

    def _convolution(self, name, args, out):
        fwd = name == "convolution"
        x = args[0] if fwd else args[1]
        dt = dtype_tag(x.dtype)
        self._count_dtype(x.dtype)
        # convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
        # convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
        #                      output_padding, groups, output_mask)
        geo = _conv_geometry(*((x, args[1], args[3], args[4], args[5], args[6], args[8]) if fwd else
                               (x, args[2], args[4], args[5], args[6], args[7], args[9])))
        if geo is not None:
            passes = ["fwd"] if fwd else [p for p, on in zip(("dgrad", "wgrad"), args[10][:2]) if on]
            for p in passes:
                self._emit("conv", "" if fwd else p, name, geo, dt).cpass = p
            if fwd:
                lay = _layout(x)
                self.layouts[lay] = self.layouts.get(lay, 0) + 1
        else:
            for suffix, dims in _conv_gemms(name, args, out if fwd else None):
                self._emit("gemm", suffix, name, dims, dt)
        if fwd and args[2] is not None:
            # cuDNN leaves the bias to PyTorch, which adds it to the output in place (aten/src/ATen/native/
            # cudnn/ConvShared.cpp, NOTE [ Convolution design ]; Convolution.cpp, _convolution): read and
            # write the output, read the bias.
            self._emit("ewise", "bias", name, [2 * _footprint(out) + args[2].numel()], dt)
        if not fwd and args[10][2]:
            self._emit("ewise", "dbias", name, [_footprint(args[0]) + out[2].numel()], dt)

    def _count_dtype(self, dt):
        self.dtypes[str(dt)] = self.dtypes.get(str(dt), 0) + 1
