"""Analyses built on the evaluation objects (compare, bootstrap, ...)."""
