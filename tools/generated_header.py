"""What every tools/gen_*.py emitter shares: read its fit data, write its header.

A header is rewritten only when its text changes (so make does not rebuild for nothing);
`--stdout` prints it instead.
"""

from __future__ import annotations

import json
import pathlib
import sys
from typing import Callable


def main(data: pathlib.Path, header: pathlib.Path, render: Callable[[dict], str]) -> None:
    text = render(json.loads(data.read_text()))
    if "--stdout" in sys.argv[1:]:
        sys.stdout.write(text)
        return
    header.parent.mkdir(parents=True, exist_ok=True)
    if not header.exists() or header.read_text() != text:
        header.write_text(text)
