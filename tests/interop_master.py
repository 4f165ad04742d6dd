# interop_master.py: tests/interop-publisher driven from a Python test,
# one command a line (see interop-publisher.c for the commands), the
# subscribers the tests connect to it, and what a test reads of a
# process's resources.
import json
import os
import subprocess
import time


class Master:
    """An interop-publisher bound to ipc://DIRECTORY/NAME.sock with the
    backend_id backend and the extra FLAG=VALUE flags, which win over
    those (interop-publisher sets them in order); endpoint and
    replay_endpoint are the resolved ones."""

    def __init__(self, directory, name, flags, backend="replay", stop_timeout=30):
        builddir = os.environ.get("top_builddir", ".")
        self.stop_timeout = stop_timeout
        self.process = subprocess.Popen(
            [os.path.join(builddir, "tests", "interop-publisher"),
             "enable_kv_events=true", "kv_events_backend_id=" + backend,
             "kv_events_bind_endpoint=ipc://%s/%s.sock" % (directory, name)] + flags,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.endpoint = self.process.stdout.readline().strip()
        self.stats()  # in sync with the process
        self.replay_endpoint = self.stats_json.get("replay_endpoint")

    def command(self, word):
        """Its answer: "ok", "timeout", or for stats the JSON (None when the
        "ok" after it is missing)."""
        self.process.stdin.write(word + "\n")
        self.process.stdin.flush()
        reply = self.process.stdout.readline().strip()
        if word == "stats":
            self.stats_json = json.loads(reply)
            return self.stats_json if self.process.stdout.readline().strip() == "ok" else None
        return reply

    def stats(self):
        return self.command("stats")

    def truth(self):
        """What its store holds (the "store" command's snapshots): a set
        of (tenant, key, medium)."""
        self.process.stdin.write("truth\n")
        self.process.stdin.flush()
        truth = set()
        for line in iter(self.process.stdout.readline, ".\n"):
            tenant, key, media = line.split()
            for name, bit in (("cpu", 1), ("disk", 2)):
                if int(media) & bit:
                    truth.add((tenant, key, name))
        self.process.stdout.readline()  # "ok"
        return truth

    def stat_becomes(self, name, wanted, seconds=10):
        """Polls the statistics until name reaches wanted; the last value."""
        deadline = time.monotonic() + seconds
        while True:
            value = self.stats()[name]
            if value == wanted or time.monotonic() > deadline:
                return value
            time.sleep(0.02)

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=self.stop_timeout)
        return self.process.returncode


def rss(pid):
    """The resident set of process pid, in bytes."""
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_seconds(pid):
    """The CPU time process pid used so far, user and system."""
    with open("/proc/%d/stat" % pid) as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sanitized(pid):
    """Whether process pid runs under ASan or TSan: ASan keeps freed
    memory in quarantine and TSan shadows every byte, so its RSS says
    nothing of what it holds."""
    with open("/proc/%d/maps" % pid) as maps:
        return any("libasan" in line or "libtsan" in line for line in maps)


def subscriber(context, endpoint, prefix=b"", **options):
    """A SUB socket of context on endpoint, subscribed to prefix, with
    the pyzmq socket options given by name (RCVHWM=0, ...)."""
    import zmq  # the caller's tap.require() has found it

    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    for option, value in options.items():
        sub.setsockopt(getattr(zmq, option), value)
    sub.setsockopt(zmq.SUBSCRIBE, prefix)
    sub.connect(endpoint)
    return sub
