"""`bertl14 bench`: instructions, memory and flash of the bertl14 library on an emulated board (--board: the
Cortex-M7 mps2_an500 by default; every board whose board.yml names a QEMU machine).

Builds the test image (tests/target) for the model with each kernel set, runs it under QEMU with
`-icount` and, for each sequence length, encodes + classifies one sentence of that many tokens:
instructions per sentence (from an image without profile hooks: exact), per stage (tokenize,
embeddings, attention, FFN, LayerNorm, classifier; from an image with stage hooks, each hook's
own cost subtracted), MACs, instructions per MAC, a time estimate at the board's clock (board.yml `clock:`)
assuming one instruction per cycle, work-buffer bytes, stack high-water mark and flash by section. Plus kernel
micro-benchmarks (linear layer instructions per MAC, softmax instructions per element).

The peer in the same run (bench_peer.py, `--no-peer` skips it): the engine `tflm-cmsis-nn`, TensorFlow Lite Micro
with the CMSIS-NN kernels running the model's int8 .tflite export on the same board, sentences and counting (the
lengths up to the model's positions), its arena, flash, CMSIS-NN's kernels on the model's shapes, and the agreement
of its answers and of the library's with the float model on the public test (`--agreement-data`).

Counting: QEMU -icount shift=7 by default: each interval the image times is converted to
instructions exactly (see qemu_target.py); `--icount-shift 0` gives the same instructions with
+-40 quantization per interval. The same build gives the same counts.

`--json` prints one object {"board", "model", "clock", "results": [{"engine", "seq_len", "instructions",
"macs", "ram_bytes", "work_buffer_bytes", "flash_bytes", "agreement_with_float", "ms_estimate", "stages": {...}}],
"kernels": {...}, "agreement", ...} (the peer's work_buffer_bytes: the arena TFLM uses).
`--report DIR` also writes DIR/benchmarks.md and PNG plots.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .. import REPO_ROOT
from ..cachelock import cache_lock
from ..errors import UserError
from .workload import _ids, macs

STAGE_GROUPS = {                      # the report's stages <- the library's profile stages
    "tokenize": ("tokenize",),
    "embeddings": ("embed",),
    "attention": ("qkv", "scores", "softmax", "context", "attn_out"),
    "ffn": ("ffn_up", "gelu", "ffn_down"),
    "layernorm": ("layernorm",),
    "quantize": ("quant",),
    "classifier": ("classifier",),
    "other": ("other",),
}
LINEAR_STAGES = ("qkv", "attn_out", "ffn_up", "ffn_down")


def _code_bytes(build_dir: Path, board: str = "mps2_an500") -> int:
    from .qemu_target import board_info
    lib = build_dir / "bertl14" / "libbertl14.a"
    out = subprocess.run([board_info(board).tool("size"), "-t", str(lib)], capture_output=True, text=True)
    if out.returncode != 0:
        return 0
    last = out.stdout.strip().splitlines()[-1].split()
    return int(last[0]) + int(last[1])            # text + data of the library objects


def public_test_file() -> Path | None:
    """The public English test set, if present ($BERTL14_TEST_DATA or <repo>/../shared/data/ha-intents-tests,
    en.jsonl): evaluation only."""
    import os
    root = Path(os.environ.get("BERTL14_TEST_DATA") or REPO_ROOT.parent / "shared" / "data" / "ha-intents-tests")
    f = root / "en.jsonl"
    return f if f.is_file() else None


def median_test_sentence(model) -> str | None:
    """The median-length sentence (by this model's tokens) of the public English test set, if present
    (public_test_file); used only to pick a typical length."""
    f = public_test_file()
    if f is None:
        return None
    from ..textio import read_jsonl
    texts = [r["text"] for r in read_jsonl(f, "public test file", need=("text",))]
    ranked = sorted(texts, key=lambda t: (len(model.encode(t)), t))
    return ranked[len(ranked) // 2] if ranked else None


def run_engine(model, kernels: str, seq_lens: list[int], board: str, shift: int, progress: bool,
               median_text: str | None = None) -> dict:
    from . import qemu_target
    max_len = max(seq_lens)
    src = model.source_dir or model.path
    wt = model_weights(model)        # the build converts src with the model's linear weight type
    prof_elf = qemu_target.build_image(src, kernels, max_len, board=board, profile=True, quiet=not progress, weights=wt)
    plain_elf = qemu_target.build_image(src, kernels, max_len, board=board, profile=False, quiet=not progress,
                                        weights=wt)
    rows, kern = [], {}
    dims = model.manifest["dims"]
    with qemu_target.QemuTarget(plain_elf, board=board, icount_shift=shift) as t:
        work = int(t.banner["work"])
        tick_ns = int(t.banner.get("tick_ns", 40))   # ns of a counter tick (40: an image older than the field)
        exact = {n: t.infer_ids(_ids(model, n)) for n in seq_lens}
        kern = t.kernels()
        med = t.infer_text(median_text) if median_text else None
    with qemu_target.QemuTarget(prof_elf, board=board, icount_shift=shift) as t:
        mark = t.mark_instructions()
        prof = {n: t.infer_ids(_ids(model, n)) for n in seq_lens}
        tok = t.infer_text("turn on the kitchen light")           # the tokenizer's share, one sentence
    from ..model.workbuf import plan

    def wb(n: int) -> int:                         # bertl14_required_work_buffer_size at max_seq_len n
        return plan(dims["hidden"], dims["heads_kept"], dims["head_dim"], dims["intermediate"],
                    dims.get("num_labels", 0), n)["total"]

    for n in seq_lens:
        e, p = exact[n], prof[n]
        if e.status != 0 or p.status != 0:
            raise UserError(f"encode failed on the target at seq_len {n} (status {e.status})")
        fine = {k: max(0, round(v - mark * p.stage_entries[k])) for k, v in p.stage_instructions.items()}
        fine["tokenize"] = 0
        # the counter is 32 bits: an interval longer than 2^32 ticks (1.34 G instructions at shift 7 with the MPS2
        # 40 ns ticks) wraps, by exactly 2^32 ticks = WRAP instructions each time; the profiled stages (short
        # intervals) say how often
        wrap = (2 ** 32 * tick_ns) >> shift
        wraps = max(0, round((sum(fine.values()) - e.instructions) / wrap))
        total = e.instructions + wraps * wrap
        stages = {g: sum(fine[s] for s in members) for g, members in STAGE_GROUPS.items()}
        m = macs(dims, n)
        lin_macs = sum(m[s] for s in LINEAR_STAGES)
        rows.append({
            "engine": f"bertl14-{kernels}", "weights": wt, "seq_len": n, "instructions": total, "timer_wraps": wraps,
            "macs": m["total"], "instructions_per_mac": round(total / m["total"], 3),
            "ram_bytes": wb(n) + e.stack_bytes, "work_buffer_bytes": wb(n), "stack_bytes": e.stack_bytes,
            "image_work_buffer_bytes": work,
            "stages": stages, "stages_detail": fine,
            "linear_instructions_per_mac": round(sum(fine[s] for s in LINEAR_STAGES) / lin_macs, 3),
            "softmax_instructions_per_element": round(fine["softmax"] / (dims["layers"] * dims["heads_kept"] * n * n), 2),
        })
    if med is not None and med.status == 0:
        m = macs(dims, len(med.ids))
        rows.append({"engine": f"bertl14-{kernels}", "weights": wt, "seq_len": len(med.ids),
                     "sentence": "median public English test sentence",
                     "instructions": med.instructions, "macs": m["total"],
                     "instructions_per_mac": round(med.instructions / m["total"], 3),
                     "ram_bytes": wb(len(med.ids)) + med.stack_bytes, "work_buffer_bytes": wb(len(med.ids)),
                     "stack_bytes": med.stack_bytes, "stages": {}, "tokenizer_included": True})
    tok_fine = max(0, round(tok.stage_instructions["tokenize"] - mark * tok.stage_entries["tokenize"]))
    timer = kern.pop("timer_read", {"instructions": 0, "reps": 1})
    per_read = timer["instructions"] / max(1, timer["reps"])
    kernels_out = {}
    for name, k in kern.items():
        per_rep = k["instructions"] / k["reps"] - (per_read if name.startswith("softmax") else 0)
        unit = "instructions_per_mac" if name.startswith("linear") else "instructions_per_element"
        kernels_out[name] = {unit: round(per_rep / k["work"], 3)}
    return {"rows": rows, "kernels": kernels_out, "converted": plain_elf.parent / "generated" / "model", "tokenize_example": {"text": "turn on the kitchen light",
            "tokens": len(tok.ids or []), "instructions": tok_fine},
            "code_bytes": _code_bytes(plain_elf.parent, board)}


# ---- float32 naive baseline (bench/float32_naive) ---------------------------------------------

FLOAT_SRC = REPO_ROOT / "bench" / "float32_naive"


def _c_array(ctype: str, name: str, a) -> str:
    import numpy as np
    flat = np.asarray(a, dtype=np.float32).ravel()
    def lit(v: float) -> str:
        t = f"{v:.9g}" if np.isfinite(v) else "0"
        return (t if ("." in t or "e" in t) else t + ".0") + "f"
    body = ",".join(lit(v) for v in flat.tolist())
    return f"const {ctype} {name}[{max(1, flat.size)}] = {{{body or '0'}}};\n"


def write_float_model(fm, max_seq: int, out: Path) -> None:
    """float_model.c/.h for the float32 baseline: the unquantized weights as C arrays."""
    out.mkdir(parents=True, exist_ok=True)
    heads = len(fm.layers[0].heads_kept) if fm.layers[0].heads_kept else fm.num_heads
    labels = fm.cls_w.shape[0] if fm.has_classifier else 0
    h = ["#ifndef FLOAT_MODEL_H", "#define FLOAT_MODEL_H",
         f"#define FM_LAYERS {fm.num_layers}", f"#define FM_HIDDEN {fm.hidden}", f"#define FM_HEADS {heads}",
         f"#define FM_HEAD_DIM {fm.head_dim}", f"#define FM_INTERMEDIATE {fm.intermediate}",
         f"#define FM_MAX_SEQ {max_seq}", f"#define FM_LABELS {labels}", f"#define FM_LN_EPS {fm.layer_norm_eps:.9g}f",
         "typedef struct { const float *wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo, *ln1_g, *ln1_b, *wi, *bi, *wo2, *bo2, "
         "*ln2_g, *ln2_b; } fm_layer_t;",
         "extern const float fm_word[], fm_pos[], fm_type0[], fm_emb_ln_g[], fm_emb_ln_b[];",
         "extern const float fm_pooler_w[], fm_pooler_b[], fm_cls_w[], fm_cls_b[];",
         "extern const fm_layer_t fm_layers[FM_LAYERS];", "#endif", ""]
    c = ['#include "float_model.h"\n', _c_array("float", "fm_word", fm.word_emb),
         _c_array("float", "fm_pos", fm.pos_emb[:max_seq]), _c_array("float", "fm_type0", fm.type_emb[0]),
         _c_array("float", "fm_emb_ln_g", fm.emb_ln_g), _c_array("float", "fm_emb_ln_b", fm.emb_ln_b)]
    names = ["wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo", "ln1_g", "ln1_b", "wi", "bi", "wo2", "bo2", "ln2_g", "ln2_b"]
    for i, L in enumerate(fm.layers):
        for n in names:
            c.append(_c_array("float", f"fm_l{i}_{n}", getattr(L, n)))
    for n, a in (("fm_pooler_w", fm.pooler_w), ("fm_pooler_b", fm.pooler_b), ("fm_cls_w", fm.cls_w),
                 ("fm_cls_b", fm.cls_b)):
        c.append(_c_array("float", n, a if a is not None else [0.0]))
    c.append("const fm_layer_t fm_layers[FM_LAYERS] = {" + ",".join(
        "{" + ",".join(f"fm_l{i}_{n}" for n in names) + "}" for i in range(fm.num_layers)) + "};\n")
    text_c, text_h = "".join(c), "\n".join(h)
    for name, text in (("float_model.c", text_c), ("float_model.h", text_h)):
        f = out / name
        if not f.exists() or f.read_text() != text:          # unchanged bytes: no rebuild
            f.write_text(text)


FLOAT_RAM_RESERVE = 384 * 1024       # of the board's RAM, kept for the float32 image's stack, .data and libm


def float_ram_limit(board: str) -> int:
    """Bytes the float32 image's static buffers may take: the board's RAM region (board.yml, board_fit) less
    FLOAT_RAM_RESERVE."""
    from ..model.board_fit import region_size
    return region_size(board, "RAM") - FLOAT_RAM_RESERVE


def float_naive_bytes(dims: dict, n: int) -> int:
    """Static activation bytes of bench/float32_naive built for n tokens: naive_bert.c's buffers (emb, the
    per-layer q k v scores ctx attn h1 ffn out, pooled), floats."""
    L, H, I = dims["layers"], dims["hidden"], dims["intermediate"]
    heads, A = dims["heads_kept"], dims["heads_kept"] * dims["head_dim"]
    return 4 * (n * H + L * (4 * n * A + heads * n * n + 3 * n * H + n * I) + H)


def run_float_baseline(model, seq_lens: list[int], board: str, shift: int, progress: bool) -> list[dict]:
    import numpy as np
    from ..model import float_engine
    from . import qemu_target
    max_len = max(seq_lens)
    fm = model.fm
    key = f"{model.path}-{max_len}".encode()
    import hashlib
    gen = qemu_target._cache() / f"float-{hashlib.sha256(key).hexdigest()[:12]}"
    build_dir = gen / f"build-{board}"
    cmd = [sys.executable, "-m", "west", "build", "-b", board, "-d", str(build_dir), str(FLOAT_SRC), "--",
           f"-DFLOAT_MODEL_DIR={gen / 'model'}", "-DCONFIG_APP_RTOS_NONE=y"]
    if progress:
        print(f"building the float32 baseline image in {build_dir}", file=sys.stderr)
    with cache_lock(gen):
        write_float_model(fm, max_len, gen / "model")
        proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=1800,
                              env=dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL="2"))
    if proc.returncode != 0:
        raise UserError("building the float32 baseline failed:\n" + "\n".join(
            ln[:300] for ln in (proc.stdout + proc.stderr).splitlines()[-20:]))
    dims = model.manifest["dims"]
    rows = []
    gelu = "tanh"
    with qemu_target.QemuTarget(build_dir / "firmware.elf", board=board, icount_shift=shift) as t:
        # the image's buffers are sized for max_len tokens; RAM at n tokens = what a build for n would take
        ram_other = int(t.banner["ram"]) - float_naive_bytes(dims, max_len)
        for n in seq_lens:
            ids = _ids(model, n)
            t._send("I " + " ".join(map(str, ids)))
            got = {}
            while True:
                ln = t._line()
                tag, _, rest = ln.partition(" ")
                if tag == "END":
                    break
                got[tag] = rest
            logits = np.array([int(v) for v in got.get("L", "").split()], dtype=np.float64) / 1000
            instr, stack = (int(v) for v in got["S"].split())
            ref = float_engine.forward(fm, ids, gelu=gelu)
            ref_logits = getattr(ref, "logits", None)
            err = (float(np.max(np.abs(logits - np.asarray(ref_logits)))) if ref_logits is not None and len(logits)
                   else None)
            m = macs(dims, n)
            rows.append({"engine": "float32-naive", "seq_len": n, "instructions": instr, "macs": m["total"],
                         "instructions_per_mac": round(instr / m["total"], 3),
                         "ram_bytes": float_naive_bytes(dims, n) + ram_other + stack,
                         "work_buffer_bytes": float_naive_bytes(dims, n) + ram_other, "stack_bytes": stack,
                         "stages": {}, "max_abs_logit_error_vs_numpy": err})
    return rows


# ---- host baselines: the C library vs ONNX Runtime, one thread --------------------------------

def _best_us(fn, reps: int = 50) -> float:
    """Best of `reps` runs (the least disturbed by other processes on a shared machine), microseconds."""
    import time
    fn()                                           # warm-up
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return round(best * 1e6, 1)


def run_host_baselines(model, converted: Path, seq_lens: list[int], progress: bool) -> list[dict]:
    """Per-sentence host time: bertl14 (portable C through ctypes) and ONNX Runtime fp32 / dynamic INT8
    on the same Hugging Face model, intra- and inter-op threads 1. Skipped (note) without torch/onnxruntime."""
    import hashlib
    import importlib.util
    import numpy as np
    from ..reference import cengine
    from . import qemu_target
    rows = []
    dims = model.manifest["dims"]
    eng = cengine.CLibrary(converted, max_seq_len=max(seq_lens), kernels="portable")
    for n in seq_lens:
        ids = _ids(model, n)
        rows.append({"engine": "host-bertl14-c", "seq_len": n, "host_us": _best_us(lambda: eng.classify(ids)),
                     "macs": macs(dims, n)["total"], "stages": {},
                     "note": "portable kernels, encode + classify through ctypes"})
    missing = [m for m in ("torch", "transformers", "onnxruntime", "onnx") if importlib.util.find_spec(m) is None]
    if missing or model.source_dir is None:
        why = ("missing " + ", ".join(missing) + "; pip install -e '.[train,bench]'") if missing else "no Hugging Face source folder"
        print(f"bench: ONNX Runtime baseline skipped ({why})",
              file=sys.stderr)
        return rows
    import onnxruntime as ort
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import BertForSequenceClassification
    out = qemu_target._cache() / f"onnx-{hashlib.sha256(str(Path(model.source_dir).resolve()).encode()).hexdigest()[:12]}"
    out.mkdir(parents=True, exist_ok=True)
    fp32, int8 = out / "model.onnx", out / "model-int8.onnx"
    with cache_lock(out):            # one export at a time: another process waits, then finds it written
        if not int8.exists():
            if progress:
                print(f"bench: exporting {model.source_dir} to ONNX in {out}", file=sys.stderr)
            hf = BertForSequenceClassification.from_pretrained(str(model.source_dir)).eval()
            x = torch.tensor([_ids(model, 8)])
            torch.onnx.export(hf, (x, torch.ones_like(x), torch.zeros_like(x)), str(fp32),
                              input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                              dynamic_axes={k: {1: "n"} for k in ("input_ids", "attention_mask", "token_type_ids")},
                              opset_version=17, dynamo=False)
            quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    for name, path in (("host-onnxruntime-fp32", fp32), ("host-onnxruntime-int8-dynamic", int8)):
        sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        for n in seq_lens:
            x = np.array([_ids(model, n)], dtype=np.int64)
            feed = {"input_ids": x, "attention_mask": np.ones_like(x), "token_type_ids": np.zeros_like(x)}
            rows.append({"engine": name, "seq_len": n, "host_us": _best_us(lambda: sess.run(None, feed)),
                         "macs": macs(dims, n)["total"], "stages": {}})
    return rows


TWIN_POSITIONS = 512


def shape_twin(source: Path, positions: int = TWIN_POSITIONS) -> Path:
    """A copy of the Hugging Face folder `source` whose position table is extended to `positions` rows
    (row p = trained row p mod P; nothing else changes), in the cache: long inputs become measurable for
    the model's shape. Rows below P are the trained ones, so up to P tokens it computes what the model
    does. Only the instruction and memory figures of the twin mean anything beyond P."""
    import hashlib
    import numpy as np
    from safetensors.numpy import load_file, save_file
    from ..model import hf
    from . import qemu_target
    source = Path(source).resolve()
    key = hashlib.sha256(b"".join(p.read_bytes() for p in hf.input_files(source))).hexdigest()[:12]
    out = qemu_target._cache() / f"twin-{source.name}-{positions}-{key}"
    if (out / "config.json").is_file():
        return out
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")     # a process's own: parallel runs never share one
    tmp.mkdir(parents=True, exist_ok=True)
    for p in hf.input_files(source):
        if p.suffix not in (".safetensors", ".bin") and p.name != "config.json":
            (tmp / p.name).write_bytes(p.read_bytes())
    cfg = json.loads((source / "config.json").read_text(encoding="utf-8"))
    weights = hf.find_weights_file(source)
    if weights.suffix != ".safetensors":
        raise UserError(f"{source}: a shape twin needs model.safetensors (found {weights.name})")
    tensors = load_file(str(weights))
    for name, t in list(tensors.items()):
        if name.endswith("position_embeddings.weight"):
            tensors[name] = np.ascontiguousarray(t[np.arange(positions) % t.shape[0]])
        elif name.endswith("position_ids"):
            tensors[name] = np.arange(positions, dtype=t.dtype).reshape(1, positions)
    cfg["max_position_embeddings"] = positions
    save_file(tensors, str(tmp / "model.safetensors"))
    (tmp / "config.json").write_text(json.dumps(cfg, indent=2), encoding="utf-8")
    if not out.exists():
        tmp.rename(out)
    shutil.rmtree(tmp, ignore_errors=True)              # another process's twin won
    return out


def model_commit(path: Path) -> str | None:
    """The last commit that changed the model folder (None outside git or when it has local changes)."""
    path = Path(path).resolve()
    try:
        rev = subprocess.run(["git", "log", "-1", "--format=%H", "--", "."], cwd=path, capture_output=True,
                             text=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=path, capture_output=True,
                               text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (rev + ("+local-changes" if dirty else "")) if rev else None


def board_clock(board: str) -> dict | None:
    """The clock the time estimates use: board.yml `clock: {hz, part}` (for an emulated board, the real part it
    stands in for); None when the board names none."""
    from .qemu_target import board_info
    c = board_info(board).data.get("clock") or {}
    return {"hz": int(c["hz"]), "part": c.get("part")} if c.get("hz") else None


def model_weights(model) -> str:
    """"int16" | "int8": the linear weight type a model folder was converted with (manifest options.quantize)."""
    return model.manifest.get("options", {}).get("quantize", "int16")


def run(args) -> int:
    from . import qemu_target
    from ..model.convert import ConvertOptions
    from ..model.folder import open_model as _open

    def open_model(path, progress=True):   # a Hugging Face folder converted with --weights (a converted one as is)
        return _open(path, ConvertOptions(quantize=args.weights) if args.weights else None, progress=progress)
    qemu_target.require_tools(args.board)
    kernel_sets = qemu_target.resolve_kernels(args.board, args.kernels)   # before any work: the board's sets
    if args.icount_shift is None:
        args.icount_shift = qemu_target.board_icount_shift(args.board)
    seq_lens = list(args.seq_lens)   # sorted, each in 2..512 ([CLS] and [SEP] included): ui.IntList
    model = open_model(args.model, progress=not args.quiet)
    if args.weights and model_weights(model) != args.weights:
        raise UserError(f"{args.model} was converted with {model_weights(model)} weights: convert its Hugging Face "
                        f"folder with --weights {args.weights}, or give that folder to --model")
    trained = model                  # the model itself (not its shape twin): the peer's export
    dims = model.manifest["dims"]
    limit = int(dims.get("source_max_position") or dims["max_position"]) if model.source_dir else int(dims["max_position"])
    commit = model_commit(model.source_dir or model.path)
    twin = None
    if seq_lens[-1] > limit and model.source_dir is not None and args.twin:
        twin_dir = shape_twin(model.source_dir)
        twin = {"positions": TWIN_POSITIONS, "trained_positions": limit, "source": str(model.source_dir),
                "note": f"the position table extended from {limit} to {TWIN_POSITIONS} rows (row p = trained row "
                        f"p mod {limit}); every other weight is the model's: up to {limit} tokens it is the model"}
        if not args.quiet:
            print(f"bench: {model.name} has {limit} positions: measuring its shape twin with "
                  f"{TWIN_POSITIONS} ({twin_dir})", file=sys.stderr)
        model = open_model(twin_dir, progress=not args.quiet)
        limit = TWIN_POSITIONS
    if seq_lens[-1] > limit:
        dropped = [n for n in seq_lens if n > limit]
        seq_lens = [n for n in seq_lens if n <= limit]
        print(f"bench: {model.name} has {limit} positions: skipping seq_len {', '.join(map(str, dropped))}",
              file=sys.stderr)
        if not seq_lens:
            raise UserError(f"every --seq-lens value exceeds the model's {limit} positions")
    results, kernels, extra = [], {}, {}
    median = median_test_sentence(model)
    for k in kernel_sets:
        if not args.quiet:
            print(f"bench: {k} kernels on {args.board} (QEMU -icount shift={args.icount_shift})", file=sys.stderr)
        r = run_engine(model, k, seq_lens, args.board, args.icount_shift, not args.quiet, median)
        converted = r["converted"]
        results += r["rows"]
        kernels[f"bertl14-{k}"] = r["kernels"]
        extra[f"bertl14-{k}"] = {"tokenize_example": r["tokenize_example"], "code_bytes": r["code_bytes"]}
    float_skipped = []
    if args.baseline:
        ram_limit = float_ram_limit(args.board)
        float_lens = [n for n in seq_lens if float_naive_bytes(dims, n) <= ram_limit]
        float_skipped = [n for n in seq_lens if n not in float_lens]
        if not args.quiet:
            print("bench: float32 naive baseline" + (f" (not at {', '.join(map(str, float_skipped))} tokens: its "
                  f"buffers exceed the board's RAM)" if float_skipped else ""), file=sys.stderr)
        if float_lens:
            results += run_float_baseline(model, float_lens, args.board, args.icount_shift, not args.quiet)
    if args.host:
        if not args.quiet:
            print("bench: host baselines (one thread)", file=sys.stderr)
        results += run_host_baselines(model, converted, seq_lens, not args.quiet)
    peer = None
    if args.peer:
        from . import bench_peer
        if not args.quiet:
            print(f"bench: {bench_peer.PEER} (TFLM + CMSIS-NN) on {args.board}", file=sys.stderr)
        data = Path(args.agreement_data) if args.agreement_data else public_test_file()
        peer = bench_peer.run_bench(trained, seq_lens, args.board, args.icount_shift, not args.quiet, data)
        if "skipped" in peer:
            print(f"bench: {bench_peer.PEER} skipped ({peer['skipped']})", file=sys.stderr)
        else:
            results += peer["rows"]
            kernels[bench_peer.PEER] = peer["kernels"]
            agree = (peer["agreement"] or {}).get("agreement_with_float", {})
            for r in results:
                key = bench_peer.PEER if r["engine"] == bench_peer.PEER else (
                    "bertl14" if r["engine"].startswith("bertl14-") else None)
                if key in agree:
                    r["agreement_with_float"] = agree[key]
    fb = model.manifest.get("flash_bytes", {})
    for r in results:                # the library's rows: weights + vocabulary + its code
        if r["engine"] in extra and fb.get("weights"):
            r["flash_bytes"] = fb["weights"] + (fb.get("vocabulary") or 0) + extra[r["engine"]]["code_bytes"]
    clock = board_clock(args.board)
    for r in results:
        if "instructions" in r and clock:
            r["ms_estimate"] = round(r["instructions"] / clock["hz"] * 1e3, 3)
    command = (f"bertl14 bench --board {args.board} --model {args.model} "
               f"--seq-lens {','.join(map(str, args.seq_lens))} "
               f"--kernels {args.kernels}" + (f" --weights {args.weights}" if args.weights else "") +
               ("" if args.baseline else " --no-baseline") +
               ("" if args.host else " --no-host") + ("" if args.twin else " --no-twin") +
               ("" if args.peer else " --no-peer") + (f" --report {args.report}" if args.report else ""))
    report = {"command": command,
              "board": args.board, "cpu": qemu_target.board_cpu(args.board),
              "model": Path(args.model).name, "model_commit": commit, "shape_twin": twin,
              "weights": model_weights(model),
              "icount_shift": args.icount_shift,
              "clock": clock,
              "note": (f"ms estimates: instructions at {clock['hz'] / 1e6:g} MHz ({clock['part']}), one instruction a "
                       "cycle" if clock else "no ms estimates: the board's board.yml names no clock"),
              "dims": model.manifest["dims"], "results": results, "kernels": kernels, "engines": extra,
              "flash_bytes": {"weights": fb.get("weights"), "vocabulary": fb.get("vocabulary"),
                              "code": {e: v["code_bytes"] for e, v in extra.items()}}}
    if peer is not None:
        report["peer"] = {k: v for k, v in peer.items() if k not in ("rows", "kernels")}
        if "code_bytes" in peer:
            report["flash_bytes"]["code"][bench_peer.PEER] = peer["code_bytes"]
        report["agreement"] = peer.get("agreement")
    if float_skipped:
        report["float32_naive_skipped"] = {"seq_lens": float_skipped, "bytes": {
            str(n): float_naive_bytes(dims, n) for n in float_skipped}, "ram_limit": ram_limit}
    report["ratios"] = ratios(results)
    if args.json:
        from ..ui import emit_json
        emit_json(report)
    else:
        _print_table(report)
    if args.report:
        write_report(report, Path(args.report))
    return 0


def ratios(results: list[dict]) -> list[dict]:
    """Per seq_len: portable / DSP and portable / Helium (mve) instructions, float32 / DSP instructions and RAM."""
    by = {(r["engine"], r["seq_len"]): r for r in results if not r.get("sentence")}
    out = []
    for n in sorted({r["seq_len"] for r in results if not r.get("sentence")}):
        d, p, f = by.get(("bertl14-dsp", n)), by.get(("bertl14-portable", n)), by.get(("float32-naive", n))
        row = {"seq_len": n}
        if d and p:
            row["portable_over_dsp_instructions"] = round(p["instructions"] / d["instructions"], 2)
        m = by.get(("bertl14-mve", n))
        if m and p:
            row["portable_over_mve_instructions"] = round(p["instructions"] / m["instructions"], 2)
        if d and f:
            row["float32_over_dsp_instructions"] = round(f["instructions"] / d["instructions"], 2)
            row["float32_over_dsp_ram"] = round(f["ram_bytes"] / d["ram_bytes"], 1)
        t = by.get(("tflm-cmsis-nn", n))
        if d and t:
            row["tflm_over_dsp_instructions"] = round(t["instructions"] / d["instructions"], 2)
            row["tflm_arena_over_dsp_work_buffer"] = round(t["work_buffer_bytes"] / d["work_buffer_bytes"], 2)
        out.append(row)
    return out


def _print_table(rep: dict) -> None:
    clock = rep.get("clock")
    mhz = f"{clock['hz'] / 1e6:g}" if clock else "?"
    print(f"{rep['model']} on {rep['board']} (QEMU -icount; ms = instructions at {mhz} MHz, 1 instruction/cycle: "
          "an estimate)")
    print(f"{'engine':18s} {'tokens':>6s} {'instructions':>13s} {'MACs':>11s} {'instr/MAC':>9s} {'ms@' + mhz:>8s} "
          f"{'linear i/MAC':>12s} {'softmax i/el':>12s} {'RAM B':>8s}")
    for r in rep["results"]:
        if "host_us" in r:
            print(f"{r['engine']:30s} {r['seq_len']:6d} tokens  {r['host_us']:10.1f} us/sentence on the host (1 thread)")
            continue
        lin, smx = r.get("linear_instructions_per_mac"), r.get("softmax_instructions_per_element")
        print(f"{r['engine']:18s} {r['seq_len']:6d} {r['instructions']:13d} {r['macs']:11d} "
              f"{r['instructions_per_mac']:9.3f} {r.get('ms_estimate', float('nan')):8.2f} {'' if lin is None else lin:>12} "
              f"{'' if smx is None else smx:>12} {r['ram_bytes']:8d}" + (f"  ({r['sentence']})" if r.get("sentence") else ""))
        if r["stages"]:
            print("    stages: " + ", ".join(f"{k} {v}" for k, v in r["stages"].items()))
    for eng, ks in rep["kernels"].items():
        print(f"{eng} kernels: " + ", ".join(f"{n} {list(v.values())[0]}" for n, v in ks.items()))
    for r in rep.get("ratios", []):
        print("ratios at {}: ".format(r["seq_len"]) + ", ".join(f"{k} {v}" for k, v in r.items() if k != "seq_len"))


PEER_OPERATOR_NOTE = {"FULLY_CONNECTED": "linear layers (CMSIS-NN)", "BATCH_MATMUL": "scores and context (CMSIS-NN)",
                      "SOFTMAX": "attention softmax (CMSIS-NN)", "MEAN": "LayerNorm mean and variance",
                      "SUB": "LayerNorm x - mean", "MUL": "LayerNorm square, 1/sd, gamma (CMSIS-NN where shapes match)",
                      "ADD": "residuals (CMSIS-NN), LayerNorm beta, embeddings", "RSQRT": "LayerNorm 1/sd",
                      "GeluApprox": "GELU (256-entry table)", "TRANSPOSE": "heads (CMSIS-NN)",
                      "RESHAPE": "heads", "GATHER": "embeddings, [CLS] row", "TANH": "pooler"}


def peer_section(rep: dict, met) -> list[str]:
    """docs/benchmarks.md's section on the tflm-cmsis-nn engine (nothing when the run skipped it with --no-peer)."""
    peer = rep.get("peer")
    if peer is None:
        return []
    lines = ["", "## The peer: TensorFlow Lite Micro with CMSIS-NN (`tflm-cmsis-nn`)", ""]
    if "skipped" in peer:
        return lines + [f"Not measured in this run: {peer['skipped']}."]
    rows = {r["seq_len"]: r for r in rep["results"] if r["engine"] == "tflm-cmsis-nn"}
    dsp = {r["seq_len"]: r for r in rep["results"] if r["engine"] == "bertl14-dsp" and not r.get("sentence")}
    lines += [
        "What runs: the same model exported to an int8 `.tflite` by `scripts/bertl14_tools/model/tflite_export.py` (no "
        "TensorFlow: the flatbuffer is written with the `flatbuffers` package and the TFLite schema bindings of the "
        "pinned tflite-micro sources). Full-integer post-training quantization as TensorFlow Lite's converter does it "
        "with a representative dataset (the model's calibration sentences, those `bertl14 convert` calibrates on): "
        "int8 activations with their own scale and zero point from the ranges seen, int8 fully connected weights per "
        "output channel, int32 biases. LayerNorm runs as the int8 builtins TFLM has (MEAN, SUB, MUL, MEAN, RSQRT, MUL, "
        "MUL, ADD), GELU as the GeluApprox custom operator (`integrations/tflm`), attention as RESHAPE, TRANSPOSE, "
        "BATCH_MATMUL, SOFTMAX; activations are [1, n, features], as TensorFlow exports a Dense layer, so "
        "FULLY_CONNECTED takes CMSIS-NN's batched path (`arm_convolve_1x1_s8_fast`). The graph does the library's "
        "work: embeddings, encoder, pooler and classifier, and the token tagger. TFLM tensors have fixed shapes: one "
        "model per length (a deployment padding to one length pays that length's instructions).",
        "",
        "The image `bench/tflm_cmsis_nn`: tflite-micro 90b983c2 with its CMSIS-NN kernels (CMSIS-NN 4ab83cc3, the "
        "commit that TFLM version downloads; FULLY_CONNECTED, BATCH_MATMUL, SOFTMAX, ADD, MUL and TRANSPOSE from "
        "CMSIS-NN, TFLM's reference kernels for the others), compiled -O2 like the library with TFLM's "
        "`KERNELS_OPTIMIZED_FOR_SPEED`, the models in flash, the same startup, UART and counting as `tests/target`. "
        "Counted: the input copy and `Invoke()`; loading a model (`AllocateTensors`, the kernels' Prepare) is not, as "
        "`bertl14_init` is not. Arena: `arena_used_bytes()` (tensors, TFLM's bookkeeping, the kernels' persistent data; "
        "the weights stay in flash). Flash: the model's `.tflite` + the TFLM and CMSIS-NN code the image links "
        "(from its link map); the library's flash counts its vocabulary section too (the tokenizer on the device; "
        "the peer takes token ids).", "",
        "| tokens | bertl14-dsp instructions | tflm-cmsis-nn instructions | tflm / dsp | bertl14-dsp work buffer B | "
        "tflm arena B | bertl14-dsp flash B | tflm flash B |", "|---|---|---|---|---|---|---|---|"]
    for n, t in rows.items():
        d = dsp.get(n)
        lines.append(f"| {n} | {d['instructions']:,} | {t['instructions']:,} | {t['instructions'] / d['instructions']:.2f} | "
                     f"{d['work_buffer_bytes']:,} | {t['arena_bytes']:,} | {d.get('flash_bytes', 0):,} | "
                     f"{t['flash_bytes']:,} |" if d else
                     f"| {n} | | {t['instructions']:,} | | | {t['arena_bytes']:,} | | {t['flash_bytes']:,} |")
    agree = rep.get("agreement")
    if agree:
        acc = agree.get("accuracy_argmax", {})
        lines += ["", f"Answers on `{agree['data']}` ({agree['n']:,} sentences, no registry, the same token ids for "
                  "every engine): the best intent's agreement with the float model's, and accuracy against the "
                  "expected intent (best label, no threshold). The library's figure is its Python reference's, "
                  "bit-exact with both kernel sets; the peer's comes from the same image sources built for the host "
                  "(`west build -b host bench/tflm_cmsis_nn`: CMSIS-NN's portable C paths, which compute what its "
                  "DSP paths compute), one export per sentence length.", "",
                  "| engine | agreement with float | accuracy (argmax) |", "|---|---|---|"]
        for name in ("bertl14", "tflm-cmsis-nn"):
            lines.append(f"| {name} | {agree['agreement_with_float'][name]} | {acc.get(name, '')} |")
        if "float" in acc:
            lines.append(f"| float (the model) | 1.0 | {acc['float']} |")
    ops = sorted({o for r in rows.values() for o in r.get("operators", {})},
                 key=lambda o: -max(r["operators"].get(o, {}).get("instructions", 0) for r in rows.values()))
    if ops:
        lines += ["", "Where the peer's instructions go (TFLM's profiler hooks around each operator; share of the "
                  "sentence):", "", "| operator | what | " + " | ".join(f"{n} tokens" for n in rows) + " |",
                  "|---|---|" + "---|" * len(rows)]
        for o in ops:
            lines.append(f"| {o} | {PEER_OPERATOR_NOTE.get(o, '')} | " + " | ".join(
                f"{100 * r['operators'].get(o, {}).get('instructions', 0) / r['instructions']:.1f} %"
                for r in rows.values()) + " |")
        lines.append("| | per MAC of the linear layers / per softmax element | " + " | ".join(
            f"{r['linear_instructions_per_mac']} / {r['softmax_instructions_per_element']}" for r in rows.values()) + " |")
    lines += ["", "| target (one run, default English model) | measured | |", "|---|---|---|"]
    if 32 in rows and 32 in dsp:
        ratio = rows[32]["instructions"] / dsp[32]["instructions"]
        lines.append(f"| bertl14-dsp >= 3x fewer instructions than tflm-cmsis-nn at 32 tokens | {ratio:.2f}x | "
                     f"{met(ratio >= 3)} |")
    both = [n for n in rows if n in dsp]
    if both:
        ok = all(dsp[n]["work_buffer_bytes"] <= rows[n]["arena_bytes"] for n in both)
        lines.append("| work buffer no larger than the peer's arena | " + ", ".join(
            f"{dsp[n]['work_buffer_bytes']:,} <= {rows[n]['arena_bytes']:,}" for n in both) + f" B | {met(ok)} |")
    if agree:
        a = agree["agreement_with_float"]
        lines.append(f"| agreement with float no lower than the peer's | {a['bertl14']} vs {a['tflm-cmsis-nn']} | "
                     f"{met(a['bertl14'] >= a['tflm-cmsis-nn'])} |")
    lines += ["", "Reproduce: the peer needs the optional west projects tflite-micro and CMSIS-NN (`west config "
              "manifest.group-filter -- +optional && west update`, then in `modules/lib/tflite-micro` `make -f "
              "tensorflow/lite/micro/tools/make/Makefile third_party_downloads` for its flatbuffers and gemmlowp "
              "headers; or `BERTL14_MODULES_DIR` naming a folder with `lib/tflite-micro` and `lib/CMSIS-NN`) and the "
              "`flatbuffers` package (`pip install -e '.[bench]'`); `bertl14 bench` then measures it (`--no-peer` "
              "skips it; without the modules it says so and goes on). The exported models are kept in the cache "
              "(`~/.cache/bertl14/target/<checkout>/tflm-*/models/model_<n>.tflite`); the host runner is "
              "`west build -b host -d BUILD bench/tflm_cmsis_nn`, then `BUILD/firmware.elf MODEL.tflite IDS.bin "
              "OUT.bin` (int32 ids in, the raw output tensors out)."]
    return lines


def measuring_on_a_board(rep: dict) -> list[str]:
    """How to collect real cycles on a NUCLEO (the ms column is an estimate)."""
    return ["", "## Measuring on a board", "",
            "The ms column is an estimate from instruction counts. On a NUCLEO-H743ZI the intent firmware's answers carry "
            "`cycles=`: DWT->CYCCNT, the core's cycle counter at its 400 MHz (`clock:` in "
            "`boards/st/nucleo_h743zi/board.yml`), around tokenizing, encoding, classifying and tagging one sentence, "
            "flash wait states, caches and multi-cycle instructions included; cycles / 400,000 is the time in ms. A "
            "table from the board:", "",
            "    west build -b nucleo_h743zi -d build/nucleo app && west flash -d build/nucleo",
            "    bertl14 validate --port /dev/ttyACM0 --model build/nucleo/generated/model \\",
            "        --data ../shared/data/ha-intents-tests/en.jsonl --json",
            "",
            "`validate` sends every sentence, checks each answer against the Python reference, and reports "
            "`cycles_unit` (`cpu_cycles` on the NUCLEO; `timer_25mhz` ticks under QEMU), `mean_cycles`, `max_cycles` "
            "and `cycles_by_tokens` (for each token count: the sentences and their mean cycles), the board's own "
            "figures to set against the instruction counts here (a sentence's `tokens=` includes [CLS] and [SEP])."]


def write_report(rep: dict, out: Path) -> None:
    """docs/benchmarks.md and the PNG plots (plots.py: instructions against tokens on log axes, the typed sentence
    marked; each stage's share of the instructions)."""
    from ..train.plots import bench_instructions_png, bench_stages_png
    out.mkdir(parents=True, exist_ok=True)
    clock = rep.get("clock")
    bench_instructions_png({**rep, "cpu_hz": clock["hz"] if clock else None}, out / "bench_instructions.png")
    bench_stages_png(rep, out / "bench_stages.png", list(STAGE_GROUPS))
    lines = ["# Benchmarks", "",
             f"Model `{rep['model']}` ({rep['dims']['layers']} layers, hidden {rep['dims']['hidden']}, "
             f"{rep['dims']['heads_kept']} heads, intermediate {rep['dims']['intermediate']}) on the emulated "
             f"`{rep['board']}` ({rep.get('cpu', 'cortex-m7')}, QEMU `-icount shift={rep['icount_shift']}`; gcc -O2). "
             "Instruction counts are exact and deterministic. " + (
                 f"**The ms column is an estimate from the instruction counts**: one instruction a cycle at "
                 f"{clock['hz'] / 1e6:g} MHz, the clock of the {clock['part']} (the `clock:` of the board's board.yml; "
                 "an emulated board names the real part it stands in for). It is not a measurement: on the part, flash "
                 "wait states, caches and multi-cycle instructions add cycles, dual issue saves some. " if clock else
                 "No ms column: the board's board.yml names no clock. ") +
             "On a NUCLEO-H743ZI the firmware's `cycles=` are real core cycles at 400 MHz (the DWT cycle counter); "
             "*Measuring on a board* below says how to collect them.", "",
             "Regenerate: `bertl14 bench --board " + rep["board"] + " --report docs/` (add `--model M`); this "
             f"page was written by `{rep.get('command')}`."
             + ("" if any(r.get("seq_len") == 512 for r in rep.get("results", [])) else
                " 512 tokens is not in this run (with the portable kernels that length alone is over 2 G "
                "instructions); `--seq-lens 16,32,64,128,512` measures it."), "",
             f"Model commit: `{rep.get('model_commit')}` (the last commit of the model folder when measured)"
             + (f"; {rep['model_note']}" if rep.get("model_note") else "") + ".", "",
             f"Linear weights: {rep.get('weights', 'int16').upper()} (`--weights {rep.get('weights', 'int16')}`, "
             f"`CONFIG_BERTL14_WEIGHTS_{rep.get('weights', 'int16').upper()}`; the rows' `weights` field). INT16 or "
             "INT8, flash against instructions and fidelity: [converter.md](converter.md#int16-or-int8-weights).", ""]
    if rep.get("shape_twin"):
        tw = rep["shape_twin"]
        lines += [f"Lengths beyond the model's {tw['trained_positions']} positions are measured on its **shape twin**: "
                  f"{tw['note']}. The twin is what `bertl14 bench` builds when `--seq-lens` exceeds the positions "
                  "(`--no-twin` skips those lengths instead); its figures at those lengths are instructions and "
                  "memory of the model's shape, not accuracy.", ""]
    if rep.get("float32_naive_skipped"):
        sk = rep["float32_naive_skipped"]
        lines += ["float32 naive is not run at " + ", ".join(f"{n} tokens ({sk['bytes'][str(n)]:,} B of buffers)"
                  for n in sk["seq_lens"]) + f": more than the board's RAM ({sk['ram_limit']:,} B usable).", ""]
    lines += [
             "How it is measured: the test image `tests/target` (the library, the converted model, polled UART) "
             "runs under `qemu-system-arm -M mps2-an500 -icount shift=S`. Every guest instruction advances "
             "virtual time by 2^S ns; the image reads the 25 MHz CMSDK TIMER0 around each timed interval and "
             "converts that interval alone to instructions (40 / 2^S per tick, rounded): with S = 7 a tick is "
             "0.31 instruction, so each interval's count is exact and runs are bit-for-bit repeatable (S = 0 "
             "quantizes each interval to 40). Totals come from an image without stage hooks; the stage "
             "breakdown from one built with `BERTL14_PROFILE` (bertl14_profile.h), the hooks' own measured "
             "cost subtracted per entry. Tokens: [CLS] + words of a real command, repeated + [SEP].", "",
             f"| engine | tokens | instructions | MACs | instr/MAC | ms @{clock['hz'] / 1e6:g} MHz (estimate) | "
             "linear instr/MAC | softmax instr/element | work buffer (TFLM: arena) B | stack B |" if clock else
             "| engine | tokens | instructions | MACs | instr/MAC | ms | linear instr/MAC | softmax instr/element | "
             "work buffer (TFLM: arena) B | stack B |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rep["results"]:
        if "host_us" in r:
            continue
        tokens = f"{r['seq_len']} ({r['sentence']}, tokenizer included)" if r.get("sentence") else r["seq_len"]
        lines.append(f"| {r['engine']} | {tokens} | {r['instructions']:,} | {r['macs']:,} | "
                     f"{r['instructions_per_mac']} | {r.get('ms_estimate', '')} | {r.get('linear_instructions_per_mac', '')} | "
                     f"{r.get('softmax_instructions_per_element', '')} | {r['work_buffer_bytes']:,} | {r['stack_bytes']:,} |")
    lines += ["", "## Stages (instructions; profile hooks' own cost subtracted)", "",
              "| engine | tokens | " + " | ".join(STAGE_GROUPS) + " |", "|---|---|" + "---|" * len(STAGE_GROUPS)]
    for r in rep["results"]:
        if r["stages"]:
            lines.append(f"| {r['engine']} | {r['seq_len']} | " + " | ".join(f"{r['stages'][s]:,}" for s in STAGE_GROUPS) + " |")
    fine_rows = [r for r in rep["results"] if r["engine"] == "bertl14-dsp" and r.get("stages_detail")]
    if fine_rows:
        lines += ["", "## Where the DSP kernels' instructions go (share of the sentence; per MAC / per element)", "",
                  "| tokens | linear | GELU | quantize | LayerNorm | scores | softmax | context | embeddings |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in fine_rows:
            fd, m, tot = r["stages_detail"], macs(rep["dims"], r["seq_len"]), max(1, sum(r["stages_detail"].values()))
            lin = sum(fd.get(s, 0) for s in LINEAR_STAGES)
            pct = lambda v: f"{100 * v / tot:.0f} %"
            lines.append(f"| {r['seq_len']} | {pct(lin)} ({r['linear_instructions_per_mac']}/MAC) | {pct(fd.get('gelu', 0))} | "
                         f"{pct(fd.get('quant', 0))} | {pct(fd.get('layernorm', 0))} | {pct(fd.get('scores', 0))} "
                         f"({fd.get('scores', 0) / max(1, m['scores']):.2f}/MAC) | {pct(fd.get('softmax', 0))} "
                         f"({r['softmax_instructions_per_element']}/element) | {pct(fd.get('context', 0))} "
                         f"({fd.get('context', 0) / max(1, m['context']):.2f}/MAC) | {pct(fd.get('embed', 0))} |")
    lines += ["", "`quantize` is the INT8 row quantization of matmul inputs (counted apart from attention and FFN "
              "here); the tokenizer is measured on a typed sentence: " +
              "; ".join(f"{e}: {v['tokenize_example']['instructions']:,} instructions for "
                        f"{v['tokenize_example']['tokens']} tokens" for e, v in rep["engines"].items()) + ".", "",
              "## Kernels (micro-benchmarks; bertl14: blocks of 4 tokens as the encoder calls them; CMSIS-NN: "
              "called directly on the model's shapes, 32 tokens x inputs x outputs, softmax rows of 32 and 128)", "",
              "| engine | kernel | figure |", "|---|---|---|"]
    for e, ks in rep["kernels"].items():
        for n, v in ks.items():
            (unit, val), = v.items()
            lines.append(f"| {e} | {n} | {val} {unit.replace('_', ' ')} |")
    dsp = {r["seq_len"]: r for r in rep["results"] if r["engine"] == "bertl14-dsp" and not r.get("sentence")}
    med = next((r for r in rep["results"] if r["engine"] == "bertl14-dsp" and r.get("sentence")), None)
    kd = rep["kernels"].get("bertl14-dsp", {})
    lin = [v["instructions_per_mac"] for k, v in kd.items() if k.startswith("linear")]
    smx = [v["instructions_per_element"] for k, v in kd.items() if k.startswith("softmax")]
    rat = rep.get("ratios", [])
    def met(ok: bool) -> str:
        return "met" if ok else "**missed**"

    lines += ["", "## Targets against this run (DSP kernels)", "",
              "| target | measured | |", "|---|---|---|"]
    for n in (32, 128):
        if n in dsp:
            v = dsp[n]["instructions_per_mac"]
            lines.append(f"| <= 1.3 instructions per MAC end to end at {n} tokens | {v} | {met(v <= 1.3)} |")
    if med:
        lines.append(f"| median public English sentence <= 12 M instructions | {med['instructions']:,} "
                     f"({med['seq_len']} tokens) | {met(med['instructions'] <= 12e6)} |")
    if 32 in dsp:
        lines.append(f"| 32 tokens <= 48 M instructions | {dsp[32]['instructions']:,} | {met(dsp[32]['instructions'] <= 48e6)} |")
    if lin:
        sent = [r["linear_instructions_per_mac"] for r in dsp.values()]
        lines.append(f"| linear kernel <= 1.0 instructions per MAC | {min(lin)} .. {max(lin)} (micro-benchmarks); "
                     f"{min(sent)} .. {max(sent)} in the sentences | {met(max(lin + sent) <= 1.0)} |")
    if smx:
        sent = [r["softmax_instructions_per_element"] for r in dsp.values()]
        lines.append(f"| softmax <= 20 instructions per element | {min(smx)} .. {max(smx)} (micro-benchmarks); "
                     f"{min(sent)} .. {max(sent)} in the sentences | {met(max(smx + sent) <= 20)} |")
    if rat:
        p = [r["portable_over_dsp_instructions"] for r in rat if "portable_over_dsp_instructions" in r]
        f = [r["float32_over_dsp_instructions"] for r in rat if "float32_over_dsp_instructions" in r]
        fr = [r["float32_over_dsp_ram"] for r in rat if "float32_over_dsp_ram" in r]
        if p:
            lines.append(f"| DSP >= 2x fewer instructions than portable | {', '.join(map(str, p))} | {met(min(p) >= 2)} |")
        if f:
            lines.append(f"| DSP >= 4x fewer instructions than float32, less RAM | {', '.join(map(str, f))} x "
                         f"instructions; {', '.join(map(str, fr))} x RAM | {met(min(f) >= 4 and min(fr) > 1)} |")
    if 512 in dsp:
        wb = dsp[512]["work_buffer_bytes"]
        lines.append(f"| work buffer <= 192 KB at 512 tokens | {wb:,} B ({wb / 1024:.1f} KB) | {met(wb <= 192 * 1024)} |")
        lines.append(f"| instructions at 512 tokens (reported) | {dsp[512]['instructions']:,} "
                     f"({dsp[512]['instructions_per_mac']} per MAC) | |")
    lin_runs = sorted((n, r["linear_instructions_per_mac"]) for n, r in dsp.items() if r.get("linear_instructions_per_mac"))
    lin_text = f"{lin_runs[0][1]} a MAC at {lin_runs[0][0]} tokens" if lin_runs else "see the kernel rows"
    int8_run = rep.get("weights") == "int8"
    lines += ["", "How the DSP kernels get there, and what is left (see the share table above):", "",
              "- linear (about 60 % of a sentence): `block4_channels`, one assembly loop over the output channels of a "
              "block of four tokens. INT16 weights: two channels a pass as 2 x 2 tiles (two weight LDRD, two activation "
              "LDRD, eight SMLAD: 12 instructions for 16 MACs), the requantized stores in registers (SMMLA, shift, QADD, "
              "SSAT)" + ("" if int8_run else f": {lin_text}") + ". INT8 weights (`--weights int8`) read each weight row "
              "once a block, one channel against the four tokens, and spend what the INT16 tiles' second read costs on "
              "widening (two SXTB16 for four weights; three chunks' weights one LDMIA): no more instructions a MAC than "
              "INT16" + (f" ({lin_text})" if int8_run else "") + " (docs/converter.md).",
              "- attention: the scores and the context are block matmuls over int16 operands in blocks of four rows "
              "(`bertl14_block4_dot.h`, 12 instructions for 16 MACs), the scores kernel handing each row's maximum to the "
              "softmax; the keys and values are held as int16, which costs work buffer (2 x n x heads x head size bytes).",
              "- softmax: numerics v1.2's attention exp (one SMMLS for (max - x) log2(e), one table entry without "
              "interpolation, one shift) with the 32-bit sum is 8.5 instructions an element, the normalization (SMMULR, "
              "USAT) 4, plus one 32-bit division a row. The classifier's score keeps v1.1's interpolated exp.",
              "- GELU (about 50 instructions an element with its row quantization), row quantization and residual + "
              "LayerNorm (about 40 an element) are a fifth of a short sentence: the largest share left outside the "
              "matmuls.",
              "- float32 naive runs at about 5.5 instructions per MAC (the M7's FPU does one multiply-accumulate an "
              "instruction), so >= 4x needs the DSP build at <= 1.4 instructions per MAC end to end."]
    lines += peer_section(rep, met)
    lines += ["", "## Baselines (same model, same emulated M7)", "",
              "| tokens | portable / DSP instructions | float32 naive / DSP instructions | float32 naive / DSP RAM |",
              "|---|---|---|---|"]
    for r in rep.get("ratios", []):
        lines.append(f"| {r['seq_len']} | {r.get('portable_over_dsp_instructions', '')} | "
                     f"{r.get('float32_over_dsp_instructions', '')} | {r.get('float32_over_dsp_ram', '')} |")
    has_float = any(r["engine"] == "float32-naive" for r in rep["results"])
    lines += ["", ("float32 naive: `bench/float32_naive` (every layer its own activation buffers, the full attention "
              "matrix, libm expf/tanhf/sqrtf; its logits match the numpy float engine within the printed "
              "0.001 rounding); its image is built once for the longest length, and its RAM at n tokens is what a build for n "
              "tokens takes (its static buffers sized for n, `float_naive_bytes` in bench.py, + the image's other data + stack). "
              if has_float else "float32 naive: not measured in this run (`--no-baseline`). ") +
              "bertl14: the work buffer at that length + stack. Counts above 2^32 timer ticks (1.34 G instructions at "
              "shift 7) are corrected for the 32-bit TIMER0 wrapping, by the profiled stages (`timer_wraps` in the JSON)."]
    host = [r for r in rep["results"] if "host_us" in r]
    if host:
        lens = sorted({r["seq_len"] for r in host})
        names = sorted({r["engine"] for r in host})
        by = {(r["engine"], r["seq_len"]): r["host_us"] for r in host}
        lines += ["", "## Host, one thread (microseconds per sentence, best of 50)", "",
                  "| engine | " + " | ".join(f"{n} tokens" for n in lens) + " |", "|---|" + "---|" * len(lens)]
        for e in names:
            lines.append(f"| {e} | " + " | ".join(str(by.get((e, n), "")) for n in lens) + " |")
        lines += ["", (rep["host_note"] + ". " if rep.get("host_note") else "") + "host-bertl14-c: the library's portable kernels built with the host cc -O2, encode + classify "
                  "called through ctypes (its overhead included); ONNX Runtime: the Hugging Face model exported "
                  "with torch.onnx (opset 17), fp32 and `quantize_dynamic` INT8 weights, intra/inter-op threads 1."]
    fb = rep["flash_bytes"]
    lines += ["", "## Flash", "", f"- weights: {fb['weights']:,} B; vocabulary section: {fb['vocabulary']:,} B" if fb.get("weights") else "",
              "- library code (text + data of libbertl14.a): " + ", ".join(f"{e} {v:,} B" for e, v in fb["code"].items()
                                                                           if e != "tflm-cmsis-nn"),
              *(["- tflm-cmsis-nn: the .tflite models " + ", ".join(
                  f"{r['model_bytes']:,} B ({r['seq_len']} tokens)" for r in rep["results"]
                  if r["engine"] == "tflm-cmsis-nn") + f"; TFLM + CMSIS-NN code {fb['code']['tflm-cmsis-nn']:,} B "
                 "(text + rodata + data of the interpreter, kernels and GeluApprox objects the image links)"]
                if "tflm-cmsis-nn" in fb["code"] else []),
              *measuring_on_a_board(rep),
              "", "![instructions](bench_instructions.png)", "", "![stages](bench_stages.png)", ""]
    (out / "benchmarks.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def register(subparsers) -> None:
    p = subparsers.add_parser("bench", help="instructions, memory and flash on an emulated board",
                              description=__doc__.split("\n\n")[0])
    from .. import ui
    from .qemu_target import qemu_boards
    p.add_argument("--board", default="mps2_an500", choices=qemu_boards(),   # the boards whose board.yml names a QEMU machine
                   help="the emulated board to measure on (default mps2_an500, the Cortex-M7)")
    p.add_argument("--model", default="models/intent-en", help="model folder (default: models/intent-en)")
    ui.int_list_argument(p, "--seq-lens", [16, 32, 64, 128, 512], 2, 512,
                         "token counts to measure ([CLS] and [SEP] included; beyond the model's positions its shape "
                         "twin is measured, see --no-twin)")
    from .qemu_target import KERNEL_CONFIG
    p.add_argument("--kernels", choices=[*KERNEL_CONFIG, "both"], default="both",
                   help="the library's kernel sets to measure: the portable C ones, the Cortex-M DSP ones, the "
                        "Helium ones (mve), or both: every set the board runs (board.yml `kernels:`; default both)")
    p.add_argument("--weights", choices=["int16", "int8"], default=None,
                   help="linear weight precision of the library's rows (CONFIG_BERTL14_WEIGHTS_*): a Hugging Face "
                        "--model is converted with it (default: int16, or a converted folder's own)")
    p.add_argument("--icount-shift", type=ui.int_range(0, 10), default=None,
                   help="QEMU -icount shift (default the board's: 7 on the MPS2 boards, exact counts there, 0 also "
                        "works; 0 on qemu_riscv32, exact at every shift)")
    p.add_argument("--no-baseline", dest="baseline", action="store_false",
                   help="skip the float32 naive baseline (bench/float32_naive)")
    p.add_argument("--no-peer", dest="peer", action="store_false",
                   help="skip the tflm-cmsis-nn engine (TensorFlow Lite Micro + CMSIS-NN running the model's int8 "
                        ".tflite export; it needs the optional west projects tflite-micro and CMSIS-NN and is "
                        "skipped with a note without them)")
    p.add_argument("--agreement-data", metavar="FILE.jsonl",
                   help="sentences on which the peer's and the library's answers are compared with the float model's "
                        "(default: the public English test, $BERTL14_TEST_DATA/en.jsonl or "
                        "../shared/data/ha-intents-tests/en.jsonl, when present)")
    p.add_argument("--no-host", dest="host", action="store_false",
                   help="skip the host baselines (bertl14 C vs ONNX Runtime fp32 / dynamic INT8, one thread)")
    p.add_argument("--no-twin", dest="twin", action="store_false",
                   help="skip lengths beyond the model's positions instead of measuring its shape twin "
                        f"(position table extended to {TWIN_POSITIONS} rows)")
    p.add_argument("--report", metavar="DIR", help="also write DIR/benchmarks.md and PNG plots")
    ui.add_output_options(p, 'print the figures as one JSON object ({"board", "model", "results": [{"engine", '
                             '"seq_len", "instructions", "macs", "ram_bytes", ...}], "kernels", ...}) instead of '
                             'the table')
    p.set_defaults(func=run)
