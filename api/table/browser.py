"""The entry points the browser's engine worker calls (``static/engine.js``).

Every function takes one JSON string and returns one JSON string, so the worker passes plain
text across the Pyodide boundary.
"""

from __future__ import annotations

import json
import sys


def hello(arg: str) -> str:
    """Which Python runs the engine (a smoke test of the worker)."""
    return json.dumps({"echo": json.loads(arg), "python": sys.version.split()[0]})
