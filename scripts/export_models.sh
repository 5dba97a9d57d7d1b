#!/usr/bin/env bash
# Writes the bundled models that come from PyTorch rather than from `ddpsim genmodel`, with the
# exporter (python/ddpsim_export; docs/export.md) and the torch pinned in scripts/setup_python.sh.
#   scripts/export_models.sh [DIR]     (default: models/)
# efficientnet-b0: torchvision's EfficientNet-B0 without stochastic depth, standing for
# DeepLearningExamples' efficientnet-b0 (survival_prob 1, RMSprop; validate/published.txt), in fp32
# and NCHW (their FP32/TF32 runs) and under autocast in channels_last (their AMP runs:
# configs.yml memory_format nhwc). Their NGC 21.03 container's PyTorch (1.9) steps the optimizer with
# a for-loop over the tensors (foreach became the CUDA default in 2.0): --optimizer-impl forloop.
# tests/export (case bundled) checks the files are this output.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/models}
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
common=(--model torchvision.models.efficientnet_b0 --kwargs '{"stochastic_depth_prob": 0.0}'
        --input 3x224x224 --batch 256 --optimizer rmsprop --optimizer-impl forloop --loss cross-entropy)
python3 -m ddpsim_export "${common[@]}" --name efficientnet-b0 -o "$dir/efficientnet-b0.model"
python3 -m ddpsim_export "${common[@]}" --amp --channels-last --name efficientnet-b0-amp \
    -o "$dir/efficientnet-b0-amp.model"
