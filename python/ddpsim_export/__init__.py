"""ddpsim_export: a ddpsim model file from a PyTorch nn.Module.

    from ddpsim_export import export
    summary = export(model, (images,), "my.model")          # images: one example batch

`export` runs one training step (forward, loss, backward) of the module on fake tensors (default:
no memory, no compute, any size) or on its real tensors, records every op at the dispatcher, the
parameters and the order their gradients become final, and writes the model format of
models/README.md (version 5; 6 with measured times: `time_steps=` runs real training steps under
torch.profiler, `from_trace=` reads a user's trace, timing.py). It traces the step
twice, at the batch given and at twice that, so that every dimension is written as a constant, a
multiple of the batch B, or both (`C+N*B`): ddpsim can then run the model at any --batch. The
command line is `python3 -m ddpsim_export --help`. docs/export.md says what is recorded and what is
approximated.
"""

import math
import os
import sys
import tempfile

__all__ = ["export", "ExportError", "Summary", "__version__"]


def _version() -> str:
    """ddpsim's version: the package's VERSION file, which CMake reads as the project's version too
    (common/version.h), so the exporter, ddpsim and ddpcalib say the same one."""
    from importlib.resources import files
    return files(__name__).joinpath("VERSION").read_text(encoding="utf-8").strip()


__version__ = _version()


class ExportError(Exception):
    """The export failed: the message says why; nothing was written."""


class Summary:
    """What export() wrote: `path`, `params` (names in registration order), `numel` (parameter
    count), `ready` (names in the order their gradients became final), `flops` per phase at the traced
    batch ({'forward': F, 'backward': F}), `batch`, `framework_ops` and `launches` per phase, and
    `notes` (what was approximated)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        return "Summary(%s)" % ", ".join("%s=%r" % (k, v) for k, v in self.__dict__.items() if k != "text")


def export(module, example_inputs, path, *, example_kwargs=None, batch=None, loss_fn=None, mode="fake", amp=False,
           precision=None, optimizer="adamw", optimizer_impl="foreach", tokens=None, name=None, source=None, log=None,
           time_steps=0, warmup_steps=3, from_trace=None):
    """Records one training step of `module` and writes a ddpsim model file to `path` (atomically).

    example_inputs: the positional inputs of one batch (a tensor or a tuple); example_kwargs: keyword
    inputs. Every tensor input whose first dimension is the batch is doubled for the second trace.
    batch: the per-GPU batch of the example (default: the first tensor input's first dimension).
    loss_fn(output) -> scalar: the loss (default: `output.loss` if the output has one, else the sum of
    every floating tensor in the output). mode: "fake" (FakeTensorMode: shapes only) or "real" (runs
    on the tensors' own device). amp: run under torch.autocast, "fp16" (or True) at float16, "bf16" at
    bfloat16 (parameters and gradients stay fp32). precision: the file's default run precision,
    "fp32", "fp16" or "bf16" (default: autocast's type with amp, else the parameters' type). optimizer: "adamw", "adam", "rmsprop" or "sgd" (both with momentum), or "none";
    optimizer_impl: "foreach" (PyTorch's default on CUDA since 2.0) or "forloop" (foreach=False, and
    the only implementation before 2.0).
    tokens: (count, unit) per sample (default: (S, "tokens") for an integer [B, S] first input, else
    (1, "samples")). name: the model's name (default: the module's class name). source: a line saying
    where the module came from, written into the file's header. log: a file for progress and notes
    (default: none).
    time_steps: > 0 measures each op (docs/export.md, "Measured times"): `warmup_steps` real training
    steps of a copy of the module on its own device (its parameters' and the inputs'), then
    `time_steps` under torch.profiler; from_trace: a torch.profiler (Kineto JSON) trace of the
    user's own step to take the times from instead. Either needs mode="real"; the file is then
    version 6, its ops the ones the device ran, each with its mean device and host time.

    Returns a Summary. Raises ExportError with a message (forward or backward failed, inputs of the
    wrong shape, an unwritable path, a module without trainable parameters); no file is left behind.
    """
    import torch

    from . import model_text, step

    if mode not in ("fake", "real"):
        raise ExportError("mode must be 'fake' or 'real', got %r" % (mode,))
    if optimizer not in model_text.OPTIMIZERS:
        raise ExportError("optimizer must be one of %s, got %r" % (", ".join(model_text.OPTIMIZERS), optimizer))
    if optimizer_impl not in model_text.IMPLS:
        raise ExportError("optimizer_impl must be one of %s, got %r" % (", ".join(model_text.IMPLS), optimizer_impl))
    if (time_steps or from_trace) and mode != "real":
        raise ExportError("measured times (time_steps, from_trace) need mode='real': fake tensors run nothing")
    if time_steps and from_trace:
        raise ExportError("time_steps and from_trace are two sources of the times: give one")
    if time_steps < 0 or warmup_steps < 0:
        raise ExportError("time_steps and warmup_steps must be >= 0")
    if precision not in (None, "fp32", "fp16", "bf16"):
        raise ExportError("precision must be fp32, fp16 or bf16, got %r" % (precision,))
    amp = "fp16" if amp is True else amp or None
    if amp not in (None, "fp16", "bf16"):
        raise ExportError("amp must be False, True (fp16), \"fp16\" or \"bf16\", got %r" % (amp,))
    if not isinstance(module, torch.nn.Module):
        raise ExportError("expected an nn.Module, got %s" % type(module).__name__)
    args = tuple(example_inputs) if isinstance(example_inputs, (tuple, list)) else (example_inputs,)
    kwargs = dict(example_kwargs or {})
    first = next((t for t in list(args) + list(kwargs.values()) if isinstance(t, torch.Tensor)), None)
    if first is None:
        raise ExportError("no tensor among the example inputs")
    if batch is None:
        if first.dim() == 0:
            raise ExportError("cannot tell the batch from a 0-dimensional first input: pass batch=")
        batch = int(first.shape[0])
    if batch < 1:
        raise ExportError("batch must be positive, got %d" % batch)
    # Fail on an unwritable path before the (possibly long) trace, and leave nothing if it fails.
    # A target that exists and is not a regular file (a device node, a FIFO) is written in place, as
    # `cat > FILE` would: renaming over it would destroy it. A symbolic link is written through.
    target = os.path.realpath(path)
    in_place = os.path.exists(target) and not os.path.isfile(target) and not os.path.isdir(target)
    if in_place and not os.access(target, os.W_OK):
        raise ExportError("%s: cannot write: permission denied" % path)
    tmp = (None, None) if in_place else _open_temp(path, target)
    try:
        measured, opt, traced = None, None, module
        if time_steps or from_trace:
            import copy

            traced = copy.deepcopy(module)  # the steps train it: the caller's module is left as it was
            opt = _optimizer(traced, optimizer, optimizer_impl)
        one = step.trace(traced, args, kwargs, loss_fn, mode, amp, batch, scale=1, opt=opt)
        two = step.trace(traced, args, kwargs, loss_fn, mode, amp, batch, scale=2, opt=opt)
        if time_steps or from_trace:
            from . import timing

            measured = (timing.from_trace(from_trace, one.lines) if from_trace else
                        timing.run_steps(traced, args, kwargs, loss_fn, amp, opt, warmup_steps, time_steps, one.lines))
            timing.attach(one.lines, measured.times)
        summary = model_text.build(traced, one, two, batch, amp=amp, precision=precision, optimizer=optimizer,
                                   optimizer_impl=optimizer_impl, tokens=tokens or _default_tokens(first, batch),
                                   name=name or type(module).__name__,
                                   source=source, torch_version=torch.__version__, mode=mode, measured=measured)
        try:
            if in_place:
                with open(target, "w") as f:
                    f.write(summary.text)
            else:
                with os.fdopen(tmp[0], "w") as f:
                    tmp = (None, tmp[1])
                    f.write(summary.text)
                    f.flush()
                    os.fsync(f.fileno())
                umask = os.umask(0)  # mkstemp made it 0600; a written file takes the usual mode
                os.umask(umask)
                os.chmod(tmp[1], 0o666 & ~umask)
                os.replace(tmp[1], target)
        except OSError as exc:  # a full disk, a file too large, a directory gone
            raise ExportError("%s: cannot write: %s" % (path, exc.strerror or exc)) from None
    except BaseException:
        if tmp[0] is not None:
            os.close(tmp[0])
        if tmp[1] is not None:
            try:
                os.unlink(tmp[1])
            except OSError:
                pass
        raise
    summary.path = path
    if log:
        for n in summary.notes:
            print("ddpsim_export: note: " + n, file=log)
    return summary


class _NoStep:
    """optimizer="none" in a measured step: gradients cleared, no update."""

    def __init__(self, params):
        self.params = list(params)

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None

    def step(self):
        pass


def _optimizer(module, optimizer, impl):
    """The torch.optim optimizer model_text writes for `optimizer` (its defaults; SGD and RMSprop with
    momentum 0.9, OPTIM_LINE), foreach=True or False as `impl` says, over the trainable parameters."""
    import torch

    params = [p for p in module.parameters() if p.requires_grad]
    fe = impl == "foreach"
    if optimizer == "adamw":
        return torch.optim.AdamW(params, foreach=fe)
    if optimizer == "adam":
        return torch.optim.Adam(params, foreach=fe)
    if optimizer == "rmsprop":
        return torch.optim.RMSprop(params, momentum=0.9, foreach=fe)
    if optimizer == "sgd":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9, foreach=fe)
    return _NoStep(params)


def _open_temp(path, target):
    d = os.path.dirname(target)
    if os.path.isdir(path):
        raise ExportError("%s: is a directory" % path)
    try:
        return tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".tmp", dir=d)
    except OSError as exc:
        raise ExportError("%s: cannot write: %s" % (path, exc.strerror or exc)) from None


def _default_tokens(first, batch):
    import torch

    if first.dim() == 2 and first.shape[0] == batch and not torch.is_floating_point(first):
        return (int(first.shape[1]), "tokens")
    return (1, "samples")
