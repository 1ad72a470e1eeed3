"""Cross-cutting HTTP concerns of the API and the pages: security headers (more to come)."""
