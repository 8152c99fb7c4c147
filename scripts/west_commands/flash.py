"""`west flash`: write a built firmware to the board through a debug probe.

    west flash [-d BUILD_DIR] [-r openocd|pyocd|stlink] [--dry-run]

Runners (nucleo_h743zi, the ST-LINK on the NUCLEO board):
  openocd  openocd -f board/st_nucleo_h743zi.cfg -c "program firmware.elf verify reset exit"
  pyocd    pyocd flash --target stm32h743zitx firmware.hex
  stlink   st-flash --reset write firmware.bin 0x08000000
"""
from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path

from west.commands import WestCommand

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bertl14_west import BuildError, run_command  # noqa: E402
from bertl14_west import tools  # noqa: E402

RUNNERS = ("openocd", "pyocd", "stlink")

# Output of each tool when no probe is attached (matched case-insensitively).
NO_PROBE_HINTS = (
    "open failed", "no device found", "unable to find", "couldn't find", "no connected debug probes",
    "no debug probe", "no st-link", "failed to connect", "not found any", "error: libusb",
    "couldn't open", "unable to open", "found 0 stlink",
)


def runner_command(runner: str, info: dict) -> list[str]:
    files = info["files"]
    args = info.get("runner_args") or {}
    if runner == "openocd":
        cfg = args.get("openocd_config", "board/st_nucleo_h743zi.cfg")
        return ["openocd", "-f", cfg, "-c", f"program {files['elf']} verify reset exit"]
    if runner == "pyocd":
        return ["pyocd", "flash", "--target", args.get("pyocd_target", "stm32h743zitx"), files["hex"]]
    if runner == "stlink":
        return ["st-flash", "--reset", "write", files["bin"], f"0x{int(args.get('flash_address', 0x08000000)):08x}"]
    raise BuildError(f"unknown runner {runner}; runners: {', '.join(RUNNERS)}")


class Flash(WestCommand):
    def __init__(self):
        super().__init__("flash", "flash a built firmware to the board", __doc__)

    def do_add_parser(self, parser_adder):
        parser = parser_adder.add_parser(self.name, help=self.help, description=self.description,
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("-d", "--build-dir", default="build", help="build directory (default: build)")
        parser.add_argument("-r", "--runner", choices=RUNNERS, help="flash tool (default: the board's first, openocd)")
        parser.add_argument("--dry-run", action="store_true", help="print the command and do nothing")
        return parser

    def do_run(self, args, unknown):
        run_command(self, self._flash, args)

    def _flash(self, args) -> int:
        build_dir = Path(args.build_dir).resolve()
        try:
            info = json.loads((build_dir / "bertl14_build.json").read_text())
        except (OSError, ValueError):
            raise BuildError(f"{build_dir} is not a west build directory: build first with "
                             f"`west build -b BOARD -d {args.build_dir}`") from None
        runners = info.get("runners") or []
        if not runners:
            hint = "run it with `west build -d %s -t run`" % args.build_dir if info.get("qemu_machine") else "nothing to flash"
            raise BuildError(f"board {info['board']} has no flash runner: {hint}")
        runner = args.runner or runners[0]
        if runner not in runners:
            raise BuildError(f"board {info['board']} does not support runner {runner}; runners: {', '.join(runners)}")
        cmd = runner_command(runner, info)
        for f in info["files"].values():
            if f in cmd[-1] or f in cmd:
                if not Path(f).is_file():
                    raise BuildError(f"{f} missing: build first with `west build -d {args.build_dir}`")
        if args.dry_run:
            print(shlex.join(cmd))
            return 0
        tools.require(cmd[0], f"the {runner} runner")
        self.banner(f"west flash: {runner}")
        print(shlex.join(cmd), flush=True)
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        sys.stdout.write(proc.stdout)
        if proc.returncode != 0:
            text = proc.stdout.lower()
            if any(h in text for h in NO_PROBE_HINTS):
                raise BuildError(f"no debug probe found by {cmd[0]}: connect the board's ST-LINK USB port "
                                 "(and check its udev permissions), then retry")
            raise BuildError(f"{cmd[0]} failed (exit {proc.returncode}); see its output above")
        return 0
