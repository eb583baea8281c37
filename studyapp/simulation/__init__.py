"""Simulated participants: bots that walk the pages, the load generator and its verifier.

Kept apart from `participation/` (the pages real participants see) because none of it
runs in a participant's request; it drives tests, pilots and the load benchmark.
"""
