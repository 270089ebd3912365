"""Sizing rules over time: the history of every rule value and what changed beyond noise."""
