"""The `bertl14` command line as a whole: every command has --json and -q/--quiet and help on every option,
`bertl14 --version` prints the package's version, the top-level help speaks to users, and --json prints one
JSON object a line."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from bertl14_tools import __version__
from bertl14_tools.cli import build_parser, main

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "models" / "intent-en"


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def run_cli(*args, stdin: bytes | None = None, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bertl14_tools.cli", *map(str, args)], input=stdin,
                          capture_output=True, cwd=cwd or REPO, timeout=300)


def test_every_command_is_listed():
    assert set(subcommands()) == {"convert", "tokenize", "embed", "predict", "eval", "check-bitexact", "dataset",
                                  "train", "report", "console", "validate", "bench"}


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_command_takes_json_and_quiet(name):
    p = subcommands()[name]
    options = {s: a for a in p._actions for s in a.option_strings}
    for opt in ("--json", "-q", "--quiet"):
        assert opt in options, f"bertl14 {name} has no {opt}"
    assert options["-q"] is options["--quiet"]
    # parsed: the required options of the command with placeholder values, then --json -q
    required = [a for a in p._actions if a.required and a.option_strings]
    required += [g._group_actions[0] for g in p._mutually_exclusive_groups if g.required]
    argv = [name]
    for a in required:
        argv += [a.option_strings[0], a.choices[0] if a.choices else "x"]
    args = build_parser().parse_args(argv + ["--json", "-q"])
    assert args.json is True and args.quiet is True


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_option_has_help(name):
    p = subcommands()[name]
    missing = [a.option_strings[0] if a.option_strings else a.dest for a in p._actions
               if not isinstance(a, argparse._HelpAction) and a.help != argparse.SUPPRESS
               and not (a.help or "").strip()]
    assert not missing, f"bertl14 {name}: options without help: {missing}"
    cited = [a.option_strings[0] for a in p._actions
             if a.help and ("issue" in a.help.lower() or "docs/" in a.help)]
    assert not cited, f"bertl14 {name}: help citing a document instead of saying what it does: {cited}"


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out == f"bertl14 {__version__}"
    assert __version__ == metadata.version("bertl14")   # one source: pyproject takes it from the package


def test_top_level_help_is_for_users():
    proc = run_cli("--help")
    assert proc.returncode == 0
    text = proc.stdout.decode()
    assert text.startswith("usage: bertl14")
    assert "microcontroller" in text and "--json" in text and "--quiet" in text and "BERTL14_DEBUG" in text
    for name in subcommands():
        assert name in text
    assert "register(" not in text and "module" not in text   # no note to contributors


def test_json_is_one_object_a_line_and_quiet_silences_progress(tmp_path):
    """predict, tokenize, embed and eval print one JSON object a line; with -q nothing on stderr."""
    data = tmp_path / "d.jsonl"
    data.write_text('{"text": "turn on the light", "intent": "HassTurnOn"}\n'
                    '{"text": "what time is it", "intent": "HassGetCurrentTime"}\n')
    for argv, lines in ((["predict", "--model", MODEL, "turn on the light", "set a timer for 5 minutes"], 2),
                        (["tokenize", "--model", MODEL, "turn on the light"], 1),
                        (["embed", "--model", MODEL, "turn on the light"], 1),
                        (["eval", "--model", MODEL, "--data", data], 1)):
        proc = run_cli(*argv, "--json", "-q")
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout.decode().splitlines()
        assert len(out) == lines, out
        assert all(isinstance(json.loads(line), dict) for line in out)
        assert proc.stderr == b"", proc.stderr


def test_list_options_take_commas_and_spaces():
    parse = build_parser().parse_args
    base = ["report", "--model", "m", "--data", "d", "--out", "o"]
    assert parse(base + ["--seq-lens", "32,16", "64"]).seq_lens == [16, 32, 64]
    assert parse(base + ["--seq-lens", "16", "32"]).seq_lens == [16, 32]
    assert parse(["bench", "--seq-lens", "16,32"]).seq_lens == [16, 32]
    assert parse(["bench", "--seq-lens", "16", "32,64"]).seq_lens == [16, 32, 64]
