#!/usr/bin/python3
"""Exports the CPU benchmark's models to ONNX (opset 17, dynamic batch axis) with Debian's python3-torch 1.13.

Usage: export.py [--workdir=/tmp/kiln_cpu_bench] [--models=resnet18,vit] [--force] [--dry-run]

Random weights with a fixed seed per model (BatchNorm statistics randomized as in tests/models/export_models.py,
whose helpers this reuses). Writes WORKDIR/<name>.onnx and WORKDIR/<name>.json (input name, dims after the batch
axis, what the model is); a model already exported is kept unless --force.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_WORKDIR = "/tmp/kiln_cpu_bench"

# The "BERT-base-shaped" encoder: hidden 768, 12 heads, feed-forward 3072, GELU, post-norm as BERT, sequence 128,
# but 2 layers instead of 12 (12 would be slow on 2 cores) and no embedding tables (the input is the hidden
# states, float32 [batch, 128, 768]).
ENC_LAYERS = 2
ENC_HIDDEN = 768
ENC_HEADS = 12
ENC_FF = 3072
ENC_SEQ = 128

# name -> (input dims after the batch axis, description). Order = table order.
MODELS = {
    "resnet18": ([3, 224, 224], "torchvision resnet18"),
    "resnet50": ([3, 224, 224], "torchvision resnet50"),
    "mobilenet_v2": ([3, 224, 224], "torchvision mobilenet_v2"),
    "efficientnet_b0": ([3, 224, 224], "torchvision efficientnet_b0"),
    "vit": ([3, 224, 224], "torchvision vit_b_16"),
    "bert_enc": ([ENC_SEQ, ENC_HIDDEN],
                 f"torch.nn.TransformerEncoder, {ENC_LAYERS} layers, hidden {ENC_HIDDEN}, {ENC_HEADS} heads, "
                 f"ff {ENC_FF}, GELU, seq {ENC_SEQ} (BERT-base shape, 2 of its 12 layers, no embeddings)"),
}


def build(name):
    """The model (eval mode, random weights) and, for the ViT, what was actually built."""
    import torch
    import torchvision
    sys.path.insert(0, os.path.join(REPO, "tests", "models"))
    import export_models as em  # randomize_batchnorm, randomize_zero_parameters, SmallViT

    tv = torchvision.models
    note = MODELS[name][1]
    if name == "bert_enc":
        layer = torch.nn.TransformerEncoderLayer(d_model=ENC_HIDDEN, nhead=ENC_HEADS, dim_feedforward=ENC_FF,
                                                 dropout=0.0, activation="gelu", batch_first=True)
        model = torch.nn.TransformerEncoder(layer, num_layers=ENC_LAYERS, enable_nested_tensor=False)
    elif name == "vit":
        model = tv.vit_b_16(weights=None)
    else:
        model = getattr(tv, name)(weights=None)
    model = model.eval()
    gen = torch.Generator().manual_seed(4321)
    with torch.no_grad():
        em.randomize_batchnorm(model, gen)
        em.randomize_zero_parameters(model, gen)
    return model, note


def export(name, workdir, force=False):
    """Exports one model unless it is there already; returns its metadata (also written as <name>.json)."""
    onnx_path = os.path.join(workdir, name + ".onnx")
    meta_path = os.path.join(workdir, name + ".json")
    if not force and os.path.exists(onnx_path) and os.path.exists(meta_path):
        with open(meta_path) as f:
            return json.load(f)
    import torch
    torch.manual_seed(1234)
    model, note = build(name)
    dims = MODELS[name][0]
    x = torch.randn(2, *dims, generator=torch.Generator().manual_seed(1))
    os.makedirs(workdir, exist_ok=True)
    tmp = onnx_path + ".tmp"
    # Not under torch.no_grad(): there torch 1.13 takes the fused attention fast path
    # (aten::_native_multi_head_attention), which has no ONNX export.
    torch.onnx.export(model, (x,), tmp, opset_version=17, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, do_constant_folding=True)
    os.replace(tmp, onnx_path)
    meta = {"name": name, "model": onnx_path, "input": "input", "dims": dims, "what": note,
            "torch": torch.__version__}
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", default=DEFAULT_WORKDIR)
    ap.add_argument("--models", default="", help="comma-separated names (default: all): " + " ".join(MODELS))
    ap.add_argument("--force", action="store_true", help="export again even if the file exists")
    ap.add_argument("--dry-run", action="store_true", help="list what would be exported")
    a = ap.parse_args()
    names = [n for n in a.models.split(",") if n] or list(MODELS)
    for n in names:
        if n not in MODELS:
            sys.exit(f"export.py: unknown model '{n}' (known: {' '.join(MODELS)})")
    for n in names:
        if a.dry_run:
            print(f"would export {n}: {MODELS[n][1]} -> {os.path.join(a.workdir, n + '.onnx')}")
            continue
        meta = export(n, a.workdir, a.force)
        print(f"exported {n}: {meta['model']} ({meta['what']})", flush=True)


if __name__ == "__main__":
    main()
