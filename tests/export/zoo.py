"""The exporter's zoo (tests/export, case zoo): models a new user brings, each exported, loaded and
predicted by ddpsim, its FLOPs checked against torch's FlopCounterMode and its parameters against
the module's. Small configurations keep it to a few minutes on two cores; the step is traced on fake
tensors, so sizes cost little but op counts do."""

import torch
from torch import nn


class Unused(nn.Module):
    """A branch the forward never takes: its parameters get no gradient."""

    def __init__(self):
        super().__init__()
        self.used = nn.Linear(32, 32)
        self.branch = nn.Linear(32, 32)

    def forward(self, x):
        return self.used(x)


class RNNLM(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.emb = nn.Embedding(1000, 64)
        self.rnn = cell(64, 128, num_layers=2, batch_first=True)
        self.head = nn.Linear(128, 1000)

    def forward(self, ids):
        return self.head(self.rnn(self.emb(ids))[0])


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(500, 32)
        self.mid = nn.Linear(32, 32)
        self.head = nn.Linear(32, 500, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, ids):
        return self.head(torch.tanh(self.mid(self.emb(ids))))


class SparseEmb(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50000, 32, sparse=True)
        self.head = nn.Linear(32, 10)

    def forward(self, ids):
        return self.head(self.emb(ids).mean(1))


class _Square(torch.autograd.Function):
    """x @ w with a hand-written backward (two products)."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w.t(), x.t() @ g


class Custom(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(48, 48))
        self.out = nn.Linear(48, 8)

    def forward(self, x):
        return self.out(_Square.apply(x, self.w))


class Frozen(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64))
        self.head = nn.Linear(64, 10)
        for p in self.backbone.parameters():
            p.requires_grad_(False)

    def forward(self, x):
        return self.head(self.backbone(x))


class Buffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(32, 32)
        self.bn = nn.BatchNorm1d(32)
        self.register_buffer("scale", torch.ones(32))

    def forward(self, x):
        return self.bn(self.lin(x)) * self.scale


def models():
    """(name, build, args, kwargs, loss_fn, meta): build() returns the module; meta: build it on the
    meta device (no parameter memory)."""
    import torchvision
    import transformers

    def ce(out):
        return nn.functional.cross_entropy(out, torch.zeros(out.shape[0], dtype=torch.long, device=out.device))

    def lm_loss(out):
        return out.loss

    img = (torch.zeros(2, 3, 32, 32),)
    ids = torch.zeros(2, 16, dtype=torch.long)
    tv = torchvision.models
    hf = transformers
    small = dict(num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4, vocab_size=256)
    return [
        ("resnet50", lambda: tv.resnet50(), img, {}, ce, True),
        ("vit_b_16", lambda: tv.vit_b_16(image_size=32), img, {}, ce, True),
        ("mobilenet_v3_large", lambda: tv.mobilenet_v3_large(), img, {}, ce, True),
        ("efficientnet_b0", lambda: tv.efficientnet_b0(), img, {}, ce, True),
        ("convnext_tiny", lambda: tv.convnext_tiny(), img, {}, ce, True),
        ("bert", lambda: hf.BertForPreTraining(hf.BertConfig(max_position_embeddings=64, **small)), (ids,),
         {"labels": ids, "next_sentence_label": torch.zeros(2, dtype=torch.long)}, lm_loss, True),
        ("gpt2", lambda: hf.GPT2LMHeadModel(hf.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=256,
                                                           n_positions=64)), (ids,), {"labels": ids}, lm_loss, True),
        ("llama", lambda: hf.LlamaForCausalLM(hf.LlamaConfig(max_position_embeddings=64, **small)), (ids,),
         {"labels": ids}, lm_loss, True),
        ("t5-small", lambda: hf.T5ForConditionalGeneration(hf.T5Config(decoder_start_token_id=0)), (ids,),
         {"labels": ids}, lm_loss, True),
        ("unused-branch", Unused, (torch.zeros(2, 32),), {}, None, False),
        ("lstm", lambda: RNNLM(nn.LSTM), (ids,), {}, None, False),
        ("gru", lambda: RNNLM(nn.GRU), (ids,), {}, None, False),
        ("tied", Tied, (ids,), {}, None, False),
        ("sparse-embedding", SparseEmb, (ids,), {}, None, False),
        ("custom-function", Custom, (torch.zeros(2, 48),), {}, None, False),
        ("frozen", Frozen, (torch.zeros(2, 32),), {}, None, False),
        ("buffers", Buffers, (torch.zeros(2, 32),), {}, None, False),
    ]
