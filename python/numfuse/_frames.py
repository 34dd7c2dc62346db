"""The values of an expression's names: given dicts, else the caller's frame (as numexpr).

One implementation for numfuse.evaluate and numfuse.cuda.evaluate.
"""

from __future__ import annotations

import sys

# Names that are constants unless the caller defines them.
CONSTANT_NAMES = ("inf", "nan")


def lookup(names, local_dict, global_dict, depth):
    """(used names, values): each name from `local_dict`, then `global_dict`.

    A dict that is None is the frame `depth` levels above the function calling
    lookup (1: that function's caller). An undefined inf/nan is left out (the
    compiler takes it as a constant); any other undefined name is a KeyError.
    """
    if local_dict is None or global_dict is None:
        frame = sys._getframe(depth + 1)
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
                raise KeyError(name) from None
        used.append(name)
        values.append(value)
    return used, values
