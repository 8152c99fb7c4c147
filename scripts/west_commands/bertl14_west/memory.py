"""Memory summary of a firmware ELF against the board's memory table (board.yml), and symbol reports."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from . import BuildError

# objdump -h:  Idx Name Size VMA LMA File-off Algn   (flags on the next line)
_SECTION = re.compile(r"^\s*\d+\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+[0-9a-f]+\s+\S+\s*$")


def elf_sections(objdump: str, elf: Path) -> list[dict]:
    out = subprocess.run([objdump, "-h", str(elf)], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    sections = []
    for i, line in enumerate(lines):
        m = _SECTION.match(line)
        if m and i + 1 < len(lines):
            flags = {f.strip() for f in lines[i + 1].split(",")}
            sections.append({"name": m.group(1), "size": int(m.group(2), 16), "vma": int(m.group(3), 16),
                             "lma": int(m.group(4), 16), "alloc": "ALLOC" in flags, "load": "LOAD" in flags})
    return sections


def memory_usage(sections: list[dict], regions: list[dict]) -> list[dict]:
    """Bytes used per region: flash counts what is loaded into it (code, constants, .data images);
    RAM regions count every allocated section that lives there (data, bss, stacks, heaps, buffers)."""
    usage = []
    for r in regions:
        lo, hi = r["origin"], r["origin"] + r["size"]
        used = 0
        for s in sections:
            if not s["alloc"] or s["size"] == 0:
                continue
            if r.get("kind") == "flash":
                if s["load"] and lo <= s["lma"] < hi:
                    used += s["size"]
            elif lo <= s["vma"] < hi:
                used += s["size"]
        usage.append({"name": r["name"], "kind": r.get("kind", "ram"), "used": used, "size": r["size"]})
    return usage


def format_usage(usage: list[dict]) -> str:
    rows = ["Memory region         Used Size  Region Size  %age Used"]
    for u in usage:
        pct = 100.0 * u["used"] / u["size"] if u["size"] else 0.0
        rows.append(f"{u['name'] + ':':>16} {human_size(u['used']):>12} {human_size(u['size']):>12} {pct:>9.2f}%")
    return "\n".join(rows)


def human_size(n: int) -> str:
    if n >= 1024 * 1024 and n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)} MB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KB"
    return f"{n} B"


def symbol_report(nm: str, elf: Path, kind: str, count: int = 30) -> str:
    """Largest symbols in ROM (code, constants) or RAM (data, bss), from `nm --size-sort`."""
    try:
        out = subprocess.run([nm, "--size-sort", "--reverse-sort", "-S", "-C", str(elf)],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise BuildError(f"{nm} failed on {elf}: {e}") from None
    types = set("tTrRwWvV") if kind == "rom" else set("dDbBgGsS")
    if kind == "rom":
        types |= set("dD")  # initialised data also occupies flash (its load image)
    rows, total = [], 0
    for line in out.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and parts[2] in types:
            size = int(parts[1], 16)
            total += size
            if len(rows) < count:
                rows.append(f"{size:>10}  {parts[2]}  {parts[3]}")
    title = "ROM" if kind == "rom" else "RAM"
    head = [f"{title} report: largest symbols of {elf.name} (bytes, nm type, name)"]
    return "\n".join(head + rows + [f"{total:>10}  total of all {title} symbols"])
