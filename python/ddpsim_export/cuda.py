"""CUDA's kernel choices applied to a step traced on the CPU.

The step runs on the CPU (fake tensors: a fake CUDA tensor cannot run backward without a GPU, the
autograd engine asks the device for its context), so the ATen ops it records are the CPU's. This
TorchFunctionMode replaces, at the Python call, the ops whose CUDA kernels differ from the CPU's in
number or in kind, so that the recorded ops are those a GPU runs (docs/export.md, "CUDA's choices"):

- nn.LSTM, nn.GRU, nn.RNN (torch._VF.lstm/gru/rnn_tanh/rnn_relu) as cuDNN runs them, per layer and
  direction: the input GEMM over all steps, a recurrent GEMM and a fused pointwise kernel per step;
  backward the pointwise and recurrent data GEMM per step, the input data GEMM, the weight-gradient
  GEMMs over all steps and the bias reduction; every weight's gradient ready after all of it
  (cuDNN's backward is one op, _cudnn_rnn_backward);
- dropout (F.dropout in training) as CUDA's one fused kernel, native_dropout, and its backward as
  native_dropout_backward (aten/src/ATen/native/Dropout.cpp, is_fused_kernel_acceptable: a CUDA
  input, 0 < p < 1) where the CPU runs bernoulli_, div_ and mul;
- F.scaled_dot_product_attention as the backend CUDA selects (sdp_choice below); a fused one
  (flash or memory-efficient) runs as that CUDA op on fake tensors (its meta kernel), and as the
  CPU's fused op on real ones, written under the CUDA op's name.
"""

import torch
from torch.overrides import TorchFunctionMode

F = torch.nn.functional

# cuDNN's RNN modes: gates per cell and, per step over B x H elements, the arrays the fused pointwise
# kernel reads and writes forward and backward. LSTM forward reads the input- and hidden-side
# pre-activations of 4 gates and c(t-1), writes h, c and the 4 activated gates it saves for
# backward (15); backward reads dh (from the output and from the next step), dc, c(t-1), c and the
# 4 saved gates, writes the 4 gate gradients and dc(t-1) (14). GRU: reads 3 + 3 pre-activations and
# h(t-1), writes h, the 3 gates and the hidden-side n term (12); backward reads dh twice, h(t-1), the
# 3 gates and the n term, writes 3 + 3 gate gradients and dh(t-1) (14). RNN: reads 2 pre-activations,
# writes h (3); backward reads dh twice and h, writes the pre-activation gradient (4).
_RNN = {"lstm": (4, 15, 14), "gru": (3, 12, 14), "rnn_tanh": (1, 3, 4), "rnn_relu": (1, 3, 4)}


def sdp_choice(q, k, v, attn_mask, dropout_p, enable_gqa):
    """The backend CUDA's scaled_dot_product_attention selects (aten/src/ATen/native/transformers/cuda/
    sdp_utils.cpp, select_sdp_backend: flash, then memory-efficient, then math, on an sm80+ GPU):
    "flash" for fp16/bf16 without an attention mask and q, k, v of one head size <= 256
    (check_for_attn_mask, check_head_dim_size_flash, check_dtypes_low_precision); else "efficient"
    where q and k share a head size and q's and v's are multiples of minimum_gemm_alignment (8 for a
    2-byte type, 4 for fp32; check_head_dim_size_mem_efficient), grouped-query heads excepted (the
    memory-efficient kernel does not take enable_gqa); else "math"."""
    two = q.dtype in (torch.float16, torch.bfloat16)
    d, dk, dv = q.shape[-1], k.shape[-1], v.shape[-1]
    gqa = enable_gqa and q.dim() >= 3 and k.shape[-3] != q.shape[-3]
    if q.dtype not in (torch.float16, torch.bfloat16, torch.float32) or k.dtype != q.dtype or v.dtype != q.dtype:
        return "math"
    if two and attn_mask is None and d == dk == dv and d <= 256:
        return "flash"
    align = 8 if two else 4
    if not gqa and d == dk and d % align == 0 and dv % align == 0 and d > 0 and dv > 0:
        return "efficient"
    return "math"


def _is_fake(t):
    from torch._subclasses.fake_tensor import FakeTensor

    return isinstance(t, FakeTensor)


def sdpa_key(q, k, v, has_mask):
    """What names a fused attention call's backward by its forward: shapes, type, mask."""
    return (tuple(q.shape), tuple(k.shape), tuple(v.shape), str(q.dtype), bool(has_mask))


class CudaChoices(TorchFunctionMode):
    """Applies CUDA's choices (the module docstring) while a step is traced; `rec` is the Recorder."""

    def __init__(self, rec):
        super().__init__()
        self.rec = rec

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.dropout:
            return self._dropout(func, args, kwargs)
        if func is F.scaled_dot_product_attention:
            return self._sdpa(func, args, kwargs)
        for mode in _RNN:
            if func is getattr(torch._VF, mode, None):
                return self._rnn(mode, func, args, kwargs)
        return func(*args, **kwargs)

    def _dropout(self, func, args, kwargs):
        names = ("input", "p", "training", "inplace")
        a = dict(zip(names, args), **kwargs)
        x, p = a["input"], a.get("p", 0.5)
        if (a.get("training", True) and not a.get("inplace", False) and isinstance(x, torch.Tensor)
                and 0 < p < 1 and x.numel() > 0):
            return torch.ops.aten.native_dropout(x, p, True)[0]
        return func(*args, **kwargs)

    def _sdpa(self, func, args, kwargs):
        names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
        a = dict(zip(names, args), **kwargs)
        q, k, v = a["query"], a["key"], a["value"]
        mask = a.get("attn_mask")
        # Under autocast CUDA runs scaled_dot_product_attention in autocast's lower precision (it is on
        # the lower_precision_fp list of aten/src/ATen/autocast_mode.cpp), whatever its inputs' type:
        # an fp32 q (rotary embeddings computed in fp32) still selects flash.
        low = self.rec.autocast_dtype
        cast = low is not None and torch.float32 in (q.dtype, k.dtype, v.dtype)
        qc, kc, vc = (q.to(low), k.to(low), v.to(low)) if cast else (q, k, v)
        choice = sdp_choice(qc, kc, vc, mask, a.get("dropout_p", 0.0), a.get("enable_gqa", False))
        self.rec.sdpa_counts[choice] = self.rec.sdpa_counts.get(choice, 0) + 1
        causal, scale, p = bool(a.get("is_causal", False)), a.get("scale"), float(a.get("dropout_p", 0.0))
        if choice != "math" and q.dim() == 4 and k.dim() == 4 and k.shape[-3] != q.shape[-3] and \
                q.shape[-3] % k.shape[-3] == 0 and a.get("enable_gqa", False):
            # grouped-query heads: the fused op here takes q's heads; K and V broadcast to them (the
            # attn line's FLOPs are the query heads' either way)
            r = q.shape[-3] // k.shape[-3]
            kc, vc = kc.repeat_interleave(r, dim=-3), vc.repeat_interleave(r, dim=-3)
        q, k, v = qc, kc, vc
        gqa = k.shape[-3] != q.shape[-3] if q.dim() == 4 and k.dim() == 4 else True
        if choice == "math" or q.dim() != 4 or gqa or (mask is not None and causal) or q.device.type == "cuda":
            # (on a GPU's real tensors CUDA makes its own choice, recorded as it runs)
            return func(*args, **kwargs)
        aten = torch.ops.aten
        if _is_fake(q) and (mask is None or mask.is_floating_point()):
            # On fake tensors the CUDA op itself runs (its meta kernel): its name, its gradients (an
            # additive mask's too, T5's position bias), the dropout inside the kernel.
            if choice == "flash":
                return aten._scaled_dot_product_flash_attention(q, k, v, p, causal, False, scale=scale)[0]
            return aten._scaled_dot_product_efficient_attention(q, k, v, mask, True, p, causal, scale=scale)[0]
        if mask is not None and mask.requires_grad:  # the CPU's fused op takes no gradient for a mask
            self.rec.sdpa_counts[choice] -= 1
            key = "%s written as the CPU's math path (a mask that needs a gradient, on real tensors)" % choice
            self.rec.sdpa_counts[key] = self.rec.sdpa_counts.get(key, 0) + 1
            return func(*args, **kwargs)
        # Real CPU tensors (or a boolean mask): the CPU's fused op, which has the fused kernels' inputs,
        # outputs and one op each way, written under the CUDA op's name (trace.py).
        self.rec.sdpa_names[sdpa_key(q, k, v, mask is not None)] = choice
        return aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, attn_mask=mask, scale=scale)[0]

    def _rnn(self, mode, func, args, kwargs):
        packed = isinstance(args[1], torch.Tensor) if mode == "lstm" else isinstance(args[2], torch.Tensor)
        if packed or kwargs:
            self.rec.rnn_fallback += 1
            return func(*args, **kwargs)
        x, hx, params, has_biases, num_layers, _dropout, _train, bidirectional, batch_first = args
        hxs = list(hx) if mode == "lstm" else [hx]
        params = list(params)
        per = len(params) // (num_layers * (2 if bidirectional else 1))
        spec = dict(mode=mode, layers=int(num_layers), dirs=2 if bidirectional else 1, bias=bool(has_biases),
                    batch_first=bool(batch_first), per=per, nparams=len(params), nhx=len(hxs))
        return _CudnnRNN.apply(self.rec, func, spec, x, *hxs, *params)


def _rnn_lines(rec, spec, x, params, phase):
    """Emit cuDNN's kernels for one RNN call, forward or backward (the module docstring)."""
    mode, layers, dirs, per = spec["mode"], spec["layers"], spec["dirs"], spec["per"]
    gates, a_fwd, a_bwd = _RNN[mode]
    T, B = (x.shape[1], x.shape[0]) if spec["batch_first"] and x.dim() == 3 else (x.shape[0], x.shape[1] if
                                                                                   x.dim() == 3 else 1)
    dt = params[0].dtype if rec.autocast_dtype is None else rec.autocast_dtype
    # per layer and direction: w_ih [G*H, I], w_hh [G*H, Hout], (b_ih, b_hh), (w_hr [P, H] with proj_size)
    gh, hout = params[1].shape[0], params[1].shape[1]  # Hout: P with a projection, else H
    H = gh // gates
    proj = per == (5 if spec["bias"] else 3)
    order = [(l, d) for l in range(layers) for d in range(dirs)]
    for l, d in (order if phase == "forward" else reversed(order)):
        w_ih = params[(l * dirs + d) * per]
        il = w_ih.shape[1]
        tag = "l%d%s." % (l, "_reverse" if d else "")
        if phase == "forward":
            rec.emit_op("gemm", tag + "input_gemm", mode, [gh, T * B, il, 1], dt)
            rec.emit_op("gemm", tag + "recurrent_gemm", mode, [gh, B, hout, 1], dt, count=T)
            if proj:
                rec.emit_op("gemm", tag + "projection_gemm", mode, [hout, B, H, 1], dt, count=T)
            rec.emit_op("ewise", tag + "pointwise", mode, [B * H * a_fwd], dt, count=T)
        else:
            rec.emit_op("ewise", tag + "pointwise_backward", mode, [B * H * a_bwd], dt, count=T)
            rec.emit_op("gemm", tag + "recurrent_dgrad", mode, [hout, B, gh, 1], dt, count=T)
            if proj:
                rec.emit_op("gemm", tag + "projection_dgrad", mode, [H, B, hout, 1], dt, count=T)
            rec.emit_op("gemm", tag + "input_dgrad", mode, [il, T * B, gh, 1], dt)
    if phase == "backward":  # cudnnRNNBackwardWeights, after the data gradients of every layer
        for l, d in reversed(order):
            il = params[(l * dirs + d) * per].shape[1]
            tag = "l%d%s." % (l, "_reverse" if d else "")
            rec.emit_op("gemm", tag + "input_wgrad", mode, [il, gh, T * B, 1], dt)
            rec.emit_op("gemm", tag + "recurrent_wgrad", mode, [hout, gh, T * B, 1], dt)
            if proj:
                rec.emit_op("gemm", tag + "projection_wgrad", mode, [H, hout, T * B, 1], dt)
            if spec["bias"]:
                rec.emit_op("ewise", tag + "bias_grad", mode, [T * B * gh + 2 * gh], dt)


class _CudnnRNN(torch.autograd.Function):
    """One cuDNN RNN call: the CPU's own function computes the outputs (their shapes, or with real
    tensors their values) with the recorder muted, and cuDNN's kernels are written instead; backward
    writes cuDNN's backward kernels and returns gradients of the right shapes (zeros: the values of a
    traced step's gradients are not used)."""

    @staticmethod
    def forward(ctx, rec, func, spec, x, *rest):
        nhx = spec["nhx"]
        hxs, params = list(rest[:nhx]), list(rest[nhx:])
        with rec.muted():
            hx = tuple(hxs) if spec["mode"] == "lstm" else hxs[0]
            out = func(x, hx, params, spec["bias"], spec["layers"], 0.0, True, spec["dirs"] == 2,
                       spec["batch_first"])
        _rnn_lines(rec, spec, x, params, "forward")
        ctx.rec, ctx.spec = rec, spec
        ctx.set_materialize_grads(False)  # cuDNN takes no gradient for an unused hy or cy: no zeros
        ctx.save_for_backward(x, *rest)
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        saved = ctx.saved_tensors
        x, rest = saved[0], saved[1:]
        spec, rec = ctx.spec, ctx.rec
        _rnn_lines(rec, spec, x, list(rest[spec["nhx"]:]), "backward")
        with rec.muted():
            gx = torch.zeros_like(x) if ctx.needs_input_grad[3] else None
            grest = [torch.zeros_like(t) if ctx.needs_input_grad[4 + i] else None for i, t in enumerate(rest)]
        return (None, None, None, gx, *grest)


def sdpa_note(counts):
    """A line for the file's header on the attention backends chosen, or None."""
    if not counts:
        return None
    return ("scaled_dot_product_attention as CUDA selects it (sm80+): %s"
            % ", ".join("%d %s" % (counts[k], k) for k in sorted(counts)))
