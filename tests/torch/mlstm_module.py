"""The mLSTM of models/mlstm-*.model as a PyTorch module, written the way kernels/ computes it
(docs/models.md): weight norm of the four matrices once per forward, the input projections for all
steps at once, then per step W_mhh h, m = (W_mih x)(W_mhh h), W_hh m and the gate math with both
biases, then the decoder over all steps. Parameters are registered in the model file's order; the
recurrent ones live in a child module `cell` (file_name() drops that prefix).
tests/torch/test_reducer.py checks that `ddpsim genmodel mlstm` writes the gradient-ready order
that autograd really produces for this module."""
import torch
import torch.nn.functional as F

# Small sizes for the tests (W_hh is 4 MB, so 1 and 5 MB caps split the model); the order of
# parameters and of gradients does not depend on them.
SIZES = {"mlstm-tiny": dict(hidden=512, embed=64, vocab=256, seq=3)}


def file_name(name):
    """The model file's name of a parameter: the cell's own (docs/models.md lists b_ih, w_ih_g, ...)."""
    return name[len("cell."):] if name.startswith("cell.") else name


class MLSTMCell(torch.nn.Module):
    """The recurrent parameters, registered after the encoder and decoder as in the model file
    (DDP registers each module's own parameters, module by module)."""

    def __init__(self, H, E):
        super().__init__()
        P = torch.nn.Parameter
        self.b_ih = P(torch.zeros(4 * H))
        self.b_hh = P(torch.zeros(4 * H))
        self.w_ih_g = P(torch.ones(4 * H, 1))
        self.w_ih_v = P(torch.randn(4 * H, E) * 0.1)
        self.w_hh_g = P(torch.ones(4 * H, 1))
        self.w_hh_v = P(torch.randn(4 * H, H) * 0.1)
        self.w_mih_g = P(torch.ones(H, 1))
        self.w_mih_v = P(torch.randn(H, E) * 0.1)
        self.w_mhh_g = P(torch.ones(H, 1))
        self.w_mhh_v = P(torch.randn(H, H) * 0.1)


class MLSTM(torch.nn.Module):
    def __init__(self, hidden, embed, vocab, seq):
        super().__init__()
        H, E, V = hidden, embed, vocab
        self.seq, self.vocab = seq, vocab
        self.encoder = torch.nn.Embedding(V, E)
        self.decoder = torch.nn.Linear(H, V)
        self.cell = MLSTMCell(H, E)

    def example_input(self, batch):
        return torch.randint(0, self.vocab, (batch, self.seq))

    @staticmethod
    def _wn(g, v):
        return g * v / v.norm(dim=1, keepdim=True)

    def forward(self, ids):
        c_ = self.cell
        x = self.encoder(ids).transpose(0, 1)  # T x B x E
        w_ih = self._wn(c_.w_ih_g, c_.w_ih_v)
        w_hh = self._wn(c_.w_hh_g, c_.w_hh_v)
        w_mih = self._wn(c_.w_mih_g, c_.w_mih_v)
        w_mhh = self._wn(c_.w_mhh_g, c_.w_mhh_v)
        xi = F.linear(x, w_ih)  # all steps at once
        xm = F.linear(x, w_mih)
        B, H = ids.shape[0], w_hh.shape[1]
        h = x.new_zeros(B, H)
        c = x.new_zeros(B, H)
        outs = []
        for t in range(self.seq):
            m = xm[t] * F.linear(h, w_mhh)
            gates = xi[t] + F.linear(m, w_hh) + c_.b_ih + c_.b_hh
            i, f, o, u = gates.chunk(4, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(u)
            h = torch.sigmoid(o) * torch.tanh(c)
            outs.append(h)
        return self.decoder(torch.stack(outs))
