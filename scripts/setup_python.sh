#!/usr/bin/env bash
# Installs the Python test dependencies from PyPI into the python3 on PATH: real PyTorch (CPU is
# enough), torchvision and transformers, the oracles of tests/torch/; Holistic Trace Analysis, which
# reads ddpsim's Kineto traces in tests/tools/test_hta.py (HTA 0.5.0 imports psutil without
# declaring it); jsonschema, which checks docs/schemas/ against the tools' JSON (test_schemas.py). Pinned so that a new release
# never changes what CI compares against; docs/reducer.md says which PyTorch releases ddpsim models.
# Only the tests need them: scripts/demo.sh does not call this.
set -euo pipefail

pins=(torch==2.15.0 torchvision==0.29.2 transformers==5.23.0 HolisticTraceAnalysis==0.5.0 psutil==7.2.2 jsonschema==4.26.0)

if python3 - "${pins[@]}" <<'PY'
import importlib.metadata as md, sys
for pin in sys.argv[1:]:
    name, version = pin.split("==")
    try:
        if md.version(name).split("+")[0] != version:
            sys.exit(1)
    except md.PackageNotFoundError:
        sys.exit(1)
PY
then
  echo "setup_python: ${pins[*]} present"
  exit 0
fi
echo "setup_python: installing ${pins[*]} (a few minutes: torch brings its CUDA libraries)"
python3 -m pip install --quiet --disable-pip-version-check "${pins[@]}"
python3 -c "import torch, torchvision, transformers, hta.trace_analysis, jsonschema; print('setup_python: torch', torch.__version__)"
