"""One internal failure type carrying a code: no Python class name reaches a user, and every code
that names a failure says which (L206 its own entry, L600 and L701 no longer the same code)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules import load_rules_text
from litmus_rules.authoring.ruletest import TestDefinitionError, run_tests
from litmus_rules.diagnostics import code_for, lookup
from litmus_rules.engine import ruleset as ruleset_module
from litmus_rules.errors import EvaluationError, FactsError, LitmusFault, RuleCheckError, describe_fault
from litmus_rules.io import load

HEAD = 'ruleset faults version "1"\n'
EPISODE = {"litmus": "episode/1", "id": "e", "context": {}, "detector": {"channel": "dispatch"}}
INTERNAL = code_for("internal-error")
UNEXPECTED = [RecursionError("maximum recursion depth exceeded"), MemoryError(), KeyError("surprise"),
              AssertionError(), ZeroDivisionError("division by zero"), UnicodeError("cannot encode")]


@pytest.mark.parametrize("exc", UNEXPECTED, ids=lambda e: type(e).__name__)
def test_an_unexpected_exception_is_an_internal_error_whose_class_is_only_detail(exc: BaseException) -> None:
    fault = LitmusFault.of(exc)
    assert fault.code == INTERNAL and fault.detail == type(exc).__name__
    assert fault.message.startswith("internal error: ") and type(exc).__name__ not in fault.message
    assert fault.inline() == f"error[{INTERNAL}]: {fault.message}"
    assert type(exc).__name__ not in describe_fault(exc)


def test_the_limits_an_exception_stands_for_are_named_in_words() -> None:
    assert "recursion limit" in describe_fault(RecursionError("deep"))
    assert "out of memory" in describe_fault(MemoryError())
    assert describe_fault(KeyError("surprise")) == "a bug in the checker: 'surprise'"
    assert describe_fault(AssertionError()) == "a bug in the checker"


@pytest.mark.parametrize("exc", [EvaluationError("a signal must be a mapping"), FactsError("bad", code="L302")],
                         ids=lambda e: type(e).__name__)
def test_the_librarys_own_error_keeps_its_code_and_message(exc: Any) -> None:
    fault = LitmusFault.of(exc)
    assert (fault.code, fault.message, fault.detail) == (exc.code, exc.message, None)
    assert LitmusFault.of(fault) is fault


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([KeyError, ValueError, TypeError, IndexError, RuntimeError, OSError]), st.text(max_size=300))
def test_no_exception_text_makes_a_fault_message_name_its_class(cls: type[Exception], text: str) -> None:
    message = LitmusFault.of(cls(text.replace(cls.__name__, ""))).message
    assert cls.__name__ not in message and "\n" not in message
    assert len(message) <= len("internal error: a bug in the checker: ") + 200 + 2  # (KeyError quotes its text)


def test_a_fault_outside_any_built_in_fails_its_rule_with_a_coded_message(monkeypatch: pytest.MonkeyPatch) -> None:
    def truth(*args: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(ruleset_module, "truth", truth)
    rules = load_rules_text(HEAD + "rule r reject when extra.x == 1")
    (reason,) = rules.evaluate({**EPISODE, "extra": {"x": 1}}, validate=False).reasons
    assert reason.kind == "evaluation_error"
    assert reason.message == (f"could not evaluate: error[{INTERNAL}]: internal error: "
                              "nested deeper than Python's recursion limit (e.g. a long chain of `let`s)")


@pytest.mark.parametrize(("exc", "words"), [(RecursionError(), "nests too deeply"), (MemoryError(), "needs too much memory")])
def test_an_input_too_deep_or_too_large_to_read_is_a_limit_in_words(exc: BaseException, words: str) -> None:
    def docs() -> Iterator[Any]:
        raise exc
        yield  # pragma: no cover

    (item,) = list(load._guarded("in.yaml", docs()))
    assert item.error is not None and item.error.code == load.LIMIT
    assert item.error.message == f"the input {words} to be read"


@settings(max_examples=30, deadline=None)
@given(st.from_regex(r"zq_[a-z0-9_]{0,12}", fullmatch=True))  # (a prefix no fact, let or keyword has)
def test_an_unbound_placeholder_has_its_own_entry_and_the_message_it_always_had(name: str) -> None:
    with pytest.raises(RuleCheckError) as info:
        load_rules_text(HEAD + f'rule r "d" cite "c" reject when episode.dispatch == [] because "{{{name}}}"\n')
    (d,) = info.value.diagnostics
    assert d.code == code_for("unbound-placeholder") == "L206"
    # the text it had when it was made by `str.replace` on the L201 message
    assert d.message == f"unknown name `{name}`".replace("unknown name", "unbound name") + " in message"
    assert d.severity == "error" and d.help == "a message can name the rule's quantifier variables, lets, params and facts"


def test_a_broken_rule_test_file_has_its_own_code_not_the_evaluation_errors(tmp_path: Path) -> None:
    (tmp_path / "demo_test.yaml").write_text("cases: [unclosed\n", encoding="utf-8")
    run = run_tests([tmp_path])
    (error,) = run.errors
    assert isinstance(error, TestDefinitionError)
    assert error.code == code_for("bad-test-file") == "L701"
    assert error.code != EvaluationError.code == "L600"


def test_a_bare_library_error_without_a_catalogued_code_is_an_internal_fault() -> None:
    from litmus_rules.errors import LitmusError

    fault = LitmusFault.of(LitmusError("something went wrong"))
    assert fault.inline() == f"error[{INTERNAL}]: something went wrong"
