"""A reader of ddpsim model files for the exporter's tests (models/README.md): parameters, the
gradient-ready order, and GEMM FLOPs per phase at a batch. sim/model.c is the loader ddpsim uses;
the tests also load every exported file with `ddpsim plan` to check that it accepts them."""


# An op line's measured times (models/README.md, format 6).
TIMED = ("time_s=", "host_s=")


def strip_times(src, dst):
    """Writes model file src to dst without its measured times (the `measured` line, time_s=,
    host_s=): what ddpsim prices from the profile's tables and formulas alone."""
    with open(src) as f, open(dst, "w") as g:
        for line in f:
            if not line.startswith("measured "):
                g.write(" ".join(t for t in line.rstrip("\n").split(" ") if not t.startswith(TIMED)) + "\n")


def _dim(s, batch):
    const, _, term = s.rpartition("+")
    c = int(const) if const else 0
    if term == "B":
        return c + batch
    if "*" in term:
        a, b = term.split("*")
        return c + int(a if b == "B" else b) * batch
    return c + int(term)


def _conv_gemm(kv):
    """A conv line's implicit GEMM (models/README.md, `conv`) as gemm keys; the batch dimension
    stays symbolic as "X*B" or "X*N*B"."""
    g = {k: int(v) for k, v in kv.items() if k in ("c", "h", "w", "k", "r", "s")}
    ph = pw = int(kv.get("pad", 0))
    ph, pw = int(kv.get("pad_h", ph)), int(kv.get("pad_w", pw))
    sh = sw = int(kv.get("stride", 1))
    sh, sw = int(kv.get("stride_h", sh)), int(kv.get("stride_w", sw))
    p = (g["h"] + 2 * ph - g["r"]) // sh + 1
    q = (g["w"] + 2 * pw - g["s"]) // sw + 1
    n = kv["n"]  # "B" or "N*B" (the generators write B)
    mult = 1 if n == "B" else int(n.replace("B*", "").replace("*B", ""))
    per = "B"
    crs = g["c"] * g["r"] * g["s"]
    out = {k: v for k, v in kv.items() if k in ("ready", "count")}
    if kv["pass"] == "fwd":
        out.update(m=str(g["k"]), n="%d*%s" % (p * q * mult, per), k=str(crs))
    elif kv["pass"] == "dgrad":
        out.update(m=str(g["c"]), n="%d*%s" % (g["h"] * g["w"] * mult, per), k=str(-(-g["k"] * g["r"] * g["s"] // (sh * sw))))
    else:
        out.update(m=str(g["k"]), n=str(crs), k="%d*%s" % (p * q * mult, per))
    return out


class ModelFile:
    def __init__(self, path):
        self.params, self.ready = [], []
        self.ops = []  # (phase, kind, name, {key: value}); a conv line as its implicit GEMM
        self.convs = []  # (phase, pass, geometry): every conv line as written, without its name
        self.layout = None
        self.header = {}  # a header line's first word -> its other words (the first such line)
        self.lines = []  # (phase, every word of an op line but time_s= and host_s=)
        self.times = []  # per op line: {"time_s": s, "host_s": s} (format 6), or None
        phase = None
        with open(path) as f:
            for raw in f:
                toks = raw.split("#", 1)[0].split()
                if not toks:
                    continue
                if phase is None and toks[0] not in ("forward", "backward", "optimizer"):
                    self.header.setdefault(toks[0], toks[1:])
                if toks[0] in ("forward", "backward", "optimizer"):
                    phase = toks[0]
                elif toks[0] == "param":
                    self.params.append((toks[1], toks[2]))
                elif toks[0] == "batch" and phase is None:
                    self.batch = int(toks[1])
                elif toks[0] == "layout" and phase is None:
                    self.layout = toks[1]
                elif phase and toks[0] in ("gemm", "ewise", "conv", "attn"):
                    self.lines.append((phase, [t for t in toks if not t.startswith(TIMED)]))
                    self.times.append({t.split("=")[0]: float(t.split("=")[1]) for t in toks if t.startswith(TIMED)}
                                      or None)
                    kv = dict(t.split("=", 1) for t in toks[2:])
                    kind = toks[0]
                    if kind == "conv":
                        geo = " ".join(t for t in toks[2:] if not t.startswith(("ready=", "pass=")))
                        self.convs.append((phase, kv["pass"], geo))
                        kind, kv = "gemm", _conv_gemm(kv)
                    self.ops.append((phase, kind, toks[1], kv))
                    if "ready" in kv:
                        self.ready.extend(kv["ready"].split(","))

    def numel(self):
        """Parameter elements: the product of each `param` line's shape, summed."""
        total = 0
        for _, shape in self.params:
            k = 1
            for d in shape.split("x"):
                k *= int(d)
            total += k
        return total

    @staticmethod
    def _op_flops(kind, kv, batch):
        """A gemm's 2 m n k (x gemms x count); an attn line's FlashAttention count (models/README.md):
        4 heads q kv d, causal half, backward 2.5 times; 0 for the others."""
        if kind == "gemm":
            f = 2 * _dim(kv["m"], batch) * _dim(kv["n"], batch) * _dim(kv["k"], batch)
            return f * _dim(kv.get("gemms", "1"), batch) * int(kv.get("count", "1"))
        if kind == "attn":
            f = 4 * _dim(kv["heads"], batch) * _dim(kv["q"], batch) * _dim(kv["kv"], batch) * _dim(kv["d"], batch)
            f *= (0.5 if kv.get("causal") == "1" else 1) * (2.5 if kv["pass"] == "bwd" else 1)
            return f * int(kv.get("count", "1"))
        return 0

    def flops(self, phase, batch):
        return sum(self._op_flops(kind, kv, batch) for ph, kind, _, kv in self.ops if ph == phase)

    def ready_flops(self, batch):
        """{parameter: backward GEMM FLOPs done when its gradient becomes ready}."""
        done, at = 0, {}
        for ph, kind, _, kv in self.ops:
            if ph != "backward":
                continue
            done += self._op_flops(kind, kv, batch)
            for p in kv.get("ready", "").split(",") if "ready" in kv else []:
                at[p] = done
        return at
