"""The small modules tests/export/test_measured.py times (python3 -m ddpsim_export --model
tests/export/measured.py:mlp, :cnn), and the training step it runs itself, as the exporter's
--time runs it (python/ddpsim_export/step.py, train_step: AdamW, foreach, the sum of the outputs)."""

import torch
from torch import nn

# name -> (builder, per-sample input shape, batch)
MODELS = {
    "mlp": ("mlp", [512], 64),
    "cnn": ("cnn", [3, 32, 32], 16),
}


def mlp():
    return nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))


def cnn():
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


def setup(name):
    """(module, input, optimizer) of one case, on the CPU."""
    build, shape, batch = MODELS[name]
    torch.manual_seed(0)
    module = globals()[build]()
    return module, torch.zeros([batch] + shape), torch.optim.AdamW(module.parameters(), foreach=True)


def step(module, x, opt):
    opt.zero_grad(set_to_none=True)
    module(x).sum().backward()
    opt.step()
