"""``python -m api.cli …`` is ``schocken …``."""

from . import main

main(prog_name="schocken")
