"""`bertl14 console | validate`: talk to the intent firmware (app/) over its serial port.

  bertl14 console  (--port URL | --qemu ELF) [--send TEXT ...]
  bertl14 validate (--port URL | --qemu ELF) [--model M] --data FILE.jsonl [--entities FILE] [--dump] [--json]
                   [--limit N]

URL is anything pyserial opens: /dev/ttyACM0 (the nucleo's ST-LINK port, 115200 8N1) or
socket://127.0.0.1:PORT. --qemu ELF boots a firmware built for a QEMU board (mps2_an500, mps2_an505,
qemu_riscv32, ...: docs/boards.md) with its UART on a free loopback port and stops QEMU on exit. The protocol:
docs/serial-protocol.md.

`validate` checks every answer against the Python integer reference (reference/integer.py, bit-exact with the C
library): intent (with the device's min_score), score, token count, truncation and, with --dump, the
INT8 [CLS] bytes, and with a registry in the firmware the names found (names=, name=, area=, floor=,
entity_area=; the registry matcher's Python reference runs first). With --entities FILE (the registry the
firmware was built with, checked against `:entities`), slot accuracy (slots.py) is reported beside intent
accuracy. It exits 1 on any mismatch or protocol error.
"""
from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .. import textio, ui
from ..errors import UserError

BANNER_PREFIX = "bertl14 ready "
ANSWER_PREFIXES = ("intent=", "error=", "ok ")
DEFAULT_TIMEOUT = 20.0
DEFAULT_QEMU_BOARD = "mps2_an500"   # --qemu ELF without its build's bertl14_build.json
SAMPLE_LINES = ["turn on the kitchen light", "what is the temperature in the bedroom",
                "set a timer for five minutes", "tell me a joke"]


# registry names in answers and in :entities (docs/serial-protocol.md, "Names")
SLOT_KEYS = ("name", "area", "floor", "entity_area")


def encode_value(text: str) -> str:
    """What the firmware writes for a name: space, %, = and control bytes as %XX, UTF-8 kept as it is."""
    return "".join(f"%{ord(c):02X}" if ord(c) <= 0x20 or c in "%=\x7f" else c for c in text)


def decode_value(value: str) -> str:
    """The inverse of encode_value (any %XX is decoded; the bytes are UTF-8)."""
    from urllib.parse import unquote
    return unquote(value, encoding="utf-8", errors="replace")


def parse_fields(line: str) -> dict[str, str]:
    """`key=value` fields of a protocol line (words without '=' are skipped); values percent-decoded."""
    out = {}
    for word in line.split():
        if "=" in word:
            k, v = word.split("=", 1)
            out.setdefault(k, decode_value(v) if "%" in v else v)
    return out


# ------------------------------------------------------------------------------------------------------
# the link: a serial port, or QEMU with its UART on a loopback TCP port
# ------------------------------------------------------------------------------------------------------

def _qemu_machine(elf: Path) -> str | dict:
    """The QEMU machine the ELF was built for (its build's bertl14_build.json); without one, the default board's
    when the image loads into that board's memory. An image for a board QEMU does not emulate is refused: QEMU
    would boot it on another machine, where it cannot run."""
    from .qemu_target import qemu_boards, west_qemu
    info_file = elf.parent / "bertl14_build.json"
    try:
        info = json.loads(info_file.read_text(encoding="utf-8")) if info_file.is_file() else {}
    except ValueError:
        info = {}
    boards = ", ".join(qemu_boards())
    if info.get("board"):
        if not info.get("qemu_machine"):
            raise UserError(f"--qemu {elf}: built for {info['board']}, which QEMU does not emulate: flash it "
                            f"(west flash -d {elf.parent}) and use --port, or build for a QEMU board ({boards})")
        return info.get("qemu") or info["qemu_machine"]
    problem = elf_outside_board(elf, DEFAULT_QEMU_BOARD)
    if problem:
        raise UserError(f"--qemu {elf}: {problem}, so it is not a firmware for QEMU's {DEFAULT_QEMU_BOARD}: use "
                        f"--port for a board's firmware, or build for a QEMU board ({boards})")
    return west_qemu().board_machine(DEFAULT_QEMU_BOARD)


def elf_outside_board(elf: Path, board: str) -> str | None:
    """Why the ELF image cannot run on `board` (not a 32-bit Arm ELF, or a segment it loads outside the board's
    memory, board.yml), None when it fits."""
    import importlib
    import struct
    from .qemu_target import west_qemu
    west_qemu()   # makes bertl14_west importable
    memory = importlib.import_module("bertl14_west.boards").find_board(board).memory
    data = elf.read_bytes()
    if data[:4] != b"\x7fELF" or len(data) < 52 or data[4] != 1 or data[5] != 1:
        return "it is not a 32-bit little-endian ELF file"
    machine, = struct.unpack_from("<H", data, 18)
    if machine != 40:
        return f"it is not an Arm image (ELF machine {machine})"
    phoff, = struct.unpack_from("<I", data, 28)
    phentsize, phnum = struct.unpack_from("<HH", data, 42)
    for i in range(phnum):
        off = phoff + i * phentsize
        if off + 32 > len(data):
            return "its program headers are truncated"
        p_type, _, _, paddr, filesz, memsz = struct.unpack_from("<IIIIII", data, off)
        if p_type != 1 or not (filesz or memsz):   # PT_LOAD with contents
            continue
        size = max(filesz, memsz)
        if not any(r["origin"] <= paddr and paddr + size <= r["origin"] + r["size"] for r in memory):
            return f"it loads {size} bytes at 0x{paddr:08x}, outside {board}'s memory"
    return None


@contextmanager
def open_link(port: str | None = None, qemu: str | None = None, qemu_flags: list[str] | None = None,
              timeout: float = DEFAULT_TIMEOUT):
    """A pyserial object for --port URL, or for QEMU running --qemu ELF (killed when the block ends)."""
    import serial
    if bool(port) == bool(qemu):
        raise UserError("give exactly one of --port URL and --qemu ELF")
    if port:
        try:
            ser = serial.serial_for_url(port, baudrate=115200, timeout=timeout)
        except (serial.SerialException, ValueError) as exc:
            raise UserError(f"--port {port}: {exc} (a device such as /dev/ttyACM0, or socket://HOST:PORT)") from None
        with ser:
            yield ser
        return
    from .qemu_target import west_qemu
    westqemu = west_qemu()
    elf = Path(qemu)
    if not elf.is_file():
        raise UserError(f"--qemu {elf}: no such file (build it with `west build -b mps2_an500 app`)")
    link = westqemu.QemuSerial(_qemu_machine(elf), elf, qemu_flags or [], timeout=timeout, start_within=15)
    try:
        link.start()
    except FileNotFoundError:
        import importlib
        hint = importlib.import_module("bertl14_west.tools").install_hint(link.argv[0])
        raise UserError(f"{link.argv[0]} not found: install it with `{hint}`") from None
    except westqemu.QemuError as exc:
        raise UserError(str(exc)) from None
    with link:
        yield link.ser


# ------------------------------------------------------------------------------------------------------
# the protocol
# ------------------------------------------------------------------------------------------------------

class ProtocolError(Exception):
    pass


@dataclass
class Answer:
    line: str                                   # the answer line (intent=..., error=..., ok ...)
    fields: dict = field(default_factory=dict)
    before: list[str] = field(default_factory=list)  # lines printed before it (help: ...)
    cls: bytes | None = None                    # the CLS_EMB line that followed, when dump is on

    @property
    def kind(self) -> str:
        return "intent" if self.line.startswith("intent=") else "error" if self.line.startswith("error=") else "ok"


class Device:
    """One firmware on a serial link: banner, commands, sentences."""

    def __init__(self, ser, timeout: float = DEFAULT_TIMEOUT):
        self.ser, self.timeout = ser, timeout
        self.banner: dict[str, str] = {}
        self.config: dict[str, str] = {}
        self.dump = False

    def readline(self) -> str:
        raw = self.ser.readline()
        if not raw.endswith(b"\n"):
            raise ProtocolError(f"no complete line within {self.timeout:.0f} s (got {raw!r})")
        return raw.decode("utf-8", errors="replace").rstrip("\r\n")

    def read_banner(self) -> dict[str, str]:
        for _ in range(20):   # boot messages before the banner are skipped
            line = self.readline()
            if line.startswith(BANNER_PREFIX):
                self.banner = parse_fields(line)
                return self.banner
            if line.startswith("bertl14 init_failed"):
                raise ProtocolError(f"the firmware could not start the model: {line}")
        raise ProtocolError("no `bertl14 ready` banner")

    def send(self, text: bytes | str) -> None:
        data = text.encode("utf-8") if isinstance(text, str) else text
        self.ser.write(data + b"\n")

    def read_answer(self) -> Answer:
        before = []
        while True:
            line = self.readline()
            if line.startswith(ANSWER_PREFIXES):
                break
            before.append(line)
            if len(before) > 70000:   # :entities prints one line per registry object (at most 65,534)
                raise ProtocolError(f"no answer line (intent=, error=, ok) after {before[:3]!r} ...")
        ans = Answer(line=line, fields=parse_fields(line), before=before)
        if self.dump and ans.kind == "intent":
            dump = self.readline()
            if not dump.startswith("CLS_EMB: "):
                raise ProtocolError(f"expected a CLS_EMB line after {line!r}, got {dump!r}")
            try:
                ans.cls = bytes(int(x, 16) for x in dump[len("CLS_EMB: "):].split(","))
            except ValueError:
                raise ProtocolError(f"malformed CLS_EMB line {dump[:60]!r}") from None
        return ans

    def ask(self, text: bytes | str) -> Answer:
        self.send(text)
        return self.read_answer()

    def entities(self) -> list[dict]:
        """The device's registry (`:entities`): [{"kind": "name"|"area"|"floor", "name", "parent"}] in table
        order (the same dicts as registry.listing, domain aside)."""
        ans = self.command(":entities")
        kinds = {"entity:": "name", "area:": "area", "floor:": "floor"}
        out = []
        for line in ans.before:
            kind = kinds.get(line.split(" ", 1)[0])
            if kind is None:
                raise ProtocolError(f":entities: unexpected line {line!r}")
            f = parse_fields(line)
            parent_key = {"name": "area", "area": "floor"}.get(kind)
            out.append({"kind": kind, "name": f.get("name", ""), "parent": f.get(parent_key, "") if parent_key else ""})
        words = ans.line.split()
        if len(words) < 3 or words[2] != str(len(out)):
            raise ProtocolError(f":entities: {len(out)} lines but {ans.line!r}")
        return out

    def command(self, cmd: str) -> Answer:
        ans = self.ask(cmd)
        if ans.kind != "ok":
            raise ProtocolError(f"{cmd}: expected an `ok` line, got {ans.line!r}")
        if cmd == ":config":
            self.config = ans.fields
        if cmd.startswith(":dump"):
            self.dump = ans.fields.get("dump") == "on"
        return ans


# ------------------------------------------------------------------------------------------------------
# the expected answer (Python integer reference)
# ------------------------------------------------------------------------------------------------------

@dataclass
class Expected:
    intent: str
    score: str
    tokens: int
    truncated: bool
    label: str
    cls: bytes
    slots: dict = field(default_factory=dict)   # names=, name=, area=, floor=, entity_area= (with a registry)
    best: str | None = None                     # best= (a label answered none for its score)
    values: dict = field(default_factory=dict)  # the tagger's slot values (hours=, item=, ...), decoded
    value_keys: tuple = ()                      # every slot key the model can answer (compared even when absent)


def value_field(value) -> str:
    """A slot value as protocol.c's put_values writes it (decoded): integers as digits, halves with one decimal."""
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def expected_slot_fields(found: list[tuple[int, int, int, int]], objects: dict) -> dict[str, str]:
    """The answer's registry fields for the matcher's slots [(kind, index, start, end)] (protocol.c's put_slots):
    the first name of each kind, the entity's registered area, and how many names were found."""
    from ..registry import names as R
    out = {"names": str(len(found))}
    first: dict[int, int] = {}
    for kind, index, _, _ in found:
        first.setdefault(kind, index)
    for kind in (R.KIND_NAME, R.KIND_AREA, R.KIND_FLOOR):
        if kind in first:
            out[R.KIND_KEYS[kind]] = objects[kind][first[kind]][0]
    if R.KIND_NAME in first:
        area = objects[R.KIND_NAME][first[R.KIND_NAME]][1]
        if area != R.NO_PARENT:
            out["entity_area"] = objects[R.KIND_AREA][area][0]
    return out


class Reference:
    """What the firmware must print for a sentence: reference/integer.py on the model the firmware was built with, after
    the registry matcher (registry.Matcher, bit-exact with the C one) when the firmware has a registry, with the
    firmware's domain rule (`label_domains`: its bertl14_label_domains[], answer.classify_allowed) and threshold
    rule (answer.device_answer): `min_score_milli`, or `min_score_named_milli` for a sentence in which the
    registry replaced a name (None: the same as min_score_milli, a firmware with one threshold)."""

    def __init__(self, model_path: str | Path, min_score_milli: int, registry_words: list[int] | None = None,
                 max_names: int = 4, label_domains: list[int] | None = None,
                 min_score_named_milli: int | None = None):
        from ..reference import integer as reference
        from ..model.folder import open_model
        self.model = open_model(model_path)
        self.ref, self.qm = reference, self.model.qm
        self.labels = self.model.labels
        self.min_score = min_score_milli
        self.min_score_named = min_score_milli if min_score_named_milli is None else min_score_named_milli
        self.matcher, self.max_names = None, max_names
        self.set_registry(registry_words, max_names, label_domains)
        self.values, self.value_keys = None, ()
        if self.model.tags:   # the firmware's value table and intents' slots, from the same files the converter read
            from ..reference.tagging import ValueReader
            self.values = ValueReader(self.model.path, self.model.tags)
            self.value_keys = tuple(k for k in self.values.spec["slots"] if k not in SLOT_KEYS)

    def set_registry(self, registry_words: list[int] | None, max_names: int = 4,
                     label_domains: list[int] | None = None) -> None:
        """Match names with this compiled table (None: no registry), at most max_names a sentence; with
        `label_domains` (label -> domain bits, registry.json's "label_domains"), the domain rule."""
        from ..registry import names as R
        from ..model.folder import read_model_parts
        self.matcher, self.max_names = None, max_names
        self.words, self.label_domains = registry_words, label_domains
        if registry_words:
            vocab_words = read_model_parts(self.model.path / "model.bl14")[1]
            self.matcher = R.Matcher(registry_words, vocab_words)
            self.objects = R.table_objects(registry_words)

    def expect(self, text: str) -> Expected:
        from ..reference.answer import device_answer, threshold_for
        slots, found = {}, []
        if self.matcher is not None:
            st, out, found = self.matcher.match(text, self.max_names)
            if st != 0:
                raise UserError(f"the registry matcher failed on {text!r} (status {st})")
            text = out.decode("utf-8")
            slots = expected_slot_fields(found, self.objects)
        ids, truncated = self.model.tokenizer.encode_full(text, self.model.max_seq_len)
        r = self.ref.encode(self.qm, ids)
        values: dict = {}
        if self.values is not None:    # intent.c: tags of the same encode, spans of the text the model read
            offsets = self.model.tokenizer.encode_offsets(text, self.model.max_seq_len)[1]
            values = self.values.read(text.encode("utf-8"), [int(t) for t in r.tags], offsets)
        label, score = int(r.label), int(r.score)
        if self.matcher is not None and self.label_domains:   # intent.c's apply_domains
            from ..registry import names as R
            from ..reference.answer import allowed_labels, classify_allowed
            from ..registry.domains import name_domain_mask
            names = name_domain_mask(R.entity_domain(self.words, i) for k, i, _, _ in found if k == R.KIND_NAME)
            allowed = allowed_labels(self.label_domains, names)
            if allowed is not None:
                label, q16 = classify_allowed(r.logits, allowed)
                score = self.ref.score_thousandths(q16)
        label = self.labels[label]
        intent, best = device_answer(label, score, threshold_for(len(found), self.min_score, self.min_score_named))
        if values:   # intent.c's fit_values: the slots of the answer's intent
            values = self.values.fit(values, label)
        tagged = {}
        for key, value in values.items():
            if key in ("name", "area", "floor"):
                if not (self.matcher is not None and slots.get("names", "0") != "0"):
                    slots[key] = value_field(value)   # without registry names the tagger's are answered
            else:
                tagged[key] = value_field(value)
        values = tagged
        return Expected(intent=intent, score=f"{score / 1000:.3f}", tokens=len(ids), truncated=bool(truncated),
                        label=label, cls=bytes(int(x) & 0xFF for x in r.cls), slots=slots, best=best,
                        values=values, value_keys=self.value_keys)


def device_thresholds(config: dict) -> tuple[int, int]:
    """(min_score, min_score_named) in thousandths from the fields of `:config`; a firmware that prints no
    min_score_named has one threshold, min_score."""
    plain = round(float(config.get("min_score", "0")) * 1000)
    named = config.get("min_score_named")
    return plain, plain if named is None else round(float(named) * 1000)


def compare(ans: Answer, exp: Expected, dump: bool) -> list[str]:
    """Differences between a device answer and the reference (empty: identical)."""
    if ans.kind != "intent":
        return [f"answer {ans.line!r}, expected intent={exp.intent}"]
    f = ans.fields
    diffs = []
    if f.get("intent") != exp.intent:
        diffs.append(f"intent {f.get('intent')} != {exp.intent}")
    if f.get("best") != exp.best:
        diffs.append(f"best {f.get('best')} != {exp.best}")
    if f.get("score") != exp.score:
        diffs.append(f"score {f.get('score')} != {exp.score}")
    if f.get("tokens") != str(exp.tokens):
        diffs.append(f"tokens {f.get('tokens')} != {exp.tokens}")
    if (f.get("truncated") == "1") != exp.truncated:
        diffs.append(f"truncated {f.get('truncated', '0')} != {int(exp.truncated)}")
    for key in ("names",) + SLOT_KEYS:
        if f.get(key) != exp.slots.get(key):
            diffs.append(f"{key} {f.get(key)!r} != {exp.slots.get(key)!r}")
    for key in exp.value_keys:
        if f.get(key) != exp.values.get(key):
            diffs.append(f"{key} {f.get(key)!r} != {exp.values.get(key)!r}")
    if dump and ans.cls != exp.cls:
        n = sum(1 for a, b in zip(ans.cls or b"", exp.cls) if a != b)
        diffs.append(f"CLS bytes differ ({n} of {len(exp.cls)}; device {len(ans.cls or b'')} bytes)")
    return diffs


# ------------------------------------------------------------------------------------------------------
# commands
# ------------------------------------------------------------------------------------------------------

def default_model_for(elf: str | None) -> Path | None:
    """The model a firmware build converted (BUILD/generated/model, next to BUILD/firmware.elf)."""
    if elf:
        cand = Path(elf).resolve().parent / "generated" / "model"
        if (cand / "model.bl14").is_file():
            return cand
    return None


def read_sentences(path: str, limit: int | None) -> list[dict]:
    from ..textio import read_jsonl_numbered
    numbered = read_jsonl_numbered(path, "--data", need=("text", "intent"))
    items = [{"text": r["text"], "gold": str(r["intent"]), "record": r, "line": n} for n, r in numbered]
    return items[:limit] if limit else items


def _listing_diff(device: list[dict], mine: list[dict]) -> str:
    if len(device) != len(mine):
        return f"{len(device)} names on the device, {len(mine)} in the file"
    for d, m in zip(device, mine):
        if d != m:
            return f"the device has {d['kind']} {d['name']!r} ({d['parent'] or 'no parent'}) where the file has " \
                   f"{m['kind']} {m['name']!r} ({m['parent'] or 'no parent'})"
    return ""


def device_registry(dev: Device, model_path: Path, entities: str | None, build_dir: Path | None):
    """(compiled words or None, Registry or None, max names): the registry the firmware was built with, checked
    against its `:entities` list. With --entities FILE, FILE compiled for the model; otherwise the build's
    generated/registry/registry.json. A firmware without a registry gives (None, None, 0)."""
    from ..registry import names as R
    on_device = dev.entities()
    max_names = int(dev.config.get("max_names", "4") or 4)
    if entities:
        reg, words = R.build_for_model(entities, model_path)
        if not on_device:
            raise UserError(f"--entities {entities}: the firmware has no registry (built with "
                            f"CONFIG_APP_REGISTRY_FILE=\"\"): rebuild it with CONFIG_APP_REGISTRY_FILE={entities}")
        diff = _listing_diff(on_device, [{k: d[k] for k in ("kind", "name", "parent")} for d in R.listing(reg)])
        if diff:
            raise UserError(f"--entities {entities} is not the registry the firmware was built with ({diff}): "
                            f"rebuild with CONFIG_APP_REGISTRY_FILE={entities}, or pass the file it was built with")
        return words, reg, max_names
    if not on_device:
        return None, None, 0
    built = (build_dir / "generated" / "registry" / "registry.json") if build_dir else None
    if built is not None and built.is_file():
        data = json.loads(built.read_text(encoding="utf-8"))
        mine = [{k: d[k] for k in ("kind", "name", "parent")} for d in data["listing"]]
        if not _listing_diff(on_device, mine):
            return data["words"], None, max_names
    raise UserError(f"the firmware has a registry of {len(on_device)} names: pass --entities FILE, the "
                    "CONFIG_APP_REGISTRY_FILE it was built with (the answers depend on it)")


def firmware_label_domains(model_path: Path, build_dir: Path | None) -> list[int] | None:
    """The firmware's bertl14_label_domains[] (the domain rule): what its build generated (registry.json), else
    what the model folder gives (registry.label_domains_for_model: its intent_domains.json)."""
    from ..registry import names as R
    built = (build_dir / "generated" / "registry" / "registry.json") if build_dir else None
    if built is not None and built.is_file():
        data = json.loads(built.read_text(encoding="utf-8"))
        if "label_domains" in data:
            return data["label_domains"]
    return R.label_domains_for_model(model_path)[0]


def validate(dev: Device, ref: Reference, items: list[dict], dump: bool, progress: bool = True,
             slot_registry=None) -> dict:
    """Every sentence against the reference; with slot_registry (a registry.Registry: --entities), slot accuracy
    (slots.SlotScore) of the device's name=/area=/floor= against each record's expected slots."""
    line_max = int(dev.config.get("line_max", "0") or 0)
    mismatches, protocol_errors, cycles, match_cycles, match_bytes = [], [], [], 0, 0
    by_tokens: dict[int, list[int]] = {}     # cycles of the answers of each token count
    correct = 0
    score = None
    if slot_registry is not None:
        from ..reference.slots import SlotScore, expected_slots
        from ..registry.names import model_flags
        score = SlotScore(*model_flags(ref.model.path))
    for i, it in enumerate(ui.progress(items, desc="validate", unit="sentence", disable=not progress)):
        text = " ".join(it["text"].splitlines())   # one protocol line per sentence
        exp = ref.expect(text)
        try:
            ans = dev.ask(text)
        except ProtocolError as exc:
            protocol_errors.append({"index": i, "text": text, "error": str(exc)})
            break   # the link is out of step: later answers would be misattributed
        if line_max and len(text.encode("utf-8")) > line_max:
            ok = ans.line.startswith("error=too_long")
            diffs = [] if ok else [f"answer {ans.line!r}, expected error=too_long"]
        else:
            diffs = compare(ans, exp, dump)
        if ans.kind == "intent" and "cycles" in ans.fields:
            cycles.append(int(ans.fields["cycles"]))
            if "tokens" in ans.fields:
                by_tokens.setdefault(int(ans.fields["tokens"]), []).append(int(ans.fields["cycles"]))
        if ans.kind == "intent" and "match_cycles" in ans.fields:
            match_cycles += int(ans.fields["match_cycles"])
            match_bytes += len(text.encode("utf-8"))
        if ans.fields.get("intent") == it["gold"]:
            correct += 1
        if score is not None:
            score.add(expected_slots(it.get("record", {})), {k: ans.fields[k] for k in ("name", "area", "floor")
                                                              if k in ans.fields}, slot_registry)
        if diffs:
            mismatches.append({"index": i, "text": text, "answer": ans.line, "expected": exp.intent,
                               "differences": diffs})
    n = len(items)
    answered = protocol_errors[0]["index"] if protocol_errors else n
    return {"n": n, "answered": answered,
            "accuracy": correct / n if n else 0.0, "matches_reference": n - len(mismatches) - len(protocol_errors),
            "mismatches": mismatches, "protocol_errors": protocol_errors,
            "mean_cycles": sum(cycles) / len(cycles) if cycles else None, "max_cycles": max(cycles) if cycles else None,
            "cycles_unit": dev.config.get("cycles"),
            "cycles_by_tokens": {str(n): {"n": len(c), "mean_cycles": round(sum(c) / len(c))}
                                 for n, c in sorted(by_tokens.items())},
            "dump": dump, "model": dev.config.get("model"),
            "min_score": dev.config.get("min_score"), "min_score_named": dev.config.get("min_score_named"),
            "match_cycles_per_byte": match_cycles / match_bytes if match_bytes else None,
            "slots": score.as_dict() if score is not None else None}


def cmd_validate(args) -> int:
    items = read_sentences(args.data, args.limit)
    model = args.model or default_model_for(args.qemu)
    if model is None:
        raise UserError("--model is required (the model folder the firmware was built with)")
    with open_link(args.port, args.qemu, args.qemu_flag, args.timeout) as ser:
        dev = Device(ser, args.timeout)
        try:
            if args.qemu:   # a fresh boot prints its banner; a board printed it at its reset
                dev.read_banner()
            else:
                ser.reset_input_buffer()
            dev.command(":config")
        except ProtocolError as exc:
            print(json.dumps({"protocol_errors": [{"error": str(exc)}]}) if args.json
                  else f"protocol error: {exc}")
            return 1
        min_score, min_score_named = device_thresholds(dev.config)
        ref = Reference(model, min_score, min_score_named_milli=min_score_named)
        from ..reference.infer import check_labels
        check_labels([(it["line"], it["record"]) for it in items], ref.labels, args.data)
        if str(ref.model.max_seq_len) != dev.config.get("max_seq_len"):
            raise UserError(f"the firmware runs max_seq_len={dev.config.get('max_seq_len')} but --model "
                            f"{model} has {ref.model.max_seq_len}: pass the build's generated/model folder")
        try:
            words, slot_registry, max_names = device_registry(
                dev, ref.model.path, args.entities, Path(args.qemu).resolve().parent if args.qemu else None)
        except ProtocolError as exc:
            print(json.dumps({"protocol_errors": [{"error": str(exc)}]}) if args.json else f"protocol error: {exc}")
            return 1
        build_dir = Path(args.qemu).resolve().parent if args.qemu else None
        ref.set_registry(words, max_names, firmware_label_domains(ref.model.path, build_dir) if words else None)
        if dev.config.get("model") != ref.model.name:
            print(f"warning: the firmware runs model {dev.config.get('model')}, --model is {ref.model.name}",
                  file=sys.stderr)
        if args.dump:
            dev.command(":dump on")
        report = validate(dev, ref, items, args.dump, progress=ui.show_progress() and not args.json,
                          slot_registry=slot_registry)
    bad = bool(report["mismatches"] or report["protocol_errors"])
    if args.json:
        ui.emit_json(report)
    else:
        named = report["min_score_named"]
        named = f" ({named} with a registry name)" if named not in (None, report["min_score"]) else ""
        print(f"{report['n']} sentences, model {report['model']}, min_score {report['min_score']}{named}"
              f"{', [CLS] bytes checked' if args.dump else ''}")
        print(f"accuracy (intent = expected label): {report['accuracy']:.4f}")
        if report["slots"] is not None:
            sl = report["slots"]
            acc = "n/a" if sl["accuracy"] is None else f"{sl['accuracy']:.4f}"
            print(f"slot accuracy (name/area/floor the registry knows): {acc} ({sl['correct']} of {sl['eligible']} "
                  f"sentences; " + ", ".join(f"{k} {v['correct']}/{v['eligible']}" for k, v in sl["per_kind"].items())
                  + ")")
        print(f"answers identical to the reference: {report['matches_reference']} of {report['n']}")
        if report["mean_cycles"] is not None:
            print(f"cycles ({report['cycles_unit']}): mean {report['mean_cycles']:.0f}, max {report['max_cycles']}")
            print("mean cycles by tokens: " + ", ".join(f"{n}: {v['mean_cycles']} ({v['n']})"
                                                        for n, v in report["cycles_by_tokens"].items()))
        if report["match_cycles_per_byte"] is not None:
            print(f"registry matcher: {report['match_cycles_per_byte']:.1f} {report['cycles_unit']} per input byte")
        for m in report["mismatches"][:20]:
            print(f"MISMATCH #{m['index']} {m['text']!r}: {'; '.join(m['differences'])}")
        for p in report["protocol_errors"]:
            print(f"PROTOCOL ERROR at #{p.get('index')} {p.get('text', '')!r}: {p['error']}")
        print("FAILED" if bad else "OK: 0 mismatches, 0 protocol errors")
    return 1 if bad else 0


# the fields of an answer that are neither a name nor a slot value (docs/serial-protocol.md, "Answers")
ANSWER_FIELDS = ("intent", "score", "tokens", "cycles", "truncated", "best", "names", "match_cycles")
PROMPT = "bertl14> "


def answer_values(ans: Answer) -> dict[str, str]:
    """The names and slot values of an answer, decoded, in the device's order."""
    return {k: v for k, v in ans.fields.items() if k not in ANSWER_FIELDS} if ans.kind == "intent" else {}


def _shown_value(v: str) -> str:
    return v if v and all(c.isalnum() or c in "._-" for c in v) else repr(v)


class ConsoleOutput:
    """What the console prints for each exchange: the device's lines as they came, then its names and slot
    values decoded on an indented line when any was percent-encoded; with --json one object a line."""

    def __init__(self, as_json: bool):
        self.json = as_json

    def banner(self, banner: dict) -> None:
        if self.json:
            ui.emit_json({"banner": banner})
        else:
            print(BANNER_PREFIX + " ".join(f"{k}={v}" for k, v in banner.items()), flush=True)

    def sent(self, raw: bytes) -> None:
        if not self.json:
            print(">> " + textio.shown(raw), flush=True)

    def answer(self, ans: Answer, sent: bytes | None = None) -> None:
        values = answer_values(ans)
        if self.json:
            obj = {"sent": None if sent is None else textio.shown(sent), "line": ans.line, "kind": ans.kind,
                   "fields": ans.fields}
            if values:
                obj["values"] = values
            if ans.before:
                obj["before"] = ans.before
            if ans.cls is not None:
                obj["cls"] = ans.cls.hex()
            ui.emit_json(obj)
            return
        for line in ans.before:
            print(line)
        print(ans.line)
        if any(f"{k}={v}" not in ans.line.split() for k, v in values.items()):   # something was %-encoded
            print("   " + " ".join(f"{k}={_shown_value(v)}" for k, v in values.items()))
        if ans.cls is not None:
            print("CLS_EMB: " + ",".join(f"0x{b:02x}" for b in ans.cls))
        sys.stdout.flush()

    def unsolicited(self, line: str) -> None:
        """A line the device printed on its own (a board's banner after a reset)."""
        if self.json:
            ui.emit_json({"line": line, "kind": "banner" if line.startswith(BANNER_PREFIX) else "other"})
        else:
            print(line, flush=True)

    def problem(self, text: str) -> None:
        print(f"bertl14 console: {text}", file=sys.stderr, flush=True)


def cmd_console(args) -> int:
    out = ConsoleOutput(args.json)
    with open_link(args.port, args.qemu, args.qemu_flag, args.timeout) as ser:
        dev = Device(ser, args.timeout)
        if args.qemu:   # a fresh boot: show the banner (a board's banner went by at its reset)
            try:
                dev.read_banner()
            except ProtocolError as exc:
                out.problem(f"protocol error: {exc}")
                return 1
            out.banner(dev.banner)
        first = [t.encode("utf-8", "surrogateescape")
                 for t in (SAMPLE_LINES if args.samples else []) + (args.send or [])]
        try:
            _send_lines(dev, out, first)
            if args.send:
                return 0
            if sys.stdin.isatty():
                return _interactive(dev, out)
            # piped lines go to the device as their bytes: it answers error=invalid_utf8 where they are not UTF-8
            _send_lines(dev, out, (raw.rstrip(b"\r\n") for raw in sys.stdin.buffer))
        except ProtocolError as exc:
            out.problem(f"protocol error: {exc}")
            return 1
        return 0


def _send_lines(dev: Device, out: ConsoleOutput, lines) -> None:
    """Send each line (bytes), wait for its answer and print both."""
    for raw in lines:
        out.sent(raw)
        ans = dev.ask(raw)
        if ans.line.startswith("ok dump="):
            dev.dump = ans.line == "ok dump=on"
        out.answer(ans, raw)


def history_file() -> Path:
    """Where the console keeps the lines typed ($XDG_STATE_HOME/bertl14/console_history)."""
    import os
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "bertl14" / "console_history"


def _line_editing():
    """readline (line editing, history kept across sessions), or None where Python has no readline."""
    try:
        import readline
    except ImportError:
        return None
    path = history_file()
    try:
        readline.read_history_file(path)
    except (OSError, UnicodeDecodeError):
        pass
    readline.set_history_length(1000)

    def save():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            readline.write_history_file(path)
        except OSError:
            pass
    return save


class PromptLink:
    """The serial link under the console's prompt. A reader thread takes every line the device prints: while an
    answer is awaited (from the write of a line until `answered()`) the lines go to the Device reading it, and
    otherwise they are shown at once above the prompt (a board's banner after a reset). Device uses it as its
    `ser` (readline, write, timeout)."""

    def __init__(self, ser, show):
        import queue
        import threading
        self.ser, self.show = ser, show
        self.timeout = ser.timeout
        self.lines: queue.Queue = queue.Queue()
        self.awaiting = False
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.ser.timeout = 0.1
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        part = b""
        while not self.stop.is_set():
            try:
                raw = self.ser.readline()
            except Exception:   # the link went away: the next read reports it
                self.lines.put(b"")
                return
            part += raw
            if not part.endswith(b"\n"):
                continue
            with self.lock:
                if self.awaiting:
                    self.lines.put(part)
                else:
                    self.show(part.decode("utf-8", errors="replace").rstrip("\r\n"))
            part = b""

    def readline(self) -> bytes:
        import queue
        try:
            return self.lines.get(timeout=self.timeout)
        except queue.Empty:
            return b""

    def write(self, data: bytes) -> None:
        with self.lock:
            self.awaiting = True
        self.ser.write(data)

    def answered(self) -> None:
        """The answer was read: what else comes is the device's own."""
        with self.lock:
            self.awaiting = False
            while not self.lines.empty():
                self.show(self.lines.get().decode("utf-8", errors="replace").rstrip("\r\n"))

    def close(self) -> None:
        self.stop.set()
        self.thread.join(1)
        self.ser.timeout = self.timeout


def _interactive(dev: Device, out: ConsoleOutput) -> int:
    """A prompt with line editing and history (readline): each line typed is sent, its answer printed; what the
    device prints on its own shows above the prompt. Ctrl-D quits; Ctrl-C abandons the line being typed."""
    save = _line_editing()
    prompt = "" if out.json else PROMPT

    def show(line: str) -> None:   # above the line being typed, which is drawn again
        sys.stdout.write("\r\x1b[K")
        out.unsolicited(line)
        if prompt:
            try:
                import readline
                typed = readline.get_line_buffer()
            except ImportError:
                typed = ""
            sys.stdout.write(prompt + typed)
        sys.stdout.flush()

    link = PromptLink(dev.ser, show)
    dev.ser = link
    print("type a sentence or :help; up/down recall earlier lines; Ctrl-D quits", file=sys.stderr)
    try:
        while True:
            try:
                line = input(prompt)
            except EOFError:
                print(file=sys.stderr)
                return 0
            except KeyboardInterrupt:
                print(file=sys.stderr)
                continue
            except UnicodeDecodeError:
                out.problem("the line typed is not UTF-8 (the device would answer error=invalid_utf8): type UTF-8 "
                            "text")
                continue
            if not line.strip():
                continue
            raw = line.encode("utf-8", "surrogateescape")
            try:
                ans = dev.ask(raw)
            except ProtocolError as exc:   # the next line still works
                link.answered()
                out.problem(f"protocol error: {exc}")
                continue
            if ans.line.startswith("ok dump="):
                dev.dump = ans.line == "ok dump=on"
            out.answer(ans, raw)
            link.answered()
    finally:
        link.close()
        dev.ser = link.ser
        if save:
            save()


def register(subparsers) -> None:
    def link(p):
        g = p.add_mutually_exclusive_group(required=True)
        g.add_argument("--port", metavar="URL", help="serial port: /dev/ttyACM0, socket://127.0.0.1:PORT, ...")
        g.add_argument("--qemu", metavar="ELF", help="boot this firmware under QEMU (QEMU boards) and talk to it")
        p.add_argument("--qemu-flag", action="append", default=[], metavar="FLAG",
                       help="extra QEMU argument (repeat; e.g. --qemu-flag=-icount --qemu-flag=shift=0 "
                            "to make cycles count instructions)")
        p.add_argument("--timeout", type=ui.positive_float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                       help=f"seconds to wait for a line from the device (default {DEFAULT_TIMEOUT:.0f})")

    p = subparsers.add_parser("console", help="talk to the intent firmware over its serial port",
                              description="Sends the --samples and --send lines first, printing each answer; "
                                          "then, unless --send was given, gives a prompt when stdin is a terminal "
                                          "(line editing, and the lines of earlier sessions with the up arrow) "
                                          "and otherwise sends each stdin line. Names and slot values that the "
                                          "device percent-encodes are also printed decoded.")
    link(p)
    ui.add_output_options(p, 'one JSON object an answer: {"sent", "line", "kind", "fields", "values"} (fields and '
                             'values decoded)')
    p.add_argument("--send", action="append", metavar="TEXT", help="send this line, print the answer (repeat), exit")
    p.add_argument("--samples", action="store_true",
                   help="first send a few sample sentences (" + "; ".join(SAMPLE_LINES) + ")")
    p.set_defaults(func=cmd_console)

    p = subparsers.add_parser("validate", help="check the firmware's answers against the Python integer reference",
                              description=__doc__.split("\n\n")[2])
    link(p)
    p.add_argument("--model", help="model folder the firmware was built with (default with --qemu: "
                                   "BUILD/generated/model next to the ELF)")
    p.add_argument("--data", required=True, help="JSON lines with \"text\" and \"intent\"")
    p.add_argument("--dump", action="store_true", help="also compare the INT8 [CLS] bytes (:dump on)")
    p.add_argument("--entities", metavar="FILE",
                   help="the registry the firmware was built with (CONFIG_APP_REGISTRY_FILE: a registry YAML or a "
                        "public *_home.json); checked against the device's :entities, then slot accuracy is "
                        "reported beside intent accuracy. Without it, a QEMU build's own generated registry is used")
    ui.add_output_options(p, 'print the report as one JSON object ({"n", "accuracy", "matches_reference", '
                             '"mismatches", "protocol_errors", ...})')
    p.add_argument("--limit", type=ui.positive_int, metavar="N", help="only the first N sentences")
    p.set_defaults(func=cmd_validate)
