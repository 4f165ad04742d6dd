# The statistics as a master's /metrics endpoint serves them, read by
# Prometheus's own OpenMetrics parser (Debian's python3-prometheus-client),
# and the JSON a status page shows.  Prints TAP.
import json
import os
import subprocess

from tap import check, finish, require, scratch_directory

(prometheus_client,) = require("prometheus_client")
from prometheus_client.openmetrics.parser import text_string_to_metric_families  # noqa: E402

builddir = os.environ.get("top_builddir", ".")
tmp = scratch_directory("kvev-metrics-")
master = subprocess.Popen(
    [os.path.join(builddir, "tests", "interop-publisher"), "enable_kv_events=true",
     "kv_events_backend_id=metrics \"quoted\"", "kv_events_dp_rank=3",
     "kv_events_bind_endpoint=ipc://%s/metrics.sock" % tmp],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
endpoint = master.stdout.readline().strip()


def command(word):
    master.stdin.write(word + "\n")
    master.stdin.flush()
    if word == "metrics":
        lines = []
        for line in iter(master.stdout.readline, ""):
            lines.append(line)
            if line == "# EOF\n":
                break
        master.stdout.readline()
        return "".join(lines)
    reply = master.stdout.readline()
    if word == "stats":
        master.stdout.readline()
        return json.loads(reply)
    return reply.strip()


stats = command("stats")
check(stats["last_sequence"] is None, "before the first message last_sequence is null, not 0")
check(stats["version"] and stats["endpoint"] == endpoint and stats["backend_id"] == "metrics \"quoted\""
      and stats["dp_rank"] == 3, "the JSON names the version, endpoint, backend and rank")
text = command("metrics")
check("kvevents_last_sequence" not in text, "... and the metrics have no last_sequence yet")

command("bulk 100 40")
stats = command("stats")
check(stats["last_sequence"] is not None, "after messages, last_sequence is a number")
text = command("metrics")
try:
    families = {f.name: f for f in text_string_to_metric_families(text)}
    parsed = True
except ValueError as error:
    families, parsed = {}, False
    print("# %s" % error)
check(parsed, "the OpenMetrics text parses with prometheus_client's strict parser")
published = families.get("kvevents_published_events")
check(published is not None and published.type == "counter"
      and published.samples[0].name == "kvevents_published_events_total"
      and published.samples[0].value == stats["published_events"] == 100,
      "published_events is a counter, kvevents_published_events_total = 100")
check(families.get("kvevents_queue_depth") is not None
      and families["kvevents_queue_depth"].type == "gauge", "queue_depth is a gauge")
check(families.get("kvevents_subscriptions") is not None
      and families["kvevents_subscriptions"].type == "gauge", "subscriptions is a gauge")
labels = published.samples[0].labels if published else {}
check(labels.get("backend_id") == "metrics \"quoted\"" and labels.get("dp_rank") == "3"
      and labels.get("instance_id") == stats["instance_id"],
      "samples carry backend_id, dp_rank and instance_id, quotes escaped")
info = families.get("kvevents_publisher")
check(info is not None and info.type == "info"
      and info.samples[0].labels.get("version") == stats["version"]
      and info.samples[0].labels.get("endpoint") == endpoint,
      "an info metric gives the version and the endpoint")
check(all(f.name.startswith("kvevents_") for f in families.values()), "every metric is kvevents_*")

master.stdin.close()
master.wait(timeout=20)
finish()
