"""Schocken scorekeeper: server side. Importing api.rules must not import Flask."""
