"""Build-time memory budget of the intent firmware (run by app/CMakeLists.txt after linking).

    python memory_budget.py ELF --objdump OBJDUMP --flash-budget BYTES --ram-budget BYTES --out JSON

Flash = every section loaded into the image (vectors, code, constants and the model's weights and
vocabulary, the .data initialisers). Static RAM = every allocated section that lives in RAM: .data,
.bss (the FreeRTOS heap, from which task stacks come, is in .bss), .dtcmram (the bertl14 work
buffer) and .stack (the main stack), over all RAM regions. A budget of 0 is not checked.
Prints the figures, writes them to JSON and, over budget, deletes the ELF and exits 1 so the build
fails (and is redone next time).
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "west_commands"))
from bertl14_west.memory import elf_sections  # noqa: E402


def usage(sections: list[dict]) -> dict:
    flash = {s["name"]: s["size"] for s in sections if s["alloc"] and s["load"] and s["size"]}
    ram = {s["name"]: s["size"] for s in sections
           if s["alloc"] and s["size"] and (not s["load"] or s["vma"] != s["lma"])}
    return {"flash": sum(flash.values()), "ram": sum(ram.values()), "flash_sections": flash, "ram_sections": ram}


_MAP_INPUT = re.compile(r"^ (\.\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")


def registry_cost(map_file: Path) -> dict | None:
    """Flash of the registry (docs/registry.md) from the linker map: bytes of the input sections linked from the generated
    table (generated/registry/bertl14_registry.c) and from the matcher library (libbertl14_registry.a).
    None when neither is linked (CONFIG_APP_REGISTRY_FILE empty)."""
    try:
        text = map_file.read_text(errors="replace")
    except OSError:
        return None
    text = text.split("Linker script and memory map", 1)[-1]   # not the discarded sections before it
    table = code = 0
    pending = None
    for line in text.splitlines():
        if re.match(r"^ \.\S+$", line):          # a long section name: its address/size/file on the next line
            pending = line.strip()
            continue
        m = _MAP_INPUT.match(line)
        if m and (m.group(1) or pending) and int(m.group(2), 16):   # address 0: not placed
            name, size, src = m.group(1) or pending, int(m.group(3), 16), m.group(4)
            if name.startswith((".text", ".rodata", ".data")):
                if "generated/registry/bertl14_registry.c" in src:
                    table += size
                elif "libbertl14_registry.a" in src:
                    code += size
        pending = None
    return {"table": table, "code": code} if table or code else None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("elf", type=Path)
    p.add_argument("--objdump", default="arm-none-eabi-objdump")
    p.add_argument("--flash-budget", type=int, default=0)
    p.add_argument("--ram-budget", type=int, default=0)
    p.add_argument("--board", default="")
    p.add_argument("--out", type=Path)
    p.add_argument("--map", type=Path, help="linker map: the registry's flash (table, matcher code) is printed")
    a = p.parse_args(argv)
    try:
        u = usage(elf_sections(a.objdump, a.elf))
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"memory budget: cannot read {a.elf} with {a.objdump}: {exc}", file=sys.stderr)
        return 1
    u.update(flash_budget=a.flash_budget, ram_budget=a.ram_budget, board=a.board,
             registry=registry_cost(a.map) if a.map else None)

    def line(what, used, budget):
        if not budget:
            return f"  {what:<11} {used:>9,} B (no budget set)"
        return f"  {what:<11} {used:>9,} B of {budget:>9,} B budget ({100.0 * used / budget:5.1f}%)"

    parts = ", ".join(f"{k} {v:,}" for k, v in u["ram_sections"].items())
    print(f"memory budget ({a.board or a.elf.name}):")
    print(line("flash", u["flash"], a.flash_budget))
    print(line("static RAM", u["ram"], a.ram_budget) + f"  [{parts}]")
    if a.map:
        r = u["registry"]
        print(f"  {'registry':<11} {r['table'] + r['code']:>9,} B of the flash (table {r['table']:,} B, matcher code "
              f"{r['code']:,} B)" if r else f"  {'registry':<11} {0:>9} B (none linked)")
    over = []
    if a.flash_budget and u["flash"] > a.flash_budget:
        over.append(f"flash {u['flash']:,} B > {a.flash_budget:,} B (CONFIG_APP_FLASH_BUDGET): prune heads "
                    "(CONFIG_BERTL14_PRUNE_HEADS), use INT4 embeddings or a smaller model")
    if a.ram_budget and u["ram"] > a.ram_budget:
        over.append(f"static RAM {u['ram']:,} B > {a.ram_budget:,} B (CONFIG_APP_RAM_BUDGET): lower "
                    "CONFIG_BERTL14_MAX_SEQ_LEN, CONFIG_APP_FREERTOS_HEAP_SIZE, CONFIG_APP_RX_BUFFER or the stacks")
    u["ok"] = not over
    if a.out:
        a.out.write_text(json.dumps(u, indent=2) + "\n")
    if over:
        for o in over:
            print(f"error: memory budget exceeded: {o}", file=sys.stderr)
        for ext in (".elf", ".bin", ".hex"):   # so the next build links (and checks) again
            a.elf.with_suffix(ext).unlink(missing_ok=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
