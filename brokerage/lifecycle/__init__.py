"""JEDI task / dataset / file state machines."""
