#!/usr/bin/python3
"""Export a torchvision model with random weights to ONNX, the reference for the zoo parity test.

The zoo (src/zoo/cnn.cc) builds the same architectures directly as graph IR; the test
tests/zoo/torchvision_parity_test.cc runs this script, imports the file and checks that both
partition into the same tasks. Needs torch 1.13 / torchvision 0.14: run it with Debian's
/usr/bin/python3.

    /usr/bin/python3 scripts/export_torchvision.py resnet50:image=160 --out build/resnet50.onnx
    /usr/bin/python3 scripts/export_torchvision.py resnet18:image=64 vgg16:classes=10 --out-dir d

SPEC uses the zoo's syntax (model[:key=value,...]) with keys batch, image, frames (r3d_18),
classes and width (mobilenet_v2, percent); --out-dir names each file by file_name(SPEC).

Weights are torchvision's random initialization under --seed; BatchNorm running statistics are
randomized too, so the Conv+BN folding torch does at export is not a no-op. The model is exported
in eval mode (Dropout vanishes, GoogLeNet's auxiliary heads are not built), input named "input"
of shape [batch,3,image,image] ([batch,3,frames,image,image] for r3d_18).
"""
import argparse
import os
import sys

import torch
import torchvision

MODELS = {
    "resnet18": torchvision.models.resnet18,
    "resnet50": torchvision.models.resnet50,
    "mobilenet_v2": torchvision.models.mobilenet_v2,
    "mobilenet_v3_small": torchvision.models.mobilenet_v3_small,
    "mobilenet_v3_large": torchvision.models.mobilenet_v3_large,
    "vgg16": torchvision.models.vgg16,
    "densenet121": torchvision.models.densenet121,
    "googlenet": torchvision.models.googlenet,
    "r3d_18": torchvision.models.video.r3d_18,
}


# Spec keys and their defaults (r3d_18: 400 classes, 112 pixels).
DEFAULTS = {"batch": 1, "image": 224, "frames": 16, "classes": 1000, "width": 100}


def parse_spec(text):
    """'resnet50:image=160,batch=2' -> (model, {key: int}), with the zoo's spec syntax."""
    model, _, rest = text.partition(":")
    if model not in MODELS:
        sys.exit(f"unknown model '{model}'; known: {', '.join(sorted(MODELS))}")
    params = dict(DEFAULTS)
    if model == "r3d_18":
        params.update(classes=400, image=112)
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if key not in DEFAULTS or not eq or not value.isdigit():
            sys.exit(f"bad item '{item}' in '{text}'; keys: {', '.join(DEFAULTS)} (integers)")
        params[key] = int(value)
    if params["width"] != 100 and model != "mobilenet_v2":
        sys.exit(f"width applies to mobilenet_v2 only, not {model}")
    return model, params


def build(model_name, params):
    kwargs = {"weights": None, "num_classes": params["classes"]}
    if model_name == "mobilenet_v2":
        kwargs["width_mult"] = params["width"] / 100.0
    if model_name == "googlenet":
        kwargs.update(aux_logits=False, init_weights=True)  # eval mode never runs the aux heads
    model = MODELS[model_name](**kwargs)
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.1, 0.1)
    return model.eval()


def export(text, out, opset, seed):
    model_name, params = parse_spec(text)
    torch.manual_seed(seed)
    model = build(model_name, params)
    shape = [params["batch"], 3, params["image"], params["image"]]
    if model_name == "r3d_18":
        shape.insert(2, params["frames"])
    tmp = f"{out}.tmp{os.getpid()}"  # then renamed: readers never see a partial file
    with torch.no_grad():
        torch.onnx.export(model, torch.randn(*shape), tmp, opset_version=opset,
                          do_constant_folding=True, input_names=["input"],
                          output_names=["output"])
    os.replace(tmp, out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("specs", nargs="+", metavar="SPEC",
                   help="model[:key=value,...], keys: " + ", ".join(DEFAULTS))
    p.add_argument("--out", help="output .onnx path (one SPEC)")
    p.add_argument("--out-dir", help="directory for one file per SPEC, named by file_name(SPEC)")
    p.add_argument("--opset", type=int, default=17, choices=[13, 17])
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if (args.out is None) == (args.out_dir is None) or (args.out and len(args.specs) != 1):
        p.error("give --out with exactly one SPEC, or --out-dir")
    for spec in args.specs:
        out = args.out or os.path.join(args.out_dir, file_name(spec))
        export(spec, out, args.opset, args.seed)


def file_name(spec):
    """The --out-dir file of a spec: 'resnet50:image=64' -> 'resnet50_image_64.onnx'."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in spec) + ".onnx"


if __name__ == "__main__":
    main()
