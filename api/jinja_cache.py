"""Compiled templates shared by every process: Jinja's own bytecode cache on the file system.

Jinja compiles a template to Python the first time an environment renders it, and a process
(a server worker, a test's app) has its own environments: compiling the dashboard's year page
took about 60 ms of its first visit in every new worker, and each app of the form compiled its
pages anew. :func:`compiled_templates` gives an environment Jinja's
:class:`~jinja2.FileSystemBytecodeCache` in the user's private temporary folder (made by Jinja,
mode 0700, its owner checked), so a template is compiled once per version of its text and
loaded by every later process. A cache entry is keyed by the template's name and file and
checked against its source, so an edited template is compiled again; ``kind`` keeps the
entries of environments with different options apart.

The cache only saves time: without a safe temporary folder an environment has none, and an
entry that cannot be written (a full disk, the folder removed by a clean-up) is skipped.
"""

from __future__ import annotations

from jinja2 import FileSystemBytecodeCache
from jinja2.bccache import Bucket


class _Skipping(FileSystemBytecodeCache):
    """Jinja's cache, except that a failed write leaves the template compiled in memory only."""

    def dump_bytecode(self, bucket: Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass  # rendering goes on; the next process compiles the template again


def compiled_templates(kind: str) -> FileSystemBytecodeCache | None:
    """A bytecode cache for the environments of one ``kind`` (``"web"``, ``"dashboard"``)."""
    try:
        return _Skipping(pattern=f"schocken-{kind}-%s.cache")
    except (OSError, RuntimeError):  # no safe temporary folder: compile in memory, as before
        return None
