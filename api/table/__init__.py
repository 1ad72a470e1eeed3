"""The game screen as the players see it, computed from the pure engine (``api.rules``).

Pure like the engine (standard library only, plus Jinja for the screen's partial templates), so
the same code draws the board on the server and, offline, in the phone's browser (Pyodide).
"""
