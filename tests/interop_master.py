# interop_master.py: tests/interop-publisher driven from a Python test,
# one command a line (see interop-publisher.c for the commands), and the
# subscribers the tests connect to it.
import json
import os
import subprocess


class Master:
    """An interop-publisher bound to ipc://DIRECTORY/NAME.sock with
    backend "replay" and the extra FLAG=VALUE flags; endpoint and
    replay_endpoint are the resolved ones."""

    def __init__(self, directory, name, flags):
        builddir = os.environ.get("top_builddir", ".")
        self.process = subprocess.Popen(
            [os.path.join(builddir, "tests", "interop-publisher"),
             "enable_kv_events=true", "kv_events_backend_id=replay",
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

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)
        return self.process.returncode


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
