"""Python mirror of `bertl14_required_work_buffer_size()` (bertl14/src/bertl14_encoder.c,
`bertl14_plan`), byte for byte: the converter's manifest and `bertl14_config.h` use it, and the build checks a
fixed CONFIG_BERTL14_WORK_BUFFER_SIZE against the manifest's figure (`python -m bertl14_tools.model.workbuf check`).

The plan: the residual stream h, keys and values of every token (int16 in the attention kernels' blocks of four
rows, each head's together, the key count padded to a multiple of 16; per-head uint32 scales and their maxima),
then temporaries for one block of TOKEN_BLOCK tokens (the DSP linear kernel reuses each weight
load across the block), and last the token classifier's logits of one token row (num_tags int32; none
without that head, so models without it keep their figure). Nothing depends on the number of layers;
everything else grows linearly in max_seq_len.
"""
from __future__ import annotations

TOKEN_BLOCK = 4      # BERTL14_TOKEN_BLOCK
MAX_SEQ = 512        # BERTL14_MAX_SEQ


def _a4(x: int) -> int:
    return (x + 3) & ~3


def plan(hidden: int, heads_kept: int, head_dim: int, intermediate: int, num_labels: int,
         max_seq_len: int, num_tags: int = 0) -> dict[str, int]:
    """Byte offset of every work-buffer region and `total`, exactly as bertl14_plan() lays them out."""
    n, B, H, I = max_seq_len, TOKEN_BLOCK, hidden, intermediate
    A, d, heads = heads_kept * head_dim, head_dim, heads_kept
    X, Y = max(H, A, 1), max(H, num_labels, 1)
    npad = (n + 15) & ~15           # bertl14_attn_padded
    regions = [
        ("h", n * H), ("h_scale", n * 4),
        ("k", heads * npad * d * 2), ("k_scale", heads * npad * 4),
        ("v", heads * _a4(d) * npad * 2), ("v_scale", heads * npad * 4), ("kv_max", heads * 2 * 4),
        ("x16", B * X * 2), ("x_scale", B * 4),
        ("q16", B * A * 2), ("q", heads * B * d * 2), ("q_scale", heads * B * 4),
        ("ctx16", B * A * 2), ("scores", B * npad * 4), ("probs", B * npad),
        ("y32", B * Y * 4), ("ln16", B * H * 2), ("h1", B * H), ("h1_scale", B * 4),
        ("up16", B * I * 2), ("tag32", num_tags * 4),
    ]
    out, off = {}, 0
    for name, size in regions:
        out[name] = off
        off += _a4(size)
    out["total"] = off
    return out


def required_work_buffer_size(weights: bytes, max_seq_len: int) -> int:
    """Bytes bertl14_init needs for the weights blob `weights` at `max_seq_len` (0 if the blob fails bertl14_init's
    checks or max_seq_len is out of range, like the C function)."""
    from .blob import ModelDataError, check_weights
    if not 1 <= max_seq_len <= MAX_SEQ:
        return 0
    try:
        h = check_weights(weights, c_library=True)
    except ModelDataError:
        return 0
    if max_seq_len > h["max_position"]:
        return 0
    return plan(h["hidden"], h["heads_kept"], h["head_dim"], h["intermediate"], h["num_labels"], max_seq_len,
                num_tags=h["num_tags"])["total"]


def work_buffer_size(qm, max_seq_len: int) -> int:
    """The same from a QuantModel-like object with hidden, heads_kept, head_dim, intermediate, num_labels
    (and num_tags)."""
    return plan(qm.hidden, qm.heads_kept, qm.head_dim, qm.intermediate, getattr(qm, "num_labels", 0),
                max_seq_len, getattr(qm, "num_tags", 0))["total"]


def check_build(manifest_path: str, configured: int) -> str | None:
    """The build's check of a fixed work buffer (cmake/model.cmake, CONFIG_BERTL14_WORK_BUFFER_SIZE > 0): None when
    `configured` bytes hold what the converted model needs (its manifest's work_buffer_bytes), else the error."""
    import json
    m = json.loads(open(manifest_path, encoding="utf-8").read())
    need = int(m["work_buffer_bytes"])
    if configured >= need:
        return None
    return (f"CONFIG_BERTL14_WORK_BUFFER_SIZE={configured} is smaller than the {need} bytes the model {m['model']} "
            f"needs at max_seq_len {m['max_seq_len']} (bertl14_init would fail with BERTL14_ERR_BUFFER_TOO_SMALL): "
            f"set CONFIG_BERTL14_WORK_BUFFER_SIZE=0 (the exact size) or at least {need}")


def main(argv=None) -> int:
    """python -m bertl14_tools.model.workbuf check MANIFEST SIZE STAMP: the build step of check_build (writes STAMP)."""
    import sys
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 4 or args[0] != "check":
        print("usage: python -m bertl14_tools.model.workbuf check MANIFEST_JSON CONFIGURED_BYTES STAMP_FILE", file=sys.stderr)
        return 2
    error = check_build(args[1], int(args[2]))
    if error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    with open(args[3], "w", encoding="utf-8") as f:
        f.write(f"{args[2]}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
