"""The benchmark's workload, shared by bench.py and the peer engine's bench_peer.py: the token ids of a sentence at
a given length and its multiply-accumulates."""
from __future__ import annotations


def macs(dims: dict, n: int) -> dict[str, int]:
    """Multiply-accumulates of one sentence of n tokens, by stage."""
    L, H, I = dims["layers"], dims["hidden"], dims["intermediate"]
    A = dims["heads_kept"] * dims["head_dim"]
    C = dims.get("num_labels", 0)
    out = {"qkv": L * n * 3 * H * A, "attn_out": L * n * A * H, "ffn_up": L * n * H * I,
           "ffn_down": L * n * I * H, "scores": L * n * n * A, "context": L * n * n * A,
           "classifier": (H * H + H * C) if C else 0}
    out["total"] = sum(out.values())
    return out


def _ids(model, n: int) -> list[int]:
    """[CLS] + n-2 word ids of a real sentence (repeated) + [SEP]."""
    base = model.encode("turn on the kitchen light and set the living room temperature to twenty degrees")
    words = base[1:-1] or [base[0]]
    body = (words * (n // len(words) + 1))[: n - 2]
    return [base[0]] + body + [base[-1]]
