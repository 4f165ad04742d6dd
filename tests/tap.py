# tap.py: what the Python tests share: their checks, reported as TAP once
# they are all made, and a clean skip when Debian's modules are missing.
import sys

checks = []


def check(ok, what):
    checks.append((bool(ok), what))


def skip(why):
    checks.append((True, "# SKIP " + why))


def finish():
    print("1..%d" % len(checks))
    for number, (ok, what) in enumerate(checks, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", number, what))
    sys.exit(0 if all(ok for ok, _ in checks) else 1)


def require(*modules):
    """Imports modules by name, or skips the whole test."""
    imported = []
    for name in modules:
        try:
            imported.append(__import__(name))
        except ImportError as missing:
            print("1..0 # SKIP %s (Debian: python3-%s)" % (missing, name))
            sys.exit(0)
    return imported
