"""What the Python tests share, as tests/sim/lib.sh is for the shell tests: one line per check
("ok    ..." or "FAIL  ..."), a count of failures, and the exit status.

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from pycheck import Checks
    check = Checks()
    check("what is checked", condition)
    sys.exit(check.finish())

and `need("torch", ...)` where a test cannot run without a package (a skip, exit 77), `can_import`
where a part of it cannot.
"""
import importlib
import sys


def can_import(module: str, what: str = "") -> bool:
    """Whether `module` imports; where not, prints `SKIP WHAT: MODULE cannot be imported (why)`
    (an absent or broken install skips, as a missing GPU does)."""
    try:
        importlib.import_module(module)
        return True
    except Exception as exc:  # noqa: BLE001 - any import failure means: not usable here
        print(f"SKIP {what + ': ' if what else ''}{module} cannot be imported ({exc})")
        return False


def need(*modules: str) -> None:
    """Imports each module, or says why not and exits 77 (skipped)."""
    for name in modules:
        if not can_import(name):
            sys.exit(77)


class Checks:
    def __init__(self) -> None:
        self.failures = 0

    def __call__(self, what: str, ok: bool) -> bool:
        print(("ok    " if ok else "FAIL  ") + what)
        self.failures += 0 if ok else 1
        return ok

    def finish(self) -> int:
        """Prints the count and returns the exit status: 0 when every check passed, else 1."""
        print(f"{self.failures} failure(s)")
        return 1 if self.failures else 0
