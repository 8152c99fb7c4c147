"""A model as an int8 `.tflite` for TensorFlow Lite Micro: what a firmware engineer would deploy with TFLM and
CMSIS-NN, built without TensorFlow (the `tflm-cmsis-nn` engine of `bertl14 bench`).

Full-integer post-training quantization, as TensorFlow Lite's converter does it with a representative dataset:
every activation an int8 tensor with its own scale and zero point, from the minimum and maximum it takes on the
representative sentences (the model's calibration.jsonl, the sentences `bertl14 convert` calibrates on);
fully connected weights int8 per output channel (symmetric), their biases int32 at input scale x weight scale;
other constants (embedding tables, LayerNorm's gamma and beta) int8 per tensor. Softmax and tanh outputs take
the fixed scales TFLite requires (1/256 zero point -128; 1/128 zero point 0).

The graph, for one sequence of n tokens (TFLM tensors have fixed shapes: one model per length, no padding), its
activations [1, n, features] as TensorFlow exports a Keras model (FULLY_CONNECTED with keep_num_dims, which TFLM's
CMSIS-NN kernel runs as a batched 1x1 convolution):

    ids int32 [1, n] -> GATHER word table -> ADD (position + token type 0 rows, one folded constant) -> LayerNorm
    per layer: FULLY_CONNECTED q (1/sqrt(d) folded into its weights), k, v -> RESHAPE + TRANSPOSE to
               [1, heads, n, d] -> BATCH_MATMUL q k^T -> SOFTMAX -> BATCH_MATMUL with v -> TRANSPOSE + RESHAPE
               -> FULLY_CONNECTED -> ADD residual -> LayerNorm -> FULLY_CONNECTED -> GeluApprox
               -> FULLY_CONNECTED -> ADD residual -> LayerNorm
    head:      GATHER row 0 -> FULLY_CONNECTED -> TANH -> FULLY_CONNECTED -> logits int8 [1, 1, C]
    tagger:    FULLY_CONNECTED on every row -> tag logits int8 [1, n, T]     (models with a token classifier)

LayerNorm is decomposed into the builtins TFLM runs in int8, as TensorFlow lowers it:
MEAN, SUB, MUL (square), MEAN, RSQRT, MUL, MUL gamma, ADD beta (the 1e-12 epsilon is below int8's resolution and
left out). GELU is the `GeluApprox` custom operator of integrations/tflm (int8: a 256-entry table).

`Export(fm, calibration_ids)` calibrates once; `.tflite(n)` writes the model for n tokens; `.reference(ids)` runs
the same int8 graph in numpy, every tensor rounded to its int8 grid (the Python reference of what TFLM computes,
equal to it up to the kernels' fixed-point rounding); `.run(ids, quant=False)` is the float graph.

The flatbuffer is written with the `flatbuffers` package and the TFLite schema's Python bindings that the pinned
tflite-micro sources ship (tensorflow/lite/python/schema_py_generated.py): the schema of the runtime that runs it.
"""
from __future__ import annotations

import importlib.util
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import REPO_ROOT
from ..errors import UserError

SCHEMA_PY = "tensorflow/lite/python/schema_py_generated.py"
GELU_OP = "GeluApprox"
SOFTMAX_OUT = (1.0 / 256.0, -128)       # TFLite's fixed int8 softmax output
TANH_OUT = (1.0 / 128.0, 0)             # TFLite's fixed int8 tanh output
GET_SOURCES = ("west config manifest.group-filter -- +optional && west update, or set BERTL14_MODULES_DIR to "
               "a folder holding lib/tflite-micro and lib/CMSIS-NN")


def modules_root() -> Path:
    """$BERTL14_MODULES_DIR, else <west topdir>/modules (the folder beside this repository)."""
    env = os.environ.get("BERTL14_MODULES_DIR")
    if env:
        p = Path(env).expanduser().resolve()
        return p / "modules" if (p / "modules").is_dir() else p
    return REPO_ROOT.parent / "modules"


def tflm_dir() -> Path:
    return modules_root() / "lib" / "tflite-micro"


def missing_reason() -> str | None:
    """None when the TFLM and CMSIS-NN sources (and the flatbuffers package) are there, else what to do."""
    root = modules_root()
    for rel, probe in (("lib/tflite-micro", "tensorflow/lite/micro/micro_interpreter.h"),
                       ("lib/tflite-micro", "tensorflow/lite/micro/tools/make/downloads/flatbuffers/include"),
                       ("lib/CMSIS-NN", "Include/arm_nnfunctions.h")):
        if not (root / rel / probe).exists():
            return f"{root / rel / probe} missing: {GET_SOURCES}"
    if importlib.util.find_spec("flatbuffers") is None:
        return "the flatbuffers package is missing: pip install -e '.[bench]'"
    return None


_schema = None


def schema():
    """The TFLite schema's Python bindings (object API) from the pinned tflite-micro sources."""
    global _schema
    if _schema is None:
        reason = missing_reason()
        if reason:
            raise UserError(f"cannot write a .tflite: {reason}")
        spec = importlib.util.spec_from_file_location("tflite_schema_py_generated", tflm_dir() / SCHEMA_PY)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _schema = module
    return _schema


# ---- the graph --------------------------------------------------------------------------------------------------

@dataclass
class Tensor:
    name: str
    shape: tuple
    dtype: str = "int8"                 # int8 | int32
    value: np.ndarray | None = None     # constants: float values (int8 tensors) or integers (int32 operands)
    role: str = "act"                   # act | input | const | weight (per-channel) | bias
    like: str | None = None             # an activation that takes this tensor's quantization (pass-through ops)
    fixed: tuple | None = None          # (scale, zero point) TFLite requires for this output
    bias_of: tuple | None = None        # (input tensor, weight tensor) of a bias


@dataclass
class Op:
    code: str                           # BuiltinOperator name, or GELU_OP
    inputs: list[str]
    outputs: list[str]
    options: dict = field(default_factory=dict)


class Graph:
    def __init__(self) -> None:
        self.tensors: dict[str, Tensor] = {}
        self.ops: list[Op] = []
        self.inputs: list[str] = []
        self.outputs: list[str] = []

    def t(self, name, shape, **kw) -> str:
        self.tensors[name] = Tensor(name, tuple(int(d) for d in shape), **kw)
        return name

    def const(self, name, value, role="const") -> str:
        value = np.asarray(value)
        return self.t(name, value.shape, value=value, role=role,
                      dtype="int32" if value.dtype.kind in "iu" else "int8")

    def op(self, code, inputs, out, shape, **options) -> str:
        kw = {k: options.pop(k) for k in ("like", "fixed") if k in options}
        self.t(out, shape, **kw)
        self.ops.append(Op(code, list(inputs), [out], options))
        return out

    def fc(self, name, x, w, b) -> str:
        """FULLY_CONNECTED over the last axis, keeping the others: w [out, in] (torch layout = TFLite's), b [out]."""
        wt = self.const(f"{name}.w", np.asarray(w, np.float64), role="weight")
        bt = self.t(f"{name}.b", (len(b),), dtype="int32", value=np.asarray(b, np.float64), role="bias",
                    bias_of=(x, wt))
        return self.op("FULLY_CONNECTED", [x, wt, bt], name, self.tensors[x].shape[:-1] + (len(b),))

    def layer_norm(self, name, x, g, b) -> str:
        shape = self.tensors[x].shape
        row = shape[:-1] + (1,)
        ax = self.const(f"{name}.axis", np.array([len(shape) - 1], np.int32))
        mean = self.op("MEAN", [x, ax], f"{name}.mean", row)
        d = self.op("SUB", [x, mean], f"{name}.d", shape)
        sq = self.op("MUL", [d, d], f"{name}.sq", shape)
        var = self.op("MEAN", [sq, ax], f"{name}.var", row)
        rstd = self.op("RSQRT", [var], f"{name}.rstd", row)
        y = self.op("MUL", [d, rstd], f"{name}.norm", shape)
        y = self.op("MUL", [y, self.const(f"{name}.gamma", np.asarray(g, np.float64))], f"{name}.scaled", shape)
        return self.op("ADD", [y, self.const(f"{name}.beta", np.asarray(b, np.float64))], name, shape)


def build_graph(fm, n: int) -> Graph:
    """The int8 graph of the float model `fm` (floatmodel.FloatModel) for n tokens (names do not depend on n)."""
    if not 1 <= n <= fm.max_position:
        raise UserError(f"a .tflite for {n} tokens: the model has {fm.max_position} positions")
    g = Graph()
    H, d = fm.hidden, fm.head_dim
    f64 = lambda a: np.asarray(a, np.float64)  # noqa: E731
    ids = g.t("ids", (1, n), dtype="int32", role="input")
    g.inputs = [ids]
    word = g.op("GATHER", [g.const("word_table", f64(fm.word_emb)), ids], "word", (1, n, H), like="word_table",
                axis=0)
    pos = g.const("position_type", (f64(fm.pos_emb[:n]) + f64(fm.type_emb[0]))[None])
    h = g.layer_norm("emb_ln", g.op("ADD", [word, pos], "emb", (1, n, H)), fm.emb_ln_g, fm.emb_ln_b)
    for i, L in enumerate(fm.layers):
        p = f"l{i}."
        heads = len(L.heads_kept) if L.heads_kept else fm.num_heads
        A = heads * d
        s = 1.0 / math.sqrt(d)
        q = g.fc(p + "q", h, f64(L.wq) * s, f64(L.bq) * s)
        k = g.fc(p + "k", h, L.wk, L.bk)
        v = g.fc(p + "v", h, L.wv, L.bv)
        split = g.const(p + "split_shape", np.array([1, n, heads, d], np.int32))
        perm = g.const(p + "perm", np.array([0, 2, 1, 3], np.int32))
        qkv = []
        for name in (q, k, v):
            r = g.op("RESHAPE", [name, split], name + ".heads", (1, n, heads, d), like=name,
                     new_shape=[1, n, heads, d])
            qkv.append(g.op("TRANSPOSE", [r, perm], name + ".t", (1, heads, n, d), like=name))
        sc = g.op("BATCH_MATMUL", [qkv[0], qkv[1]], p + "scores", (1, heads, n, n), adj_y=True)
        pr = g.op("SOFTMAX", [sc], p + "probs", (1, heads, n, n), fixed=SOFTMAX_OUT, beta=1.0)
        cx = g.op("BATCH_MATMUL", [pr, qkv[2]], p + "ctx.t", (1, heads, n, d), adj_y=False)
        cx = g.op("TRANSPOSE", [cx, perm], p + "ctx.heads", (1, n, heads, d), like=p + "ctx.t")
        cx = g.op("RESHAPE", [cx, g.const(p + "merge_shape", np.array([1, n, A], np.int32))], p + "ctx", (1, n, A),
                  like=p + "ctx.t", new_shape=[1, n, A])
        r1 = g.op("ADD", [g.fc(p + "attn_out", cx, L.wo, L.bo), h], p + "res1", (1, n, H))
        h1 = g.layer_norm(p + "ln1", r1, L.ln1_g, L.ln1_b)
        up = g.op(GELU_OP, [g.fc(p + "up", h1, L.wi, L.bi)], p + "gelu", (1, n, fm.intermediate))
        r2 = g.op("ADD", [g.fc(p + "down", up, L.wo2, L.bo2), h1], p + "res2", (1, n, H))
        h = g.layer_norm(p + "ln2", r2, L.ln2_g, L.ln2_b)
    if fm.pooler_w is not None and fm.cls_w is not None:
        cls = g.op("GATHER", [h, g.const("cls_index", np.array([0], np.int32))], "cls", (1, 1, H), like=h, axis=1)
        pooled = g.op("TANH", [g.fc("pooler", cls, fm.pooler_w, fm.pooler_b)], "pooled", (1, 1, H), fixed=TANH_OUT)
        g.outputs.append(g.fc("logits", pooled, fm.cls_w, fm.cls_b))
    if fm.tag_w is not None:
        g.outputs.append(g.fc("tag_logits", h, fm.tag_w, fm.tag_b))
    if not g.outputs:
        g.outputs.append(h)
    return g


# ---- quantization -----------------------------------------------------------------------------------------------

def affine(lo: float, hi: float) -> tuple[float, int]:
    """int8 scale and zero point of the range [lo, hi] (0 included), as TFLite's calibrator picks them."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if hi - lo < 1e-12:
        return 1.0, 0
    scale = (hi - lo) / 255.0
    return scale, int(np.clip(round(-128 - lo / scale), -128, 127))


def per_channel(w: np.ndarray) -> np.ndarray:
    """Symmetric int8 scales of each output channel (row) of w."""
    m = np.max(np.abs(w), axis=tuple(range(1, w.ndim)))
    return np.where(m > 0, m / 127.0, 1.0)


def fake(x: np.ndarray, scale, zero_point) -> np.ndarray:
    """x rounded to the int8 grid of (scale, zero point), back in real units."""
    return (np.clip(np.round(x / scale) + zero_point, -128, 127) - zero_point) * scale


def quantize(x: np.ndarray, scale, zero_point) -> np.ndarray:
    return np.clip(np.round(x / scale) + zero_point, -128, 127).astype(np.int8)


# ---- numpy execution (float graph, and the int8 graph on its grids) ---------------------------------------------

def _gelu(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _eval(op: Op, a: list[np.ndarray]) -> np.ndarray:
    c = op.code
    if c == "GATHER":
        return np.take(a[0], a[1].astype(np.int64), axis=op.options["axis"])
    if c == "ADD":
        return a[0] + a[1]
    if c == "SUB":
        return a[0] - a[1]
    if c == "MUL":
        return a[0] * a[1]
    if c == "MEAN":
        return a[0].mean(axis=tuple(int(x) for x in a[1]), keepdims=True)
    if c == "RSQRT":
        return 1.0 / np.sqrt(np.maximum(a[0], 1e-30))
    if c == "FULLY_CONNECTED":
        return a[0] @ a[1].T + a[2]
    if c == "RESHAPE":
        return a[0].reshape(op.options["new_shape"])
    if c == "TRANSPOSE":
        return a[0].transpose([int(x) for x in a[1]])
    if c == "BATCH_MATMUL":
        return a[0] @ (np.swapaxes(a[1], -1, -2) if op.options["adj_y"] else a[1])
    if c == "SOFTMAX":
        return _softmax(a[0] * op.options["beta"])
    if c == "TANH":
        return np.tanh(a[0])
    if c == GELU_OP:
        return _gelu(a[0])
    raise AssertionError(c)


class Export:
    """A float model calibrated for int8 export: tensor ranges from the calibration sentences, once."""

    def __init__(self, fm, calibration_ids: list[list[int]]):
        if not calibration_ids:
            raise UserError("no calibration sentences for the int8 export")
        self.fm = fm
        self.ranges: dict[str, list[float]] = {}
        self._graphs: dict[int, Graph] = {}
        for ids in calibration_ids:
            ids = list(ids)[: fm.max_position]
            for name, v in self.run(ids, quant=False, keep=True).items():
                r = self.ranges.setdefault(name, [0.0, 0.0])
                r[0], r[1] = min(r[0], float(v.min())), max(r[1], float(v.max()))
        self.params: dict[str, tuple[float, int]] = {}
        g = self.graph(fm.max_position)         # the constants of every length (the position rows)
        for t in g.tensors.values():            # pass-through ops last: they copy what they follow
            if t.role == "act" and t.like is None:
                self.params[t.name] = t.fixed or affine(*self.ranges[t.name])
            elif t.role == "const" and t.dtype == "int8":
                self.params[t.name] = affine(t.value.min(), t.value.max())
        for t in g.tensors.values():
            if t.like is not None:
                self.params[t.name] = self.params[t.like]

    def graph(self, n: int) -> Graph:
        if n not in self._graphs:
            self._graphs[n] = build_graph(self.fm, n)
        return self._graphs[n]

    # -- what each tensor holds in the int8 graph
    def weight_scales(self, t: Tensor) -> np.ndarray:
        return per_channel(t.value)

    def bias_scales(self, g: Graph, t: Tensor) -> np.ndarray:
        x, w = t.bias_of
        return self.params[x][0] * self.weight_scales(g.tensors[w])

    def const_value(self, g: Graph, t: Tensor, quant: bool) -> np.ndarray:
        """A constant as the int8 graph sees it (quant) or as the float model has it."""
        if not quant or t.dtype == "int32" and t.role not in ("bias",):
            return t.value
        if t.role == "weight":
            s = self.weight_scales(t).reshape(-1, *([1] * (t.value.ndim - 1)))
            return np.clip(np.round(t.value / s), -127, 127) * s
        if t.role == "bias":
            s = self.bias_scales(g, t)
            return np.round(t.value / s) * s
        return fake(t.value, *self.params[t.name])

    def run(self, ids, quant: bool = True, keep: bool = False) -> dict[str, np.ndarray]:
        """The graph on one sentence: {output name: value} (keep: every activation), real units; quant rounds
        every tensor to its int8 grid (the int8 graph), else the float graph."""
        ids = np.asarray(list(ids), np.int64)[None]
        g = self.graph(ids.shape[1])
        env: dict[str, np.ndarray] = {"ids": ids}
        for t in g.tensors.values():
            if t.value is not None:
                env[t.name] = self.const_value(g, t, quant)
        for op in g.ops:
            y = _eval(op, [env[i] for i in op.inputs])
            out = op.outputs[0]
            if quant:
                y = fake(y, *self.params[out])
            env[out] = y
        if keep:
            return {k: v for k, v in env.items() if g.tensors.get(k) is not None and g.tensors[k].role == "act"}
        return {k: env[k] for k in g.outputs}

    def reference(self, ids) -> dict[str, np.ndarray]:
        """The int8 graph's outputs as int8 codes (what TFLM's output tensors hold, up to kernel rounding)."""
        return {k: quantize(v, *self.params[k]) for k, v in self.run(ids, quant=True).items()}

    def split(self, n: int, raw: np.ndarray) -> dict[str, np.ndarray]:
        """The bytes of every tensor of the n-token graph, in graph order (the host runner's --all output), as
        {name: int8 or int32 array of the tensor's shape}."""
        raw = np.ascontiguousarray(raw).view(np.uint8)
        out, at = {}, 0
        for t in self.graph(n).tensors.values():
            dt = np.int32 if t.dtype == "int32" else np.int8
            size = int(np.prod(t.shape)) * np.dtype(dt).itemsize
            out[t.name] = raw[at:at + size].view(dt).reshape(t.shape)
            at += size
        if at != raw.size:
            raise UserError(f"{raw.size} bytes of tensors, the {n}-token graph has {at}")
        return out

    def replay(self, n: int, codes: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Each operator of the n-token graph on its inputs as TFLM computed them (`codes`, from split): the int8
        codes the Python graph gives for its output, {output name: codes}. Checks each operator on its own,
        without the rounding differences of the operators before it."""
        g = self.graph(n)
        out = {}
        for op in g.ops:
            args = []
            for name in op.inputs:
                t = g.tensors[name]
                if t.value is not None:
                    args.append(self.const_value(g, t, quant=True))
                elif t.dtype == "int32":
                    args.append(codes[name].astype(np.int64))
                else:
                    sc, zp = self.params[name]
                    args.append((codes[name].astype(np.float64) - zp) * sc)
            y = _eval(op, args)
            out[op.outputs[0]] = quantize(y, *self.params[op.outputs[0]])
        return out

    def output_params(self, n: int) -> dict[str, tuple[float, int]]:
        return {k: self.params[k] for k in self.graph(n).outputs}

    # -- the flatbuffer
    def tflite(self, n: int, description: str = "bertl14 int8 export") -> bytes:
        """The .tflite flatbuffer of the int8 graph for n tokens."""
        import flatbuffers
        s = schema()
        g = self.graph(n)
        model = s.ModelT()
        model.version = 3
        model.description = description
        model.buffers = [s.BufferT()]
        codes: dict[str, int] = {}
        opcodes = []
        tensors, index = [], {}
        for t in g.tensors.values():
            ft = s.TensorT()
            ft.name = t.name
            ft.shape = list(t.shape)
            ft.type = s.TensorType.INT32 if t.dtype == "int32" else s.TensorType.INT8
            ft.buffer = 0
            q = None
            if t.role == "weight":
                scales = self.weight_scales(t)
                data = np.clip(np.round(t.value / scales.reshape(-1, *([1] * (t.value.ndim - 1)))), -127, 127)
                data = data.astype(np.int8)
                q = (scales, np.zeros(len(scales), np.int64), 0)
            elif t.role == "bias":
                scales = self.bias_scales(g, t)
                data = np.round(t.value / scales).astype(np.int64)
                if np.abs(data).max(initial=0) >= 2 ** 31:
                    raise UserError(f"{t.name}: a bias does not fit int32 at its scale")
                data = data.astype(np.int32)
                q = (scales, np.zeros(len(scales), np.int64), 0)
            elif t.value is not None and t.dtype == "int32":
                data = np.asarray(t.value, np.int32)
            elif t.value is not None:
                sc, zp = self.params[t.name]
                data = quantize(t.value, sc, zp)
                q = ([sc], [zp], 0)
            else:
                data = None
                if t.dtype == "int8":
                    sc, zp = self.params[t.name]
                    q = ([sc], [zp], 0)
            if data is not None:
                buf = s.BufferT()
                buf.data = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
                model.buffers.append(buf)
                ft.buffer = len(model.buffers) - 1
            if q is not None:
                qp = s.QuantizationParametersT()
                qp.scale = [float(x) for x in q[0]]
                qp.zeroPoint = [int(x) for x in q[1]]
                qp.quantizedDimension = q[2]
                ft.quantization = qp
            index[t.name] = len(tensors)
            tensors.append(ft)
        ops = []
        for op in g.ops:
            if op.code not in codes:
                oc = s.OperatorCodeT()
                if op.code == GELU_OP:
                    oc.builtinCode = oc.deprecatedBuiltinCode = s.BuiltinOperator.CUSTOM
                    oc.customCode = GELU_OP
                else:
                    code = getattr(s.BuiltinOperator, op.code)
                    oc.builtinCode = code
                    oc.deprecatedBuiltinCode = min(code, s.BuiltinOperator.PLACEHOLDER_FOR_GREATER_OP_CODES)
                oc.version = 1
                codes[op.code] = len(opcodes)
                opcodes.append(oc)
            fo = s.OperatorT()
            fo.opcodeIndex = codes[op.code]
            fo.inputs = [index[i] for i in op.inputs]
            fo.outputs = [index[o] for o in op.outputs]
            self._options(s, op, fo)
            ops.append(fo)
        sg = s.SubGraphT()
        sg.name = "main"
        sg.tensors = tensors
        sg.inputs = [index[i] for i in g.inputs]
        sg.outputs = [index[o] for o in g.outputs]
        sg.operators = ops
        model.subgraphs = [sg]
        model.operatorCodes = opcodes
        b = flatbuffers.Builder(1 << 20)
        b.Finish(model.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())

    @staticmethod
    def _options(s, op: Op, fo) -> None:
        o, kind = None, None
        c = op.code
        if c == "FULLY_CONNECTED":       # [1, n, in] -> [1, n, out], as TensorFlow exports a Dense layer
            o, kind = s.FullyConnectedOptionsT(), s.BuiltinOptions.FullyConnectedOptions
            o.keepNumDims = True
        elif c == "ADD":
            o, kind = s.AddOptionsT(), s.BuiltinOptions.AddOptions
        elif c == "SUB":
            o, kind = s.SubOptionsT(), s.BuiltinOptions.SubOptions
        elif c == "MUL":
            o, kind = s.MulOptionsT(), s.BuiltinOptions.MulOptions
        elif c == "MEAN":
            o, kind = s.ReducerOptionsT(), s.BuiltinOptions.ReducerOptions
            o.keepDims = True
        elif c == "RESHAPE":
            o, kind = s.ReshapeOptionsT(), s.BuiltinOptions.ReshapeOptions
            o.newShape = list(op.options["new_shape"])
        elif c == "TRANSPOSE":
            o, kind = s.TransposeOptionsT(), s.BuiltinOptions.TransposeOptions
        elif c == "BATCH_MATMUL":
            o, kind = s.BatchMatMulOptionsT(), s.BuiltinOptions.BatchMatMulOptions
            o.adjX, o.adjY = False, bool(op.options["adj_y"])
        elif c == "SOFTMAX":
            o, kind = s.SoftmaxOptionsT(), s.BuiltinOptions.SoftmaxOptions
            o.beta = float(op.options["beta"])
        elif c == "GATHER":
            o, kind = s.GatherOptionsT(), s.BuiltinOptions.GatherOptions
            o.axis = int(op.options["axis"])
        elif c == GELU_OP:
            fo.customOptionsFormat = s.CustomOptionsFormat.FLEXBUFFERS
        if o is not None:
            fo.builtinOptionsType = kind
            fo.builtinOptions = o


def calibration_ids(model) -> list[list[int]]:
    """The representative sentences of `model` (folder.Model) as its token ids: calibration.jsonl of its
    Hugging Face folder when there is one, else the converter's generated sentences."""
    from .convert import ConvertOptions, calibration_texts
    src = model.source_dir or model._find_source() or model.path
    texts, _ = calibration_texts(Path(src), ConvertOptions(), model.vocab)
    return [model.encode(t) for t in texts]
