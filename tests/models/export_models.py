#!/usr/bin/python3
"""Exports the real-model test set to ONNX (opset 17) with Debian's python3-torch and python3-torchvision.

Usage: export_models.py OUT_DIR [STAMP]

Each model gets random weights (fixed seed) and one random input, written as OUT_DIR/<name>.onnx and
OUT_DIR/<name>.input.bin (float32, little endian), listed in OUT_DIR/manifest.json with its input name and shape
("expect": "match_norm": norm-relative error against the oracle below 1e-5).
run_ort.js then adds ONNX Runtime's outputs, the oracle the C++ test compares Kiln against.
"""
import json
import os
import sys

import torch
import torchvision


class SmallViT(torch.nn.Module):
    """torchvision's VisionTransformer at a small size (the structure of vit_b_16, fewer and narrower layers)."""

    def __init__(self):
        super().__init__()
        self.vit = torchvision.models.VisionTransformer(
            image_size=64, patch_size=16, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128, num_classes=10)

    def forward(self, x):
        return self.vit(x)


class Encoder(torch.nn.Module):
    """A two-layer transformer encoder (self-attention, layer norm, GELU feed-forward) over [batch, seq, 64]."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0,
                                                 activation="gelu", batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


def models():
    tv = torchvision.models
    return [
        ("resnet18", lambda: tv.resnet18(weights=None), [1, 3, 224, 224]),
        ("mobilenet_v2", lambda: tv.mobilenet_v2(weights=None), [1, 3, 224, 224]),
        ("efficientnet_b0", lambda: tv.efficientnet_b0(weights=None), [1, 3, 224, 224]),
        ("squeezenet1_1", lambda: tv.squeezenet1_1(weights=None), [1, 3, 224, 224]),
        ("vit_small", SmallViT, [2, 3, 64, 64]),
        ("transformer_encoder", Encoder, [2, 16, 64]),
    ]


def randomize_batchnorm(model, gen):
    # Fresh BatchNorm layers have mean 0 / var 1: give them real statistics so their folding is exercised.
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(n, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(n, generator=gen) * 0.1)


def randomize_zero_parameters(model, gen):
    # Some layers start at zero (the ViT's classifier head), which would make every output 0 and the check empty.
    for p in model.parameters():
        if p.dim() > 0 and not p.any():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.02)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    manifest = []
    for i, (name, make, shape) in enumerate(models()):
        torch.manual_seed(1234 + i)
        gen = torch.Generator().manual_seed(4321 + i)
        model = make().eval()
        with torch.no_grad():
            randomize_batchnorm(model, gen)
            randomize_zero_parameters(model, gen)
        x = torch.randn(*shape, generator=gen)
        path = os.path.join(out, name + ".onnx")
        torch.onnx.export(model, (x,), path, opset_version=17, input_names=["input"], output_names=["output"],
                          do_constant_folding=True)
        with open(os.path.join(out, name + ".input.bin"), "wb") as f:
            f.write(x.numpy().astype("<f4").tobytes())
        manifest.append({"name": name, "model": name + ".onnx", "expect": "match_norm",
                         "inputs": [{"name": "input", "file": name + ".input.bin", "type": "float32", "shape": shape}]})
        print(f"exported {name} {shape}", flush=True)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    if len(sys.argv) > 2:
        open(sys.argv[2], "w").close()


if __name__ == "__main__":
    main()
