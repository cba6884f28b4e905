"""`cli.parse`: a plainly written command line is parsed by a parser holding only its command
(building all ten is a good part of a cold start), and must mean exactly what the whole parser
makes of it: the same arguments, and for anything wrong or asked for (`--help`), the same output
and exit status."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from litmus_rules import cli

ARGVS = [
    ["check", "a.yaml"],
    ["check", "a.yaml", "b.jsonl", "--format", "jsonl", "--jobs", "2", "--explain", "full"],
    ["-q", "check", "a.yaml"],
    ["-vv", "--color", "never", "check", "a.yaml", "-o", "out.json", "--format", "json", "--by", "model"],
    ["--colour=always", "check", "-", "--rules", "rules", "--param", "x=1", "--no-traces"],
    ["check", "a.yaml", "--from", "inspect", "--run", "k=v", "--option", "o=1"],
    ["explain", "a.yaml", "--id", "e1", "--full"],
    ["lint", "rules", "--format", "json"],
    ["fmt", "--check", "rules"],
    ["test", "rules", "-x"],
    ["rules", "info"],
    ["report", "v.jsonl", "--format", "md"],
    ["import", "inspect", "log.eval", "-o", "out.jsonl"],
    ["preflight", "a.yaml", "-o", "out"],
    ["completion", "bash"],
    # not plainly written, or wrong: the whole parser reads or reports them
    ["--verb", "check", "a.yaml"],
    ["check"],
    ["check", "a.yaml", "--format", "bogus"],
    ["check", "a.yaml", "--jobs", "0"],
    ["check", "a.yaml", "--unknown"],
    ["chek", "a.yaml"],
    ["rules"],
    ["rules", "inf"],
    ["--color", "sometimes", "check", "a.yaml"],
    ["-q"],
    [],
    ["check", "--help"],
    ["rules", "info", "-h"],
    ["--help"],
    ["-h", "check"],
    ["--version"],
]


def _run(parse: object, argv: list[str]) -> tuple[str, str, object]:
    """(stdout, stderr, the Namespace or the exit status) of one parse."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result: object = parse(argv)  # type: ignore[operator]
        except SystemExit as exc:
            result = ("exit", exc.code)
    if isinstance(result, argparse.Namespace):
        result = {k: _handler(v) if k == "func" else v for k, v in vars(result).items()}
    return out.getvalue(), err.getvalue(), result


def _handler(func: object) -> object:
    """A command's handler, by name: `guarded(cmd)` makes a new wrapper each time it registers."""
    cells = getattr(func, "__closure__", None) or ()
    return (getattr(func, "__qualname__", func), [getattr(c.cell_contents, "__qualname__", None) for c in cells])


def _whole(argv: list[str]) -> argparse.Namespace:
    parser = cli.build_parser()
    args = parser.parse_args(argv)
    cli._validate(parser, args)  # noqa: SLF001 - what main did before parse() existed
    return args


@pytest.mark.parametrize("argv", ARGVS, ids=[" ".join(a) or "(none)" for a in ARGVS])
def test_parse_means_what_the_whole_parser_means(argv: list[str], tmp_path: object,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no project config around
    monkeypatch.setenv("COLUMNS", "100")  # the same help width for both
    assert _run(cli.parse, argv) == _run(_whole, argv)


@pytest.mark.parametrize("name", sorted(cli.NAMES))
def test_every_command_is_named_as_it_registers_itself(name: str) -> None:
    parser = cli._build(argparse.ArgumentParser, [cli.NAMES[name]])  # noqa: SLF001
    assert [p.prog for p in cli._commands(parser)][0] == f"litmus-rules {name}"  # noqa: SLF001
    assert set(cli.NAMES.values()) == set(cli.COMMANDS)


def test_a_plain_command_line_builds_only_its_command(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    for name, module in cli.NAMES.items():
        original = module.register
        monkeypatch.setattr(module, "register", lambda sub, _o=original, _n=name: (built.append(_n), _o(sub)))
    cli.parse(["check", "a.yaml", "--format", "jsonl"])
    assert built == ["check"]
    built.clear()
    with contextlib.redirect_stderr(io.StringIO()), pytest.raises(SystemExit):
        cli.parse(["check"])  # a usage error: reported by the whole parser
    assert built == ["check", *[n for n in cli.NAMES]]
