"""Tests of the command-line package (a package, as every test folder is, so that module names
such as test_index.py do not collide across folders)."""
