"""python3 -m ddpsim_export: a ddpsim model file from a model you name on the command line.

Exit status: 0 written; 1 the export failed (the module, its forward or backward, the output path);
2 misuse (an option, an --input spec, a --model that does not name a module)."""

import argparse
import importlib
import importlib.util
import json
import logging
import os
import signal
import traceback
import sys
import warnings

from . import ExportError, __version__, export

EPILOG = """\
--model names a callable that returns the nn.Module: a dotted path (torchvision.models.resnet50,
mypackage.MyNet), FILE.py:NAME, or hf:NAME_OR_DIR[:AutoClass] for a Hugging Face config (the
model is built from its config, without weights; AutoClass defaults to AutoModel). A Hugging Face
model class (transformers.BertForPreTraining) is built from its default config. --kwargs passes
keyword arguments to the callable, as JSON.

--input gives one input's per-sample shape: [NAME=]SHAPE[:DTYPE], e.g. 3x224x224 or
input_ids=128:int64 (values are zeros). Named inputs are keyword arguments, the others positional.

examples:
  python3 -m ddpsim_export --model torchvision.models.resnet50 --input 3x224x224 --batch 32 -o resnet50.model
  python3 -m ddpsim_export --model transformers.GPT2LMHeadModel --input input_ids=1024:int64 \\
      --input labels=1024:int64 --batch 8 --amp -o gpt2.model
  ddpsim predict --model gpt2.model --nodes 16
"""

DTYPES = {"float32": "float32", "fp32": "float32", "float16": "float16", "fp16": "float16", "bfloat16": "bfloat16",
          "bf16": "bfloat16", "int64": "int64", "long": "int64", "int32": "int32", "bool": "bool"}


class Usage(Exception):
    pass


class Signalled(BaseException):
    """SIGINT, SIGTERM or SIGHUP arrived."""

    def __init__(self, sig):
        super().__init__(sig)
        self.sig = sig


_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _on_signal(sig, frame):
    raise Signalled(sig)


def write_stdout(text):
    """Writes text to standard output and flushes it: 0, or 1 after saying why it could not."""
    try:
        sys.stdout.write(text)
    except OSError as exc:
        return _write_error(exc)
    return close_stdout()


def close_stdout():
    """Standard output that could not all be written (a full disk) is a failure: 1, as coreutils."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        return _write_error(exc)
    return 0


def _write_error(exc):
    print("python3 -m ddpsim_export: write error: %s" % (exc.strerror or exc), file=sys.stderr)
    # What is still buffered goes to /dev/null, so that the interpreter's own flush at exit does not
    # fail again (it would print a traceback and exit 120).
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, sys.stdout.fileno())
    os.close(fd)
    return 1


def parse_input(spec):
    """[NAME=]SHAPE[:DTYPE] -> (name or None, [dims], dtype name)."""
    name, _, rest = spec.rpartition("=")
    shape, _, dt = rest.partition(":")
    dt = dt or "float32"
    if dt not in DTYPES:
        raise Usage("--input %s: dtype %r is not one of %s" % (spec, dt, ", ".join(sorted(DTYPES))))
    try:
        dims = [int(x) for x in shape.split("x")] if shape else []
    except ValueError:
        raise Usage("--input %s: shape %r is not like 3x224x224" % (spec, shape)) from None
    if any(d < 1 for d in dims):
        raise Usage("--input %s: every dimension must be positive" % spec)
    if name and not name.isidentifier():
        raise Usage("--input %s: %r is not an argument name" % (spec, name))
    return name or None, dims, DTYPES[dt]


def resolve(spec, kwargs):
    """The nn.Module `spec` names, built with kwargs; raises Usage if it names nothing."""
    if spec.startswith("hf:"):
        try:
            import transformers
        except ImportError:
            raise Usage("--model %s: transformers is not installed (pip install transformers)" % spec) from None
        rest = spec[3:]
        where, _, auto = rest.rpartition(":") if rest.count(":") and not os.path.exists(rest) else (rest, "", "")
        auto = auto or "AutoModel"
        if not hasattr(transformers, auto):
            raise Usage("--model %s: transformers has no %s" % (spec, auto))
        try:
            config = transformers.AutoConfig.from_pretrained(where, **kwargs)
        except Exception as exc:
            raise Usage("--model %s: cannot load the config: %s" % (spec, exc)) from None
        return getattr(transformers, auto).from_config(config)
    if ".py:" in spec:
        path, _, attr = spec.rpartition(":")
        if not os.path.isfile(path):
            raise Usage("--model %s: no file %s" % (spec, path))
        mod_spec = importlib.util.spec_from_file_location("ddpsim_user_model", path)
        mod = importlib.util.module_from_spec(mod_spec)
        mod_spec.loader.exec_module(mod)
        obj = getattr(mod, attr, None)
    else:
        modname, _, attr = spec.rpartition(".")
        if not modname:
            raise Usage("--model %s: expected a dotted path such as torchvision.models.resnet50" % spec)
        try:
            mod = importlib.import_module(modname)
        except ImportError as exc:
            raise Usage("--model %s: cannot import %s: %s" % (spec, modname, exc)) from None
        obj = getattr(mod, attr, None)
    if obj is None or not callable(obj):
        raise Usage("--model %s: names nothing callable" % spec)
    config_class = getattr(obj, "config_class", None)
    if isinstance(obj, type) and config_class is not None and hasattr(obj, "from_pretrained"):
        return obj(config_class(**kwargs))
    return obj(**kwargs)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m ddpsim_export", description=(
        "Records one training step of a PyTorch model (forward, loss, backward) at the dispatcher and "
        "writes a ddpsim model file: parameters in registration order, every op with its GEMM shape or "
        "bytes, and the op after which each gradient is ready."), epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"ddpsim_export {__version__}")
    ap.add_argument("--model", required=True, help="the callable that builds the module (see below)")
    ap.add_argument("--kwargs", default="{}", help="JSON keyword arguments for --model")
    ap.add_argument("--input", action="append", default=[], metavar="[NAME=]SHAPE[:DTYPE]",
                    help="one input's per-sample shape (repeat for several)")
    ap.add_argument("--batch", type=int, default=1, help="per-GPU batch to trace and write as the default (1)")
    ap.add_argument("--mode", choices=("fake", "real"), default=None,
                    help="fake: FakeTensorMode, shapes only, any size (default; real with --time or --from-trace); real: run on CPU tensors")
    ap.add_argument("--meta", action="store_true",
                    help="build the module on the meta device (no parameter memory; implies --mode fake)")
    ap.add_argument("--amp", nargs="?", const="fp16", choices=("fp16", "bf16"), default=None,
                    help="torch.autocast at float16 (--amp, --amp fp16) or bfloat16 (--amp bf16); parameters and "
                         "gradients stay fp32")
    ap.add_argument("--channels-last", action="store_true",
                    help="the module and its 4-D floating inputs in torch.channels_last (NHWC), as a model trained "
                         "with channels_last runs (the file's `layout nhwc`)")
    ap.add_argument("--precision", choices=("fp32", "fp16", "bf16"), help="the file's default run precision")
    ap.add_argument("--optimizer", choices=("adamw", "adam", "rmsprop", "sgd", "none"), default="adamw",
                    help="the optimizer step written (default adamw)")
    ap.add_argument("--optimizer-impl", choices=("foreach", "forloop"), default="foreach",
                    help="foreach: torch.optim's default on CUDA since PyTorch 2.0 (one multi-tensor kernel per op); "
                         "forloop: foreach=False, as PyTorch 1.x ran every optimizer")
    ap.add_argument("--loss", choices=("auto", "sum", "cross-entropy"), default="auto",
                    help="auto: output.loss if the model returns one, else the sum of its outputs; cross-entropy: "
                         "against class 0 for a [B, C] output")
    ap.add_argument("--tokens", metavar="N:UNIT", help="tokens per sample and their unit, e.g. 128:tokens")
    ap.add_argument("--time", nargs="?", type=int, const=10, default=None, metavar="STEPS",
                    help="measure every op: real training steps of the module on the device present (CUDA where "
                         "there is one, else the CPU) under torch.profiler, after --warmup steps; each op's mean "
                         "device and host time over STEPS (default 10) is written (format 6; implies --mode real)")
    ap.add_argument("--warmup", type=int, default=3, metavar="N", help="untimed steps before --time's (default 3)")
    ap.add_argument("--from-trace", metavar="FILE",
                    help="take the measured times from a torch.profiler trace (Kineto JSON, as export_chrome_trace or "
                         "tensorboard_trace_handler write it) of the module's training step instead of timing it "
                         "(implies --mode real)")
    ap.add_argument("--name", help="the model's name in the file (default: --model's last part)")
    ap.add_argument("-o", "--output", required=True, help="the model file to write (atomically)")
    ap.add_argument("--debug", action="store_true",
                    help="on a failure, also torch's own error logs and the Python traceback (for a bug report)")
    a = ap.parse_args(argv)
    for sig in _SIGNALS:  # a signal unwinds export(), which removes its temporary file
        if signal.getsignal(sig) in (signal.SIG_DFL, signal.default_int_handler):
            signal.signal(sig, _on_signal)
    # One message, no library chatter: torch's logs and Python warnings (a fake tensor's data_ptr,
    # a deprecated argument) are kept out of the output, and transformers' logs below errors. Its
    # errors too: FakeTensorMode logs a failed meta kernel with its whole traceback at ERROR before
    # the exception that is our message arrives (--debug shows them).
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    # torch._logging gives its loggers levels of their own, some made once the step runs: logging is
    # switched off as a whole (torch's below errors with --debug).
    level = logging.getLogger("torch").level
    if a.debug:
        logging.getLogger("torch").setLevel(logging.ERROR)
    else:
        logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return run(a)
    except Signalled as exc:  # die of the signal, as the process would have
        signal.signal(exc.sig, signal.SIG_DFL)
        os.kill(os.getpid(), exc.sig)
        return 128 + exc.sig
    except Usage as exc:
        print("python3 -m ddpsim_export: %s" % exc, file=sys.stderr)
        return 2
    except ExportError as exc:
        if a.debug:
            traceback.print_exc()
        print("python3 -m ddpsim_export: %s" % _one_line(str(exc)), file=sys.stderr)
        return 1
    except Exception as exc:  # a failure no check above named: still one message, exit 1
        if a.debug:
            traceback.print_exc()
        print("python3 -m ddpsim_export: the export failed: %s: %s" % (type(exc).__name__, _one_line(str(exc))),
              file=sys.stderr)
        return 1
    finally:
        logging.getLogger("torch").setLevel(level)
        logging.disable(logging.NOTSET)


def _one_line(msg, limit=600):
    """An exception's message on one line (torch's can run to pages: a stack of C++ frames)."""
    msg = " ".join(msg.split())
    return msg if len(msg) <= limit else msg[:limit] + " ..."


def run(a):
    try:
        kwargs = json.loads(a.kwargs)
    except ValueError as exc:
        raise Usage("--kwargs: not JSON: %s" % exc) from None
    if not isinstance(kwargs, dict):
        raise Usage("--kwargs must be a JSON object")
    if a.batch < 1:
        raise Usage("--batch must be positive")
    measure = a.time is not None or a.from_trace is not None
    if a.time is not None and a.time < 1:
        raise Usage("--time takes a number of steps >= 1, got %d" % a.time)
    if a.warmup < 0:
        raise Usage("--warmup takes a number of steps >= 0, got %d" % a.warmup)
    if a.time is not None and a.from_trace is not None:
        raise Usage("--time and --from-trace are two sources of the times: give one")
    if measure and a.meta:
        raise Usage("%s runs the module: it cannot be built with --meta" % ("--from-trace" if a.from_trace else "--time"))
    if measure and a.mode == "fake":
        raise Usage("%s runs real training steps: --mode fake does not" % ("--from-trace" if a.from_trace else "--time"))
    if a.from_trace and not os.path.isfile(a.from_trace):
        raise Usage("--from-trace %s: no such file" % a.from_trace)
    if not a.input:
        raise Usage("give at least one --input")
    specs = [parse_input(s) for s in a.input]
    tokens = None
    if a.tokens:
        n, _, unit = a.tokens.partition(":")
        if not n.isdigit() or int(n) < 1 or not unit or not unit.isidentifier():
            raise Usage("--tokens %s: expected N:UNIT, e.g. 128:tokens" % a.tokens)
        tokens = (int(n), unit)
    import torch

    try:
        if a.meta:
            with torch.device("meta"):
                module = resolve(a.model, kwargs)
        else:
            module = resolve(a.model, kwargs)
    except Usage:
        raise
    except SystemExit as exc:
        raise ExportError("building %s called sys.exit(%s): nothing was written" % (a.model, exc.code)) from None
    except Exception as exc:
        raise ExportError("building %s failed: %s: %s" % (a.model, type(exc).__name__, exc)) from None
    if not isinstance(module, torch.nn.Module):
        raise Usage("--model %s returned a %s, not an nn.Module" % (a.model, type(module).__name__))
    device = "meta" if a.meta else "cuda" if measure and torch.cuda.is_available() else "cpu"
    if device == "cuda":
        module = module.to(device)
    if a.channels_last:
        module = module.to(memory_format=torch.channels_last)
    args, kw = [], {}
    for name, dims, dt in specs:
        t = torch.zeros([a.batch] + dims, dtype=getattr(torch, dt), device=device)
        if a.channels_last and t.dim() == 4 and t.is_floating_point():
            t = t.contiguous(memory_format=torch.channels_last)
        if name:
            kw[name] = t
        else:
            args.append(t)
    loss_fn = None
    if a.loss == "sum":
        def loss_fn(out):
            return out.float().sum() if isinstance(out, torch.Tensor) else sum(t.float().sum() for t in out)
    elif a.loss == "cross-entropy":
        def loss_fn(out):
            logits = out if isinstance(out, torch.Tensor) else getattr(out, "logits", None)
            if not isinstance(logits, torch.Tensor) or logits.dim() != 2:
                raise ExportError("--loss cross-entropy needs a [B, C] output")
            target = torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)
            return torch.nn.functional.cross_entropy(logits, target)
    name = a.name or a.model.rstrip(":").split(":")[-1].split(".")[-1].split("/")[-1] or "model"
    try:
        s = export(module, tuple(args), a.output, example_kwargs=kw, batch=a.batch, loss_fn=loss_fn,
                   mode="fake" if a.meta else a.mode or ("real" if measure else "fake"), amp=a.amp, precision=a.precision, optimizer=a.optimizer,
                   optimizer_impl=a.optimizer_impl, tokens=tokens, name=name, source=a.model, log=sys.stderr,
                   time_steps=a.time or 0, warmup_steps=a.warmup, from_trace=a.from_trace)
    except SystemExit as exc:
        raise ExportError("the module's step called sys.exit(%s): nothing was written" % exc.code) from None
    timed = ""
    if s.measured is not None:
        timed = "; %d of %d ops timed on %s (each op's mean over %d steps; the median step %.4g s)" % (
            s.timed, s.ops, s.measured.device, s.measured.steps, sorted(s.measured.step_s)[len(s.measured.step_s) // 2])
    return write_stdout("%s: %s, %d parameters in %d tensors; per sample %.4g GFLOP forward, %.4g backward; %d+%d "
                        "kernel launches at batch %d%s\n" % (a.output, name, s.numel, len(s.params),
                                                              s.flops["forward"] / a.batch / 1e9,
                                                              s.flops["backward"] / a.batch / 1e9, s.launches["forward"],
                                                              s.launches["backward"], a.batch, timed))


if __name__ == "__main__":
    status = main()
    sys.exit(close_stdout() or status)
