"""The end-to-end benchmark's four models as PyTorch modules, exported to the ONNX files that
every runtime of the benchmark runs (tlm, ONNX Runtime) next to PyTorch eager on the module itself.

ResNet-50 and MobileNet-V2 come from torchvision. BERT-base and GPT-2 are written here, layer for
layer as HuggingFace's BertModel / GPT2LMHeadModel compute them (transformers is not a Debian
package): post-LN BERT with erf GELU and an all-ones attention mask; pre-LN GPT-2 with Conv1D
(addmm) projections, a causal mask, tanh GELU and the LM head tied to the token embedding.
Weights are random (seeded): timings do not depend on their values.

    /usr/bin/python3 bench/e2e/models.py --out-dir DIR    # writes DIR/<name>.onnx for all four
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchlib import export_cli  # noqa: E402

SEQ = 128


class BertLayer(nn.Module):
    def __init__(self, hidden=768, heads=12, ff=3072):
        super().__init__()
        self.heads, self.dh = heads, hidden // heads
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_ln = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, ff)
        self.output = nn.Linear(ff, hidden)
        self.output_ln = nn.LayerNorm(hidden, eps=1e-12)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.dh).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + mask
        ctx = torch.matmul(F.softmax(scores, dim=-1), v).permute(0, 2, 1, 3)
        ctx = ctx.reshape(x.shape)
        x = self.attn_ln(self.attn_out(ctx) + x)
        h = F.gelu(self.intermediate(x))  # erf GELU
        return self.output_ln(self.output(h) + x)


class Bert(nn.Module):
    """BertModel (base): returns the last hidden state [1, SEQ, 768]."""

    def __init__(self, vocab=30522, hidden=768, layers=12):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(512, hidden)
        self.token_type = nn.Embedding(2, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(hidden) for _ in range(layers))
        self.register_buffer("positions", torch.arange(SEQ).unsqueeze(0))
        self.register_buffer("types", torch.zeros(1, SEQ, dtype=torch.long))
        # get_extended_attention_mask of an all-ones mask: zeros [1,1,1,SEQ]
        self.register_buffer("mask", torch.zeros(1, 1, 1, SEQ))

    def forward(self, input_ids):
        x = self.word(input_ids) + self.token_type(self.types) + self.position(self.positions)
        x = self.ln(x)
        for layer in self.layers:
            x = layer(x, self.mask)
        return x


class Conv1D(nn.Module):
    """HF's Conv1D: addmm(bias, x.view(-1, in), W[in, out]).view(..., out)."""

    def __init__(self, nin, nout):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(nin, nout) / math.sqrt(nin))
        self.bias = nn.Parameter(torch.randn(nout) / math.sqrt(nin))

    def forward(self, x):
        y = torch.addmm(self.bias, x.view(-1, x.shape[-1]), self.weight)
        return y.view(x.shape[:-1] + (self.weight.shape[1],))


class GPT2Block(nn.Module):
    def __init__(self, hidden=768, heads=12):
        super().__init__()
        self.heads, self.dh, self.hidden = heads, hidden // heads, hidden
        self.ln_1, self.ln_2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.c_attn, self.c_proj = Conv1D(hidden, 3 * hidden), Conv1D(hidden, hidden)
        self.c_fc, self.mlp_proj = Conv1D(hidden, 4 * hidden), Conv1D(4 * hidden, hidden)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.dh).permute(0, 2, 1, 3)

    def forward(self, x, causal):
        q, k, v = self.c_attn(self.ln_1(x)).split(self.hidden, dim=2)
        q, k, v = self.split(q), self.split(k), self.split(v)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh)
        scores = torch.where(causal, scores, torch.tensor(torch.finfo(torch.float32).min))
        ctx = torch.matmul(F.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).reshape(x.shape)
        x = x + self.c_proj(ctx)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2(nn.Module):
    """GPT2LMHeadModel (small): returns logits [1, SEQ, 50257]."""

    def __init__(self, vocab=50257, hidden=768, layers=12):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(1024, hidden)
        self.blocks = nn.ModuleList(GPT2Block(hidden) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.register_buffer("positions", torch.arange(SEQ).unsqueeze(0))
        self.register_buffer("causal", torch.tril(torch.ones(SEQ, SEQ, dtype=torch.bool))[None, None])

    def forward(self, input_ids):
        x = self.wte(input_ids) + self.wpe(self.positions)
        for block in self.blocks:
            x = block(x, self.causal)
        return torch.matmul(self.ln_f(x), self.wte.weight.t())


def build(name):
    """(module in eval mode, example input) for one of MODELS."""
    torch.manual_seed(0)
    if name == "resnet50":
        return torchvision.models.resnet50().eval(), torch.randn(1, 3, 224, 224)
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2().eval(), torch.randn(1, 3, 224, 224)
    if name == "bert-base":
        return Bert().eval(), torch.randint(0, 30522, (1, SEQ))
    if name == "gpt2":
        return GPT2().eval(), torch.randint(0, 50257, (1, SEQ))
    raise SystemExit(f"unknown model '{name}'; known: {', '.join(MODELS)}")


MODELS = ["resnet50", "mobilenet_v2", "bert-base", "gpt2"]


def export(name, path):
    model, x = build(name)
    in_name = "input" if x.dtype == torch.float32 else "input_ids"
    with torch.no_grad():
        torch.onnx.export(model, (x,), path, input_names=[in_name], output_names=["output"],
                          opset_version=17, do_constant_folding=True)


if __name__ == "__main__":
    export_cli(__doc__, MODELS, export)
