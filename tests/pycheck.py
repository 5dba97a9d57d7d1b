"""What the Python tests share, as tests/sim/lib.sh is for the shell tests: one line per check
("ok    ..." or "FAIL  ..."), a count of failures, and the exit status.

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from pycheck import Checks
    check = Checks()
    check("what is checked", condition)
    sys.exit(check.finish())

and `need("torch", ...)` where a test cannot run without a package (a skip, exit 77).
"""
import importlib
import sys


def need(*modules: str) -> None:
    """Imports each module, or prints why not and exits 77 (skipped): an absent or broken install
    skips, as a missing GPU does."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - any import failure means: not usable here
            print(f"SKIP {name} cannot be imported ({exc})")
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
