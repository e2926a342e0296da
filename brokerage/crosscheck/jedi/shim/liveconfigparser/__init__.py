"""Offline alias: panda-common 0.1.11 ships LiveConfigParser under pandacommon only."""
