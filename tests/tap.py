# tap.py: what the Python tests share: their checks, reported as TAP once
# they are all made, a clean skip when Debian's modules are missing, and
# a scratch directory for their sockets that goes away with them.
import atexit
import shutil
import sys
import tempfile

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


def scratch_directory(prefix):
    """A new directory for the test's sockets and files, removed when the
    test exits, unless a check failed: then it stays for a look."""
    path = tempfile.mkdtemp(prefix=prefix)

    def remove():
        if all(ok for ok, _ in checks):
            shutil.rmtree(path, ignore_errors=True)
        else:
            print("# kept %s" % path)

    atexit.register(remove)
    return path
