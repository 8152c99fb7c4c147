"""Kconfig for a build: merge the fragments, treat every kconfiglib warning as an error, write
<build>/.config and <build>/generated/autoconf.h.

Merge order (as in Zephyr): Kconfig defaults < boards/.../<board>_defconfig < app/prj.conf
< EXTRA_CONF_FILE fragments < -DCONFIG_X=... given after `--`.
The merge is redone only when one of those inputs changed; otherwise the existing .config is kept,
so changes made with `-t menuconfig` (or kconfiglib's setconfig) survive until an input changes.
"""
from __future__ import annotations

import hashlib
import os
import re
from contextlib import contextmanager
from pathlib import Path

import kconfiglib

from . import REPO_ROOT, BuildError
from .boards import Board

ROOT_KCONFIG = REPO_ROOT / "Kconfig"
CLI_SOURCE = "the command line"


def kconfig_env(board: Board) -> dict[str, str]:
    """Environment the Kconfig tree needs (also for menuconfig/guiconfig/setconfig)."""
    return {"BOARD": board.name, "BOARD_DIR": str(board.dir), "srctree": str(REPO_ROOT)}


@contextmanager
def _environment(extra: dict[str, str]):
    saved = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def load_tree(board: Board) -> kconfiglib.Kconfig:
    with _environment(kconfig_env(board)):
        try:
            kconf = kconfiglib.Kconfig(str(ROOT_KCONFIG), warn_to_stderr=False, suppress_traceback=True)
        except kconfiglib.KconfigError as e:
            raise BuildError("Kconfig: " + str(e).strip().splitlines()[0]) from None
        kconf.warn_assign_undef = True      # an unknown CONFIG_ symbol is an error
        kconf.warn_assign_override = False  # later fragments override earlier ones: that is the merge
        kconf.warn_assign_redun = False
        return kconf


def parse_cli_assignment(text: str) -> tuple[str, str]:
    """'CONFIG_X=value' (from -DCONFIG_X=value) -> ('X', 'value')."""
    name, _, value = text.partition("=")
    return name[len("CONFIG_"):], value


def _fragment_for_cli(kconf: kconfiglib.Kconfig, assignments: list[tuple[str, str]]) -> str:
    lines = []
    for name, value in assignments:
        sym = kconf.syms.get(name)
        if sym is not None and sym.orig_type == kconfiglib.STRING and not value.startswith('"'):
            value = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        lines.append(f"CONFIG_{name}={value}")
    return "\n".join(lines) + "\n"


def _digest(paths: list[Path], cli_text: str) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(str(p).encode() + b"\0" + p.read_bytes() + b"\0")
    h.update(cli_text.encode())
    return h.hexdigest()


def _located(sym: kconfiglib.Symbol) -> str:
    if sym.nodes:
        node = sym.nodes[0]
        return f"{_relative(node.filename)}:{node.linenr}"
    return "?"


def _where_set(name: str, fragments: list[Path], cli_file: Path) -> str:
    """Where CONFIG_<name> was last assigned: "the command line" or "FILE:LINE" (the merge order's last one)."""
    where = "the configuration"
    for f in [*fragments, cli_file]:
        if not f.is_file():
            continue
        for n, line in enumerate(f.read_text().splitlines(), 1):
            if re.match(rf"\s*CONFIG_{name}=", line):
                where = CLI_SOURCE if f == cli_file else f"{_relative(f)}:{n}"
    return where


def _relative(path) -> str:
    try:
        return str(Path(path).resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def _assignment_error(kconf: kconfiglib.Kconfig, text: str, fragments: list[Path], cli_file: Path) -> str | None:
    """One line for a value kconfiglib ignores (it would go on with the default): the value, where it was set, what
    the symbol takes."""
    m = (re.search(r"the value '([^']*)' is invalid for (\w+) .*which has type (\w+)", text)
         or re.search(r"'([^']*)' is not a valid value for the (\w+) symbol (\w+)", text))
    if m:
        value, name, kind = (m.group(1), m.group(2), m.group(3)) if "invalid for" in m.group(0) \
            else (m.group(1), m.group(3), m.group(2))
        sym = kconf.syms.get(name)
        what = {"int": "an integer", "hex": "a hex number (0x...)", "bool": "y or n", "tristate": "y, m or n"}
        allowed = what.get(kind, f"a {kind} value")
        if sym is not None and kind in ("int", "hex"):
            low_high = _active_range(sym, 16 if kind == "hex" else 10)
            if low_high:
                allowed += f" in {low_high[0]}..{low_high[1]}"
        place = _where_set(name, fragments, cli_file)
        return (f"CONFIG_{name}={value} is not a valid {kind} value (from {place}; "
                f"{_located(sym) if sym is not None else '?'}): give {allowed}")
    m = re.search(r"malformed string literal in assignment to (\w+)", text)
    if m:
        return (f"CONFIG_{m.group(1)}: malformed string (from {_where_set(m.group(1), fragments, cli_file)}): "
                f'quote it, e.g. CONFIG_{m.group(1)}="value"')
    return None


def _check(kconf: kconfiglib.Kconfig, cli_file: Path, fragments: list[Path] = ()) -> None:
    """Every kconfiglib warning is an error; so is a value that did not stick (range, dependencies)."""
    for w in kconf.warnings:
        text = re.sub(re.escape(str(cli_file)) + r":\d+", CLI_SOURCE, w).replace(str(REPO_ROOT) + os.sep, "")
        m = re.search(r"attempt to assign the value '([^']*)' to the undefined symbol (\w+)", text)
        if m:
            where = text.split(": warning:")[0]
            raise BuildError(f"unknown Kconfig symbol CONFIG_{m.group(2)} (set to {m.group(1)!r} in {where}); "
                             "see `west build -t menuconfig` for the existing symbols")
        message = _assignment_error(kconf, text, list(fragments), cli_file)
        if message:
            raise BuildError(message)
        raise BuildError("Kconfig: " + " ".join(text.replace("warning: ", "").split()))

    for sym in kconf.unique_defined_syms:
        user = sym.user_value
        if user is None:
            continue
        if sym.orig_type in (kconfiglib.INT, kconfiglib.HEX):
            base = 16 if sym.orig_type == kconfiglib.HEX else 10
            low_high = _active_range(sym, base)
            try:
                number = int(user, base)
            except ValueError:
                raise BuildError(f"CONFIG_{sym.name}={user} is not a valid "
                                 f"{'hex' if base == 16 else 'integer'} value ({_located(sym)})") from None
            if low_high and not low_high[0] <= number <= low_high[1]:
                raise BuildError(f"CONFIG_{sym.name}={user} is out of range: allowed "
                                 f"{low_high[0]}..{low_high[1]} ({_located(sym)})")
        if sym.choice is not None:
            continue  # judged through the choice below
        wanted = kconfiglib.TRI_TO_STR[user] if sym.orig_type in (kconfiglib.BOOL, kconfiglib.TRISTATE) else user
        if sym.str_value != wanted and sym.visibility:
            raise BuildError(f"CONFIG_{sym.name}={wanted} did not take effect (got {sym.str_value or 'n'}; "
                             f"{_located(sym)})")
        if sym.str_value != wanted and not sym.visibility:
            deps = kconfiglib.expr_str(sym.direct_dep)
            why = f"it depends on {deps}" if deps not in ("y", "") else "it cannot be set by the user"
            raise BuildError(f"CONFIG_{sym.name}={wanted} cannot be set: {why} ({_located(sym)})")

    for choice in kconf.unique_choices:
        wanted = choice.user_selection
        if wanted is not None and choice.selection is not wanted:
            deps = re.sub(r"\s*&&\s*<choice \w+>", "", kconfiglib.expr_str(wanted.direct_dep))
            raise BuildError(f"CONFIG_{wanted.name}=y cannot be set: it depends on {deps} "
                             f"(not met for this board; {_located(wanted)})")


def _active_range(sym: kconfiglib.Symbol, base: int):
    for low, high, cond in sym.ranges:
        if kconfiglib.expr_value(cond):
            return int(low.str_value, base), int(high.str_value, base)
    return None


def write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def configure(board: Board, build_dir: Path, source_dir: Path, extra_conf: list[Path],
              cli: list[tuple[str, str]]) -> dict[str, str]:
    """Run Kconfig for the build; returns {symbol name: value} of the resulting configuration."""
    generated = build_dir / "generated"
    generated.mkdir(parents=True, exist_ok=True)
    kconf = load_tree(board)

    fragments = [p for p in [board.defconfig, source_dir / "prj.conf"] if p.is_file()]
    for p in extra_conf:
        if not p.is_file():
            raise BuildError(f"EXTRA_CONF_FILE {p} not found")
        fragments.append(p)
    cli_file = generated / "cli.conf"
    cli_text = _fragment_for_cli(kconf, cli)
    digest = _digest(fragments, cli_text)
    dot_config = build_dir / ".config"
    digest_file = generated / "kconfig_inputs.sha256"

    with _environment(kconfig_env(board)):
        kconf.warnings.clear()
        if dot_config.is_file() and digest_file.is_file() and digest_file.read_text().strip() == digest:
            kconf.load_config(str(dot_config), replace=True)
        else:
            kconf.unset_values()
            for i, frag in enumerate(fragments):
                kconf.load_config(str(frag), replace=(i == 0))
            cli_file.write_text(cli_text)
            kconf.load_config(str(cli_file), replace=False)
        _check(kconf, cli_file, fragments)

        tmp = generated / ".config.tmp"
        kconf.write_config(str(tmp), header="# Generated by west build (bertl14 Kconfig); edit with `west build -t menuconfig`\n")
        new = tmp.read_text()
        tmp.unlink()
        write_if_changed(dot_config, new)
        tmp_h = generated / "autoconf.h.tmp"
        kconf.write_autoconf(str(tmp_h), header="/* Generated by west build from .config; do not edit. */\n")
        write_if_changed(generated / "autoconf.h", tmp_h.read_text())
        tmp_h.unlink()
    digest_file.write_text(digest + "\n")
    return {s.name: s.str_value for s in kconf.unique_defined_syms}


def read_dot_config(path: Path) -> dict[str, str]:
    """Values of a .config (strings unquoted; 'n' for '# CONFIG_X is not set')."""
    values = {}
    for line in path.read_text().splitlines():
        m = re.match(r"CONFIG_(\w+)=(.*)", line)
        if m:
            v = m.group(2)
            values[m.group(1)] = v[1:-1].replace('\\"', '"').replace("\\\\", "\\") if v.startswith('"') else v
        m = re.match(r"# CONFIG_(\w+) is not set", line)
        if m:
            values[m.group(1)] = "n"
    return values
