"""numexpr's CVE-2023-39631 class of payloads must be refused, cleanly.

numexpr validated expressions with a regular expression and then handed
them to Python's eval; payloads that slipped past ran arbitrary code.
numfuse parses with its own C++ grammar (no eval anywhere), so these are
just malformed expressions: each must raise a clear exception, and none
may have any side effect.
"""

from __future__ import annotations

import builtins

import numpy as np
import pytest

import numfuse

PAYLOADS = [
    "__import__('os').system('echo pwned')",
    '__import__("os").system("echo pwned")',
    "(lambda: __import__('os'))()",
    "lambda: 1",
    "a.__class__",
    "a.__class__.__bases__[0].__subclasses__()",
    "().__class__.__base__.__subclasses__()",
    "a.tofile('/tmp/numfuse_pwned')",
    "a.dtype",
    "a[0]",
    "a[::-1]",
    "getattr(a, 'real')",
    "eval('1')",
    "exec('1')",
    "open('/etc/passwd')",
    "compile('1', 'x', 'eval')",
    "[x for x in (1, 2)]",
    "{1: 2}",
    "a if a else a",
    "not a",
    "a and a",
    "__builtins__",
    "globals()",
    "import os",
    "sin.__call__(a)",
    "a; a",
    "a\nimport os",
    "f'{a}'",
    "b'x' + a",  # string literals are data: alone they are the result (test below)
    "'x' * a",
    "a @ a",
    "a := 1",
    "*a",
    "a,",
]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payload_is_refused(payload):
    reached = []

    def forbidden(*args, **kwargs):
        reached.append(args)
        raise AssertionError("numfuse reached a Python code-execution builtin")

    a = np.arange(3.0)
    saved = {name: getattr(builtins, name) for name in ("eval", "exec", "compile")}
    error = None
    try:
        # Patched only around the call (pytest itself needs compile()).
        for name in saved:
            setattr(builtins, name, forbidden)
        try:
            numfuse.evaluate(payload, local_dict={"a": a}, global_dict={})
        except Exception as caught:  # noqa: BLE001 - inspected below
            error = caught
    finally:
        for name, value in saved.items():
            setattr(builtins, name, value)
    assert not reached
    assert isinstance(error, (SyntaxError, TypeError, KeyError, ValueError)), repr(error)
    assert str(error)  # a message, not an empty error
    np.testing.assert_array_equal(a, np.arange(3.0))


def test_a_string_literal_alone_is_data():
    saved = builtins.eval
    builtins.eval = None  # numfuse never calls it
    try:
        assert numfuse.evaluate("b'x'").tobytes() == b"x"
        assert numfuse.evaluate("'x'").dtype == "S1"  # ASCII str literals are bytes
    finally:
        builtins.eval = saved


def test_dunder_and_attribute_messages_are_specific():
    with pytest.raises(SyntaxError, match="__"):
        numfuse.evaluate("__import__('os')")
    with pytest.raises(SyntaxError, match="attribute"):
        numfuse.evaluate("a.dtype", local_dict={"a": np.ones(1)})
    with pytest.raises(SyntaxError, match="lambda"):
        numfuse.evaluate("lambda: 1")
    with pytest.raises(SyntaxError, match="subscript"):
        numfuse.evaluate("a[0]", local_dict={"a": np.ones(1)})


def test_real_and_imag_remain_allowed():
    z = np.array([1 + 2j, 3 - 4j])
    np.testing.assert_array_equal(numfuse.evaluate("z.real + z.imag"), z.real + z.imag)


def test_sanitize_keyword_is_accepted_and_moot():
    a = np.arange(3.0)
    np.testing.assert_array_equal(numfuse.evaluate("a + 1", sanitize=False), a + 1)
    with pytest.raises(SyntaxError):
        numfuse.evaluate("__import__('os')", sanitize=False)


def test_fuzzed_garbage_never_crashes():
    rng = np.random.default_rng(7)
    alphabet = list("ab()+-*/%<>=!&|^~.,0123456789ej_ '\"[]:;@") + ["**", "//", "sum(", "axis="]
    a = np.arange(4.0)
    b = np.arange(4.0)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet, size=rng.integers(1, 30)))
        try:
            numfuse.evaluate(text, local_dict={"a": a, "b": b, "e": a, "j": b})
        except (SyntaxError, TypeError, KeyError, ValueError, OverflowError):
            pass
