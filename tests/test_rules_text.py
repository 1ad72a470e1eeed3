"""Names and reasons (api.rules.text): one normal form, nothing invisible, no look-alikes; the rules a name and a reason must follow."""

from __future__ import annotations
