"""torchvision models outside the training zoo and the four held-out models, exported to ONNX:
how tlm's zero-shot path (no measurement) fares on architectures nobody tuned it for.

Weights are random (seeded; no download): torchvision's initialisation, then every convolution
and linear layer drawn again variance-preserving (Kaiming, fan-in), so activations stay near
unit scale through the depth as in a trained network (Inception-v3's own init grows them to
~1e12, where float32 rounding alone breaks a 1e-3 relative check of the outputs), and the last
layer (SqueezeNet's is a 1x1 convolution) scaled so that the logits of the example input have unit standard deviation (so the
check against the reference interpreter, atol 1e-3, is not trivially met by tiny outputs, as
EfficientNet's would be). Timings do not depend on the values. ViT is left out: torch 1.13 exports its eval-mode attention only through a fused operator
that has no ONNX form.

    /usr/bin/python3 bench/unseen/models.py --out-dir DIR [NAME...]   # DIR/<name>.onnx
"""
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchlib import export_cli  # noqa: E402

# Families the training zoo (`tlm zoo`) does not have.
MODELS = ["squeezenet1_1", "shufflenet_v2_x1_0", "mnasnet1_0", "efficientnet_b0",
          "regnet_y_800mf", "resnext50_32x4d", "convnext_tiny", "inception_v3"]


def export(name, path):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    for mod in model.modules():
        if isinstance(mod, (torch.nn.Conv2d, torch.nn.Linear)):
            torch.nn.init.kaiming_normal_(mod.weight, mode="fan_in", nonlinearity="relu")
    x = torch.randn(1, 3, 224, 224)
    last = [mod for mod in model.modules() if isinstance(mod, (torch.nn.Conv2d, torch.nn.Linear))][-1]
    with torch.no_grad():
        scale = float(model(x).std())
        last.weight /= scale
        last.bias /= scale
        torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"],
                          opset_version=17, do_constant_folding=True)


if __name__ == "__main__":
    export_cli(__doc__, MODELS, export)
