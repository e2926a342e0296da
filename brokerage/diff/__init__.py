"""Snapshot-to-snapshot diffs: which tasks' brokerage changed between two grid versions, and which inputs caused it."""
