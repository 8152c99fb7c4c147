"""The bertl14 test/benchmark image (tests/target) on an emulated board (every board whose board.yml has `qemu:`):
build it with `west build`, boot it under QEMU with its serial port on a loopback TCP port (pyserial socket://) and
talk to it.

    elf = build_image(model_dir, kernels="dsp", max_seq_len=128, board="mps2_an505")
    with QemuTarget(elf, board="mps2_an505") as t:
        r = t.infer_text("turn on the light")    # ids, offsets, INT8 rows + scales, logits, label, score, tags,
                                                  # tag logits, counts
        r = t.infer_ids([101, 2000, 102])
        t.mark_instructions()                     # the cost of one profile mark
        t.kernels()                               # kernel micro-benchmarks

Counts: under `-icount shift=S` every guest instruction advances virtual time by 2^S ns and the
counter the image reads ticks every NS ns (the MPS2 boards' CMSDK TIMER0: 40 ns at 25 MHz, 50 ns at 20 MHz;
qemu_riscv32's instret CSR: 1 ns; the image's banner says `tick_ns=`), so an interval of T ticks is T * NS / 2^S
instructions. The image converts every timed interval on its own: when a tick is less than half an instruction
(S >= 7 at 40 or 50 ns, every S at 1 ns) each interval's count is exact, so the counts are deterministic (the same
image and input give the same numbers, whatever the host did before); at 40 ns and S = 0 a tick is 40
instructions and each interval is quantized to +-40. The default S is the board's (board.yml `qemu: icount_shift:`,
0 on qemu_riscv32, where its 32-bit counter then wraps last), else 7 (DEFAULT_ICOUNT_SHIFT); the instructions
executed are the same for every S, only the clock's resolution changes.

Kernel sets: each board runs those its board.yml lists (`kernels:`, e.g. [portable, dsp]); KERNEL_CONFIG says which
Kconfig symbols build each set.
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import REPO_ROOT
from ..cachelock import cache_lock
from ..errors import UserError

IMAGE_SRC = REPO_ROOT / "tests" / "target"
TIMER_HZ = 25_000_000
STAGES = ("other", "tokenize", "embed", "quant", "qkv", "scores", "softmax", "context", "attn_out",
          "ffn_up", "gelu", "ffn_down", "layernorm", "classifier")   # bertl14_profile.h order
MARK_REPS = 4096
DEFAULT_ICOUNT_SHIFT = 7
# the Kconfig values that build each kernel set; a symbol another set names is set to n (n is accepted on a board
# where the symbol cannot be set, so every build says all of them)
KERNEL_CONFIG = {"portable": {}, "dsp": {"BERTL14_USE_DSP": "y"},
                 "mve": {"BERTL14_USE_MVE": "y", "BERTL14_USE_DSP": "y"}}   # Helium, the DSP bodies where it has none


@functools.cache
def _west() -> tuple:
    sys.path.insert(0, str(REPO_ROOT / "scripts" / "west_commands"))
    try:
        from bertl14_west import BuildError, qemu
    finally:
        sys.path.pop(0)
    return qemu, BuildError


def west_qemu():
    """bertl14_west.qemu (scripts/west_commands): the one QEMU command line and process handling, shared with
    the west commands (which cannot rely on this package being installed, so it lives there). Imported on first
    use: only a repository checkout has it."""
    return _west()[0]


def qemu_boards() -> list[str]:
    """The boards QEMU emulates (board.yml); empty outside a repository checkout."""
    try:
        return west_qemu().qemu_boards()
    except ImportError:
        return []


def board_info(board: str):
    """The board's description (bertl14_west.boards.Board), or UserError for an unknown or not emulated board."""
    build_error = _west()[1]             # imports bertl14_west (and so its modules below)
    find_board = importlib.import_module("bertl14_west.boards").find_board
    try:
        b = find_board(board)
    except build_error:                  # not a board of boards/
        b = None
    if b is None or not b.qemu:
        raise UserError(f"unknown QEMU board {board!r}: use one of {', '.join(qemu_boards())}")
    return b


def board_kernels(board: str) -> list[str]:
    """The kernel sets the board runs (board.yml `kernels:`), portable first."""
    return board_info(board).kernels


def resolve_kernels(board: str, kernels: str) -> list[str]:
    """--kernels K for a board: ["K"], or for "both" every set the board has (portable and its accelerated ones).
    UserError for a set the board lacks."""
    have = board_kernels(board)
    if kernels == "both":
        return have
    if kernels not in have:
        raise UserError(f"--kernels {kernels}: board {board} runs {' and '.join(have)} kernels only (board.yml "
                        f"`kernels:`); use {' or '.join(have + ['both'])}")
    return [kernels]


def kernel_options(kernels: str) -> list[str]:
    """The -DCONFIG_... options of `west build` that build this kernel set (KERNEL_CONFIG)."""
    if kernels not in KERNEL_CONFIG:
        raise UserError(f"unknown kernel set {kernels!r}: use {' or '.join(KERNEL_CONFIG)}")
    symbols = sorted({sym for values in KERNEL_CONFIG.values() for sym in values})
    return [f"-DCONFIG_{sym}={KERNEL_CONFIG[kernels].get(sym, 'n')}" for sym in symbols]


def weight_options(model_dir: Path, weights: str | None = None) -> list[str]:
    """The -DCONFIG_BERTL14_WEIGHTS_* options of `west build`: `weights` ("int16" | "int8"), else the type a converted
    model folder was converted with (manifest options.quantize; a Hugging Face folder: int16), so the build keeps
    the model's weights and links the matching kernel."""
    man = Path(model_dir) / "manifest.json"
    wt = weights or (json.loads(man.read_text(encoding="utf-8")).get("options", {}).get("quantize", "int16")
                     if man.is_file() else "int16")
    return [f"-DCONFIG_BERTL14_WEIGHTS_INT8={'y' if wt == 'int8' else 'n'}",
            f"-DCONFIG_BERTL14_WEIGHTS_INT16={'n' if wt == 'int8' else 'y'}"]


def embedding_options(model_dir: Path) -> list[str]:
    """The -DCONFIG_BERTL14_QUANTIZE_EMBEDDING_* and _PRUNE_HEADS options of `west build`: the word-embedding type
    and pruned heads a converted folder was converted with (manifest options; a Hugging Face folder: int8, none),
    so the image's build converts it the same way."""
    man = Path(model_dir) / "manifest.json"
    opts = json.loads(man.read_text(encoding="utf-8")).get("options", {}) if man.is_file() else {}
    emb, prune = opts.get("embedding", "int8"), int(opts.get("prune_heads") or 0)
    return [f"-DCONFIG_BERTL14_QUANTIZE_EMBEDDING_INT4={'y' if emb == 'int4' else 'n'}",
            f"-DCONFIG_BERTL14_QUANTIZE_EMBEDDING_INT8={'n' if emb == 'int4' else 'y'}",
            f"-DCONFIG_BERTL14_PRUNE_HEADS={prune}"]


def board_icount_shift(board: str) -> int:
    """The -icount shift the board counts at by default (board.yml `qemu: icount_shift:`, else 7)."""
    shift = board_info(board).icount_shift
    return DEFAULT_ICOUNT_SHIFT if shift is None else shift


def board_cpu(board: str) -> str:
    """The board's CPU as board.yml names it (cortex-m7, cortex-m33, riscv32, ...)."""
    return board_info(board).cpu


def qemu_machine(board: str) -> dict:
    """How QEMU runs a board that runs the test image (from its board.yml: program, machine, fixed arguments)."""
    return board_info(board).qemu


def board_tools(board: str = "mps2_an500") -> list[str]:
    """The programs the QEMU target of a board needs: its toolchain's gcc, its QEMU, cmake."""
    b = board_info(board)
    return [b.tool("gcc"), b.qemu["system"], "cmake"]


def missing_tools(board: str = "mps2_an500") -> list[str]:
    """Tools the QEMU target of a board needs that are not installed (empty: all there)."""
    return [t for t in board_tools(board) if not shutil.which(t)]


def require_tools(board: str = "mps2_an500") -> None:
    missing = missing_tools(board)
    if missing:
        _west()
        tools = importlib.import_module("bertl14_west.tools")
        hints = "; ".join(f"{t}: `{tools.install_hint(t)}`" for t in missing)
        raise UserError(f"{', '.join(missing)} not found ({board}'s toolchain and emulator): install {hints} "
                        "(or run `make deps`), or use --target host")


def _cache() -> Path:
    """The build cache of this checkout: a folder per clone, since a west build directory belongs to the source
    tree it was configured from (another clone's build of the same image would be refused)."""
    base = os.environ.get("BERTL14_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "bertl14")
    return Path(base) / "target" / hashlib.sha256(str(REPO_ROOT.resolve()).encode()).hexdigest()[:8]


def build_image(model_dir: Path, kernels: str, max_seq_len: int, board: str = "mps2_an500",
                profile: bool = True, quiet: bool = True, weights: str | None = None) -> Path:
    """Build (incrementally) the test image for `model_dir` (a converted folder); returns firmware.elf. weights:
    the linear weight type to build with (None: the folder's own, weight_options)."""
    require_tools(board)
    resolve_kernels(board, kernels)
    model_dir = Path(model_dir).resolve()
    weights = weight_options(model_dir, weights)
    wkey = "|int8" if weights[0].endswith("=y") else ""
    emb = embedding_options(model_dir)     # INT8 embeddings and no pruning keep their keys
    ekey = ("|emb4" if emb[0].endswith("=y") else "") + ("" if emb[2].endswith("=0") else f"|{emb[2]}")
    key = hashlib.sha256(f"{model_dir}|{max_seq_len}|{profile}{wkey}{ekey}".encode()).hexdigest()[:12]
    build_dir = _cache() / f"{board}-{kernels}-{key}"
    cmd = [sys.executable, "-m", "west", "build", "-b", board, "-d", str(build_dir), str(IMAGE_SRC), "--",
           f"-DCONFIG_BERTL14_MODEL_DIR={model_dir}", f"-DCONFIG_BERTL14_MAX_SEQ_LEN={max_seq_len}",
           *kernel_options(kernels), *weights, *embedding_options(model_dir), "-DCONFIG_APP_RTOS_NONE=y",
           f"-DBERTL14_TARGET_PROFILE={'ON' if profile else 'OFF'}"]
    env = dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL=os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2"))
    if not quiet:
        print(f"building the {board} test image ({kernels} kernels) in {build_dir}", file=sys.stderr)
    with cache_lock(build_dir):       # another process building the same image waits, then finds it built
        proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=1200)
    if proc.returncode != 0:
        tail = "\n".join(ln[:300] for ln in (proc.stdout + proc.stderr).strip().splitlines()[-25:])
        raise UserError(f"building the {board} test image failed ({' '.join(cmd[2:5])} ...):\n{tail}")
    elf = build_dir / "firmware.elf"
    if not elf.is_file():
        raise UserError(f"the test image build produced no {elf}")
    return elf


@dataclass
class TargetResult:
    ids: list[int] | None            # C tokenizer ids (text commands)
    token_status: int | None
    hidden: np.ndarray | None        # int8 [N, H]
    scales: np.ndarray | None        # uint32 [N]
    frac_bits: int | None
    label: int | None
    score_q16: int | None
    logits: np.ndarray | None        # int32 [C]
    offsets: list[tuple[int, int]] | None = None   # byte span of each token in the text (text commands)
    tags: list[int] | None = None    # tag of every token (models with a token classifier)
    tag_logits: np.ndarray | None = None   # int32 [N, T]
    stage_instructions: dict[str, int] = field(default_factory=dict)   # profile marks included
    stage_entries: dict[str, int] = field(default_factory=dict)
    instructions: int = 0            # the whole call (tokenize + encode + classify), marks included
    stack_bytes: int = 0
    status: int = 0


class QemuTarget:
    """A running test image. Use as a context manager: QEMU is killed on exit."""

    def __init__(self, elf: Path, board: str = "mps2_an500", icount_shift: int | None = None,
                 timeout: float = 60.0):
        require_tools(board)
        if icount_shift is None:
            icount_shift = board_icount_shift(board)
        self.elf, self.board, self.shift, self.timeout = Path(elf), board, icount_shift, timeout
        self.machine = qemu_machine(board)
        self.link = None                       # west_qemu().QemuSerial
        self.ser = None
        self.banner: dict[str, str] = {}

    def __enter__(self):
        # The loopback port is picked free, then released for QEMU to bind: another process can take it in
        # between (QEMU then exits with "Address already in use", and our client may even connect to the
        # other process's listener and hear nothing). So a launch whose QEMU died is retried on a new port.
        for _ in range(3):
            first = self._launch()
            if first is not None:
                break
        else:
            raise UserError("QEMU exited before the test image answered, three times (loopback port taken?)")
        if not first.startswith("READY"):
            self.close()
            raise UserError(f"the test image did not start: {first!r}")
        self.banner = dict(kv.split("=", 1) for kv in first.split()[1:] if "=" in kv)
        if self.banner.get("init") != "0":
            self.close()
            raise UserError(f"bertl14_init failed on the target (status {self.banner.get('init')})")
        self._send(f"C {self.shift}")
        if self._line() != "OK":
            self.close()
            raise UserError("the test image did not accept the icount shift")
        return self

    def _launch(self) -> str | None:
        """Start QEMU and read the image's first line; None when QEMU died before answering."""
        westqemu = west_qemu()
        self.link = westqemu.QemuSerial(self.machine, self.elf, ["-icount", f"shift={self.shift}"], timeout=1.0,
                                        start_within=20, env_flags=False)
        try:
            self.ser = self.link.start(settle=0.2).ser   # settle: let QEMU bind (or fail to) before we connect
        except westqemu.QemuError as exc:
            self.close()
            if exc.exited:
                return None
            raise UserError(str(exc)) from None
        deadline = time.monotonic() + self.timeout
        raw = b""
        while True:                            # the first line, watching that our QEMU is still alive
            raw += self.ser.readline()         # 1 s timeout: a partial line is kept and completed
            if raw.endswith(b"\n"):
                self.ser.timeout = self.timeout
                return raw.decode("ascii", errors="replace").rstrip("\r\n")
            if not self.link.alive():
                self.close()
                return None
            if time.monotonic() > deadline:
                self.close()
                raise UserError(f"no answer from the QEMU target within {self.timeout:.0f} s")

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        if self.link is not None:
            self.link.close()
        self.link = self.ser = None

    # ---- protocol ------------------------------------------------------------------------------
    def _send(self, text: str) -> None:
        self.ser.write(text.encode("ascii") + b"\n")

    def _line(self) -> str:
        raw = self.ser.readline()
        if not raw.endswith(b"\n"):
            raise UserError(f"no answer from the QEMU target within {self.timeout:.0f} s (got {raw[:80]!r})")
        return raw.decode("ascii", errors="replace").rstrip("\r\n")

    def _result(self) -> TargetResult:
        r = TargetResult(None, None, None, None, None, None, None, None)
        rows, scales, tag_rows = [], [], []
        while True:
            ln = self._line()
            tag, _, rest = ln.partition(" ")
            if tag == "IDS":
                f = [int(x) for x in rest.split()]
                r.token_status, n, r.ids = f[0], f[1], f[2:]
                assert len(r.ids) == n, ln
            elif tag == "H":
                s, hx = rest.split()
                scales.append(int(s))
                rows.append(np.frombuffer(bytes.fromhex(hx), dtype=np.int8))
            elif tag == "O":
                f = [int(x) for x in rest.split()]
                r.offsets = list(zip(f[0::2], f[1::2]))
            elif tag == "G":
                tag_rows.append([int(x) for x in rest.split()])
            elif tag == "F":
                r.frac_bits = int(rest)
            elif tag == "L":
                f = [int(x) for x in rest.split()]
                r.label, r.score_q16, r.logits = f[0], f[1], np.array(f[2:], dtype=np.int64)
            elif tag == "P":
                t, e = rest.split("/")
                r.stage_instructions = dict(zip(STAGES, map(int, t.split())))
                r.stage_entries = dict(zip(STAGES, map(int, e.split())))
            elif tag == "S":
                r.instructions, r.stack_bytes = (int(x) for x in rest.split())
            elif tag == "END":
                r.status = int(rest)
                break
            else:
                raise UserError(f"unexpected line from the QEMU target: {ln[:100]!r}")
        if rows:
            r.hidden = np.stack(rows)
            r.scales = np.array(scales, dtype=np.uint32)
        if tag_rows:
            r.tags = [row[0] for row in tag_rows]
            r.tag_logits = np.array([row[1:] for row in tag_rows], dtype=np.int64)
        return r

    def infer_text(self, text: str) -> TargetResult:
        self._send("T " + text.encode("utf-8").hex())
        return self._result()

    def infer_ids(self, ids: list[int]) -> TargetResult:
        self._send("I " + " ".join(str(int(i)) for i in ids))
        return self._result()

    def mark_instructions(self) -> float:
        """Instructions of one profile mark (the hook's own cost, to subtract per stage entry)."""
        self._send("M")
        ln = self._line()
        if not ln.startswith("MARK "):
            raise UserError(f"unexpected answer to M: {ln!r}")
        return int(ln.split()[1]) / MARK_REPS

    def kernels(self) -> dict[str, dict]:
        """Kernel micro-benchmarks: name -> {reps, instructions, work} (work = MACs or elements per rep)."""
        self._send("K")
        out = {}
        while True:
            ln = self._line()
            if ln == "KEND":
                return out
            _, name, reps, count, work = ln.split()
            out[name] = {"reps": int(reps), "instructions": int(count), "work": int(work)}
