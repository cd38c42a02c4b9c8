"""The registry under concurrent first use (a server's first requests arrive together)."""

import sys
import threading
import types

from medground import registry


def test_concurrent_first_lookups_all_see_the_builtins(monkeypatch):
    # A built-in module whose import is slow: before the fix, the first thread marked the
    # registry loaded before this import finished and the others found nothing.
    started = threading.Event()

    def slow_module_import():
        mod = types.ModuleType("medground_slow_builtin")
        started.set()
        threading.Event().wait(0.3)
        registry.register("llm", "slow-test-llm")(lambda **kw: "made")
        return mod

    class Finder:
        def find_spec(self, name, path=None, target=None):
            if name != "medground_slow_builtin":
                return None
            import importlib.machinery

            class Loader:
                def create_module(self, spec):
                    return slow_module_import()

                def exec_module(self, module):
                    pass

            return importlib.machinery.ModuleSpec(name, Loader())

    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(registry, "_BUILTIN_MODULES", ["medground_slow_builtin"])
    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
    monkeypatch.delitem(sys.modules, "medground_slow_builtin", raising=False)
    monkeypatch.delitem(registry._FACTORIES, ("llm", "slow-test-llm"), raising=False)
    results, errors = [], []

    def worker():
        try:
            results.append(registry.create("llm", "slow-test-llm"))
        except Exception as exc:  # collected, asserted below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not errors, errors[:1]
    assert results == ["made"] * 16
    registry._FACTORIES.pop(("llm", "slow-test-llm"), None)
