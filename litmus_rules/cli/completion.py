"""`litmus-rules completion bash|zsh|fish`: a shell completion script, generated from the argparse
parser by shtab, so that it always lists the commands and options the parser has.

Install: `litmus-rules completion bash > ~/.local/share/bash-completion/completions/litmus-rules`,
`litmus-rules completion zsh > "${fpath[1]}/_litmus-rules"`, or
`litmus-rules completion fish > ~/.config/fish/completions/litmus-rules.fish`.

Why shtab over moving to click or typer: the CLI is plain argparse (one module per command, each
with a `register(sub)`), its help, errors and exit status 2 on misuse are argparse's, and the tests
drive `main(argv)`; shtab reads that parser as it is and adds one small pure-Python dependency,
where click or typer would mean rewriting every command's options for the same result.
"""

from __future__ import annotations

import argparse
from typing import Any, Iterator

SHELLS = ("bash", "zsh", "fish")
PROG = "litmus-rules"


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """The parser and every command's parser below it."""
    yield parser
    for action in parser._actions:  # noqa: SLF001 - argparse has no public view of its subparsers
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for child in dict.fromkeys(action.choices.values()):
                yield from _parsers(child)


def script(shell: str, parser: argparse.ArgumentParser | None = None) -> str:
    if parser is None:
        from litmus_rules.cli import build_parser

        parser = build_parser()
    import shtab

    _mark_files(parser)
    return str(shtab.complete(parser, shell=shell))


def _mark_files(parser: argparse.ArgumentParser) -> None:
    """Positional inputs and path options complete file names (shtab's hint)."""
    import shtab

    for p in _parsers(parser):
        for action in p._actions:  # noqa: SLF001
            if action.metavar in ("PATH", "FILE", "INPUT", "VERDICTS"):
                action.complete = shtab.FILE  # type: ignore[attr-defined]
            elif action.metavar == "OUTDIR":
                action.complete = shtab.DIRECTORY  # type: ignore[attr-defined]


def cmd_completion(args: argparse.Namespace) -> int:
    from litmus_rules.cli._terminal import emit

    emit(script(args.shell))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("completion", help="print a shell completion script (bash, zsh or fish)",
                       description="Print a completion script for your shell, generated from this command's "
                       "parser. bash: litmus-rules completion bash > ~/.local/share/bash-completion/completions/"
                       "litmus-rules; zsh: litmus-rules completion zsh > \"${fpath[1]}/_litmus-rules\"; fish: "
                       "litmus-rules completion fish > ~/.config/fish/completions/litmus-rules.fish")
    p.add_argument("shell", choices=SHELLS)
    p.set_defaults(func=cmd_completion)
