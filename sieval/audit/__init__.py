"""Evidence that a dialect does what its table claims, against a real server.

``probe`` reruns each dialect's live cases (``audit/cases/<dialect>.py``); ``parity`` runs the
same tasks through two dialects and compares every call. Both use the runner; nothing below them
imports this package.
"""
