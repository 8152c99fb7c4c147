"""jlink: SEGGER J-Link (a J-Link probe, or an on-board ST-LINK reflashed to J-Link OB).

    flash        JLinkExe -nogui 1 -if swd -speed auto -device DEVICE -CommanderScript BUILD/runners/jlink/flash.jlink
    debugserver  JLinkGDBServer -select usb -port 2331 -if swd -speed auto -device DEVICE -silent -singlerun -nogui
                 (attach: -nohalt)

The commander script (reset, load firmware.hex, reset, go, quit) is written into the build directory, also by
--dry-run, so the printed command runs as it is. board.yml: `runners: args: jlink: {device: <J-Link device
name>}` (and optionally `iface`, `speed`).
"""
from __future__ import annotations

from pathlib import Path

from .core import Runner


class JLink(Runner):
    name = "jlink"
    commands = frozenset({"flash", "debug", "attach", "debugserver"})
    tool = "JLinkExe"
    server = "JLinkGDBServer"
    install = "install the J-Link Software and Documentation Pack from segger.com"
    default_gdb_port = 2331
    remote = "target remote"

    def _probe_args(self) -> list[str]:
        return ["-if", str(self.cfg.args.get("iface", "swd")), "-speed", str(self.cfg.args.get("speed", "auto")),
                "-device", self.cfg.arg(self.name, "device")]

    @property
    def script(self) -> Path:
        return self.cfg.build_dir / "runners" / "jlink" / "flash.jlink"

    def before(self, command: str, dry_run: bool) -> None:
        if command == "flash":
            self.script.parent.mkdir(parents=True, exist_ok=True)
            self.script.write_text("".join(line + "\n" for line in (
                "ExitOnError 1", "r", f"loadfile {self.cfg.files['hex']}", "r", "g", "q")))

    def flash_argv(self) -> list[str]:
        return [self.tool, "-nogui", "1", *self._probe_args(), "-CommanderScript", str(self.script)]

    def server_argv(self, command: str) -> list[str]:
        argv = [self.server, "-select", "usb", "-port", str(self.gdb_port), *self._probe_args(),
                "-silent", "-singlerun", "-nogui"]
        return argv + ["-nohalt"] if command == "attach" else argv

    def gdb_commands(self, command: str) -> list[str]:
        return ["monitor halt", "monitor reset", "load", "monitor reset"] if command == "debug" else []
