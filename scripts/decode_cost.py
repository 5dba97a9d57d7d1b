#!/usr/bin/env python3
"""Per-image CPU cost, on one core, of the work a DataLoader worker of NVIDIA DeepLearningExamples'
ConvNets does with `data_backend: pytorch` (PyTorch/Classification/ConvNets/image_classification/
dataloaders.py at 7bdfc81d, the commit that wrote the published figures): the JPEG's bytes opened
and converted to RGB by PIL (torchvision's ImageFolder loader), RandomResizedCrop(224) with the
model's interpolation, RandomHorizontalFlip, for EfficientNet AutoAugment, then fast_collate's copy
of the image into a uint8 CHW tensor. docs/accuracy.md ("The input pipeline's per-node ceiling")
uses it.

The images are synthetic: 500 x 375 RGB (about ImageNet's mean size), JPEG quality 90, a smooth
random colour field plus Gaussian noise (sd 23) so that a file is about 108 KB like an ImageNet
training JPEG; seeded, so every run decodes the same files. The pipelines run interleaved in rounds;
each one's cost is its fastest round (the least disturbed by other work on the machine).
AutoAugment is torchvision's ImageNet policy, standing for DLE's (image_classification/
autoaugment.py: the same kinds of PIL operations on the 224 x 224 crop).

usage: decode_cost.py [--images N] [--per-round K] [--rounds R] [--check]
--check: exit 1 unless each EfficientNet pipeline costs more per image than ResNet-50's (the claim
docs/accuracy.md rests on); exit 77 when PIL or torchvision is missing."""
import argparse
import io
import os
import statistics
import sys
import tempfile
import time


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def make_jpegs(n, directory):
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(1234)
    blobs = []
    for i in range(n):
        field = (rng.random((12, 16, 3)) * 255).astype(np.uint8)
        smooth = np.asarray(Image.fromarray(field).resize((500, 375), Image.BICUBIC), dtype=np.float32)
        pixels = np.clip(smooth + rng.normal(0.0, 23.0, smooth.shape), 0, 255).astype(np.uint8)
        path = os.path.join(directory, "img%04d.jpg" % i)
        Image.fromarray(pixels).save(path, quality=90)
        with open(path, "rb") as f:
            blobs.append(f.read())
    return blobs


def pipelines():
    import numpy as np
    import torch
    import torchvision.transforms as T
    from PIL import Image
    torch.set_num_threads(1)
    out = torch.zeros((3, 224, 224), dtype=torch.uint8)

    def load(b):  # torchvision.datasets.folder.pil_loader: open, convert("RGB")
        return Image.open(io.BytesIO(b)).convert("RGB")

    def worker(interpolation, autoaugment):
        steps = [T.RandomResizedCrop(224, interpolation=interpolation), T.RandomHorizontalFlip()]
        if autoaugment:
            steps.append(T.AutoAugment(T.AutoAugmentPolicy.IMAGENET))
        transform = T.Compose(steps)

        def one(b):
            chw = np.rollaxis(np.asarray(transform(load(b)), dtype=np.uint8), 2)
            out.copy_(torch.from_numpy(chw.copy()))  # fast_collate's per-image copy
        return one

    bilinear, bicubic = T.InterpolationMode.BILINEAR, T.InterpolationMode.BICUBIC
    return [("decode only (open + RGB)", load),
            ("resnet50: bilinear crop + flip", worker(bilinear, False)),
            ("efficientnet: bicubic crop + flip", worker(bicubic, False)),
            ("efficientnet: bicubic + AutoAugment", worker(bicubic, True))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=int, default=200)
    ap.add_argument("--per-round", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if a.images < 1 or a.per_round < 1 or a.rounds < 1:
        print("decode_cost: --images, --per-round and --rounds must be >= 1", file=sys.stderr)
        return 2
    try:
        import PIL
        import torchvision
        from PIL import features
    except ImportError as exc:
        print("decode_cost: skipped: %s (scripts/setup_python.sh installs torchvision and Pillow)" % exc)
        return 77
    with tempfile.TemporaryDirectory() as d:
        blobs = make_jpegs(a.images, d)
    pipes = pipelines()
    times = {name: [] for name, _ in pipes}
    for _ in range(a.rounds):
        for name, fn in pipes:
            t0 = time.perf_counter()
            for i in range(a.per_round):
                fn(blobs[i % len(blobs)])
            times[name].append((time.perf_counter() - t0) / a.per_round)
    print("cpu: %s; Pillow %s (libjpeg-turbo %s), torchvision %s" %
          (cpu_name(), PIL.__version__, features.version("libjpeg_turbo"), torchvision.__version__))
    print("images: %d synthetic 500x375 JPEGs, quality 90, mean %.0f bytes; %d rounds of %d per pipeline" %
          (len(blobs), sum(map(len, blobs)) / len(blobs), a.rounds, a.per_round))
    base = min(times[pipes[1][0]])
    for name, _ in pipes:
        best = min(times[name])
        print("%-38s %7.3f ms/image (median round %7.3f)  %6.0f images/s per core  x%.2f of resnet50's" %
              (name, best * 1e3, statistics.median(times[name]) * 1e3, 1 / best, best / base))
    if a.check:
        worse = [name for name, _ in pipes[2:] if not min(times[name]) > base]
        if worse:
            print("decode_cost: FAIL: not costlier per image than resnet50's: %s" % ", ".join(worse))
            return 1
        print("decode_cost: ok: each EfficientNet pipeline costs more per image than ResNet-50's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
