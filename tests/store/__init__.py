"""Tests of the storage package (a package, as every test folder is, so that module names such as
test_drugs.py do not collide across folders)."""
