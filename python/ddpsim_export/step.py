"""One traced training step: parameters swapped for fake (or kept real) leaves with gradient hooks,
forward, loss, backward, all under the Recorder (trace.py)."""

import contextlib

import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils.module_tracker import ModuleTracker

from . import ExportError
from .cuda import CudaChoices
from .trace import Recorder, _flat_tensors

try:  # what fake tensors raise where the forward reads a value (torch/_subclasses/fake_tensor.py)
    from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException

    _VALUE_READS = (DataDependentOutputException, DynamicOutputShapeException)
except ImportError:
    _VALUE_READS = ()


class Trace:
    """A recorded step: `lines` (trace.Line), `names` (trainable parameter names in registration
    order, tied ones once), `tensors` (their tensors), `ready` (indices into names, in the order the
    gradients became final), `framework_ops` and `launches` per phase, `unused` (names that got no
    gradient), `output_elems` (elements of the output per batch), `input_bytes` (bytes of the
    inputs per batch), `dtypes` (floating types the ops ran in, with counts), `layouts` (forward
    `conv` lines per input layout: "nchw", "nhwc", or None where the strides do not tell), `value_reads`
    (ops whose result depended on tensor values: the control flow recorded is one run's), `sparse`
    (indices of parameters whose gradient was sparse), `sdpa_counts` (attention calls per backend CUDA
    selects), `rnn_fallback` (RNN calls left as the CPU runs them) and `saved` (what autograd saved for
    backward in forward: {dtype: bytes}, each storage once, the module's parameters and buffers left
    out; docs/memory.md), `no_input_grad` (the submodules, by path in the order they first ran forward,
    none of whose tensor inputs required a gradient: FSDP registers no post-backward hook on such a
    module, docs/fsdp.md)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _scale_inputs(x, batch, scale):
    """Tensors whose first dimension is the batch, repeated `scale` times along it."""
    if isinstance(x, torch.Tensor):
        if scale > 1 and x.dim() > 0 and x.shape[0] == batch:
            return torch.cat([x] * scale, dim=0)
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(_scale_inputs(y, batch, scale) for y in x)
    if isinstance(x, dict):
        return {k: _scale_inputs(v, batch, scale) for k, v in x.items()}
    return x


def _nbytes(x):
    if isinstance(x, torch.Tensor):
        return x.numel() * x.element_size()
    if isinstance(x, (list, tuple)):
        return sum(_nbytes(y) for y in x)
    if isinstance(x, dict):
        return sum(_nbytes(y) for y in x.values())
    return 0


def _floats(x, out):
    if isinstance(x, torch.Tensor):
        if torch.is_floating_point(x):
            out.append(x)
    elif isinstance(x, dict) or hasattr(x, "values") and callable(x.values):
        for y in x.values():
            _floats(y, out)
    elif isinstance(x, (list, tuple)):
        for y in x:
            _floats(y, out)
    return out


def _default_loss(output):
    loss = getattr(output, "loss", None)
    if isinstance(loss, torch.Tensor):
        return loss
    if isinstance(output, torch.Tensor) and output.dim() == 0:
        return output
    floats = _floats(output, [])
    if not floats:
        raise ExportError("the module's output has no floating tensor to take a loss of: pass loss_fn")
    total = floats[0].sum()
    for t in floats[1:]:
        total = total + t.sum()
    return total


# The autocast dtypes the exporter runs under (--amp fp16|bf16), by the model format's names.
AUTOCAST = {"fp16": torch.float16, "bf16": torch.bfloat16}


def _autocast(device, amp):
    return torch.autocast(device, dtype=AUTOCAST[amp]) if amp else contextlib.nullcontext()


def train_step(module, args, kwargs, loss_fn, amp, opt):
    """One real training step of the module on its own device, as the timed steps run it (timing.py):
    the gradients set to None, forward and the loss under autocast (amp), backward, opt.step()."""
    opt.zero_grad(set_to_none=True)
    device = next(module.parameters()).device.type
    with _autocast(device, amp):
        loss = (loss_fn or _default_loss)(module(*args, **kwargs))
    loss.backward()
    opt.step()


def trace(module, args, kwargs, loss_fn, mode, amp, batch, scale, opt=None):
    """The step recorded. With opt (a torch.optim optimizer of the module's parameters; real mode):
    the step as the module's device runs it, for timing.py: one unrecorded step first (the
    optimizer's state exists, as in every timed step), no CUDA choices applied (the device makes its
    own), and opt.step() recorded as the optimizer phase."""
    named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
    if not named:
        raise ExportError("the module has no parameters that require gradients: DDP has nothing to all-reduce")
    args = _scale_inputs(args, batch, scale)
    kwargs = _scale_inputs(kwargs, batch, scale)
    input_bytes = _nbytes(args) + _nbytes(kwargs)
    was_training = module.training
    module.train()
    if opt is not None:
        try:
            train_step(module, args, kwargs, loss_fn, amp, opt)
        except ExportError:
            raise
        except Exception as exc:
            raise ExportError("a training step failed on the example inputs (batch %d): %s: %s"
                              % (batch * scale, type(exc).__name__, exc)) from exc
    ready = []
    tracker = ModuleTracker()
    root = type(module).__name__ + "."

    def where():
        # the name last among equals: tracker.parents is a set, whose order follows string hashing
        # (PYTHONHASHSEED), and the file must not
        deepest = max(tracker.parents, key=lambda s: (s.count("."), len(s), s))
        if deepest == "Global" or deepest == type(module).__name__:
            return ""
        return deepest[len(root):] if deepest.startswith(root) else deepest

    rec = Recorder(where)
    fake = None
    handles = []
    try:
        if mode == "fake":
            from torch._subclasses.fake_tensor import FakeTensorMode

            fake = FakeTensorMode(allow_non_fake_inputs=True)
            frozen = {n: _fake(fake, p) for n, p in module.named_parameters() if not p.requires_grad}
            leaves = {n: _fake(fake, p) for n, p in named}
            buffers = {n: _fake(fake, b) for n, b in module.named_buffers()}
            args, kwargs = _to_fake(fake, args), _to_fake(fake, kwargs)
            state = {**frozen, **leaves, **buffers}
        else:
            leaves = dict(named)
            for p in leaves.values():
                p.grad = None
        tensors = [leaves[n] for n, _ in named]
        sparse = set()

        def hook(i):
            def on_ready(tensor):
                ready.append(i)
                rec.ready(i)
                if tensor.grad is not None and tensor.grad.layout != torch.strided:
                    sparse.add(i)  # nn.Embedding(sparse=True): DDP never buckets it (models/README.md)
            return on_ready

        for i, t in enumerate(tensors):
            handles.append(t.register_post_accumulate_grad_hook(hook(i)))

        # FSDP2 hooks a unit's post-backward on its forward inputs that require gradients
        # (FSDPParamGroup._register_post_backward_hook); a module whose inputs have none reduces in
        # the final callback instead. Which modules those are, as forward calls them.
        no_input_grad = []

        def pre(name):
            def on_forward(_mod, fargs, fkwargs):
                ins = _flat_tensors((fargs, fkwargs), [])
                if not any(t.requires_grad for t in ins) and name not in no_input_grad:
                    no_input_grad.append(name)
            return on_forward

        for mname, sub in module.named_modules():
            if mname:
                handles.append(sub.register_forward_pre_hook(pre(mname), with_kwargs=True))

        def forward():
            if fake is not None:
                return torch.func.functional_call(module, state, args, kwargs, tie_weights=True, strict=False)
            return module(*args, **kwargs)

        device = next((t.device.type for t in tensors), "cpu")
        autocast = _autocast(device, amp)
        rec.autocast_dtype = AUTOCAST[amp] if amp else None
        owned = list(state.values()) if fake is not None else list(module.parameters()) + list(module.buffers())
        skip = {StorageWeakRef(t.untyped_storage()).cdata for t in owned}
        saved, seen = {}, set()

        def pack(t):  # each storage autograd keeps for backward, once
            st = t.untyped_storage()
            key = StorageWeakRef(st).cdata
            if key not in skip and key not in seen:
                seen.add(key)
                saved[t.dtype] = saved.get(t.dtype, 0) + st.nbytes()
            return t

        if opt is not None:
            opt.zero_grad(set_to_none=True)
        choices = CudaChoices(rec) if opt is None else contextlib.nullcontext()
        with tracker, fake if fake is not None else contextlib.nullcontext(), rec, choices:
            try:
                with autocast:
                    output = forward()
                    loss = (loss_fn or _default_loss)(output)
            except ExportError:
                raise
            except _VALUE_READS as exc:
                raise ExportError("the module's forward reads tensor values (%s: %s), which fake tensors do not have: "
                                  "export with --mode real (mode='real'), which runs the module's own tensors and "
                                  "records the branch the example inputs take" % (type(exc).__name__, exc)) from exc
            except Exception as exc:
                raise ExportError("the module's forward failed on the example inputs (batch %d): %s: %s"
                                  % (batch * scale, type(exc).__name__, exc)) from exc
            if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
                raise ExportError("the loss must be a one-element tensor, got %s"
                                  % (tuple(loss.shape) if isinstance(loss, torch.Tensor) else type(loss).__name__))
            if not loss.requires_grad:
                raise ExportError("the loss does not depend on any parameter that requires gradients")
            rec.phase = "backward"
            try:
                loss.backward()
            except Exception as exc:
                raise ExportError("backward failed: %s: %s" % (type(exc).__name__, exc)) from exc
            if opt is not None:
                rec.phase, rec.scope = "optimizer", type(opt).__name__.lower()
                try:
                    opt.step()
                except Exception as exc:
                    raise ExportError("the optimizer step failed: %s: %s" % (type(exc).__name__, exc)) from exc
                finally:
                    rec.scope = None
        # What autograd keeps for backward, from a forward of its own: saved-tensor hooks in the
        # recorded step would change what the Recorder sees (the ops of unpacking in backward).
        # CUDA's choices apply here too (what a fused attention or cuDNN's RNN keeps, not the CPU's
        # math path), through a Recorder of their own that nothing reads.
        side = Recorder(lambda: "")
        side.autocast_dtype = rec.autocast_dtype
        with fake if fake is not None else contextlib.nullcontext(), autocast, \
                CudaChoices(side) if opt is None else contextlib.nullcontext(), \
                torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            (loss_fn or _default_loss)(forward())
        out_floats = [t for t in _floats(output, []) if t.dim() > 0 and t.shape[0] == batch * scale]
        output_elems = sum(t.numel() for t in out_floats)
    finally:
        for h in handles:
            h.remove()
        if mode == "real":
            for _, p in named:
                p.grad = None
        module.train(was_training)
    got = set(ready)
    return Trace(lines=rec.lines, names=[n for n, _ in named], tensors=[p for _, p in named], ready=ready,
                 framework_ops=rec.framework_ops, launches=rec.launches,
                 unused=[named[i][0] for i in range(len(named)) if i not in got], output_elems=output_elems,
                 input_bytes=input_bytes, dtypes=rec.dtypes, pending=list(rec.pending_ready), layouts=rec.layouts,
                 value_reads=rec.value_reads, sparse=sorted(sparse), sdpa_counts=dict(rec.sdpa_counts),
                 rnn_fallback=rec.rnn_fallback, saved=saved, no_input_grad=no_input_grad)


def _fake(fake, t):
    """A fake tensor like t; one on the meta device (a module built with --meta) becomes a fake CPU
    tensor, so that autocast and the CPU's kernel choices apply to it as to any other."""
    if t.device.type != "meta":
        return fake.from_tensor(t)
    with fake:
        f = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="cpu")
    return f.requires_grad_(t.requires_grad)


def _to_fake(fake, x):
    if isinstance(x, torch.Tensor):
        return _fake(fake, x)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_fake(fake, y) for y in x)
    if isinstance(x, dict):
        return {k: _to_fake(fake, v) for k, v in x.items()}
    return x
