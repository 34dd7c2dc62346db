"""The values of an expression's names: given dicts, else the caller's frame (as numexpr).

One implementation for numfuse.evaluate and numfuse.cuda.evaluate.
"""

from __future__ import annotations

import difflib
import sys

# Names that are constants unless the caller defines them.
CONSTANT_NAMES = ("inf", "nan")


class UndefinedNameError(KeyError):
    """An expression's name found nowhere: a KeyError, as numexpr raises, whose message
    says where numfuse looked and suggests a close name."""

    def __str__(self) -> str:  # KeyError's own str() would quote the whole message
        return str(self.args[0]) if self.args else ""


# Code objects whose frame does not see the enclosing function's locals (Python 3.11's
# comprehensions run in their own frame; a lambda or generator always does).
_NESTED_SCOPES = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<lambda>")


def _undefined(name, local_dict, global_dict, given, scope):
    """The error for `name`; `given`: (local_dict given, global_dict given)."""
    where = {
        (True, True): "local_dict and global_dict",
        (True, False): "local_dict and the caller's global variables",
        (False, True): "the caller's local variables and global_dict",
        (False, False): "the caller's local and global variables",
    }[given]
    from_frame = given != (True, True)
    message = f"name {name!r} is not defined: looked in {where}"
    candidates = [key for d in (local_dict, global_dict) for key in d if isinstance(key, str)]
    close = difflib.get_close_matches(name, candidates, n=1)
    if close:
        message += f"; did you mean {close[0]!r}?"
    if from_frame and scope in _NESTED_SCOPES:
        message += (
            f" (evaluate was called inside a {scope.strip('<>')}, whose frame does not"
            " see the enclosing function's variables: pass local_dict=...)"
        )
    return UndefinedNameError(message)


def lookup(names, local_dict, global_dict, depth):
    """(used names, values): each name from `local_dict`, then `global_dict`.

    A dict that is None is the frame `depth` levels above the function calling
    lookup (1: that function's caller). An undefined inf/nan is left out (the
    compiler takes it as a constant); any other undefined name is an
    UndefinedNameError (a KeyError) naming where it looked and a close name.
    """
    given = (local_dict is not None, global_dict is not None)
    from_frame = given != (True, True)
    scope = ""
    if from_frame:
        frame = sys._getframe(depth + 1)
        scope = frame.f_code.co_name
        if local_dict is None:
            local_dict = frame.f_locals
        if global_dict is None:
            global_dict = frame.f_globals
        del frame
    used = []
    values = []
    for name in names:
        try:
            value = local_dict[name]
        except KeyError:
            try:
                value = global_dict[name]
            except KeyError:
                if name in CONSTANT_NAMES:
                    continue
                raise _undefined(name, local_dict, global_dict, given, scope) from None
        used.append(name)
        values.append(value)
    return used, values
