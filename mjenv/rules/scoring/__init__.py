"""Scoring and settlement, one module per rule family."""
