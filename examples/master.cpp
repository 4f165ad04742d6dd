/* master.cpp: the README's short tour as a C++17 store master: the
 * flags, the publisher, an event of each kind, the statistics and the
 * shutdown, each of the library's objects owned by a std::unique_ptr
 * that frees it as the library says.
 *
 * It needs nothing but the installed library, as a master's build does:
 *
 *   c++ -std=c++17 -o master master.cpp $(pkg-config --cflags --libs kvevents)
 *
 * or, with CMake, find_package (kvevents CONFIG REQUIRED) and
 * target_link_libraries (master PRIVATE kvevents::kvevents).
 *
 *   master [ENDPOINT]
 *
 * publishes on ENDPOINT (tcp://127.0.0.1:* by default: a free port) and
 * prints the publisher's statistics; it fails unless every event it
 * queued went out.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <kvevents/kvevents.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>

namespace
{

/* Each of the library's objects freed by its own call.  Freeing the
 * publisher delivers what is still queued, within
 * kv_events_close_timeout_ms. */
template <auto free_func> struct Free
{
  template <typename T>
  void
  operator() (T *object) const
  {
    free_func (object);
  }
};

using Config = std::unique_ptr<KvevConfig, Free<kvev_config_free> >;
using Publisher = std::unique_ptr<KvevPublisher, Free<kvev_publisher_free> >;
using Error = std::unique_ptr<GError, Free<g_error_free> >;
using String = std::unique_ptr<char, Free<g_free> >;

int
fail (const char *what, GError *error)
{
  const Error owned (error);

  std::fprintf (stderr, "master: %s: %s\n", what, owned->message);
  return 1;
}

} // namespace

int
main (int argc, char **argv)
{
  const char *endpoint = argc > 1 ? argv[1] : "tcp://127.0.0.1:*";
  GError *error = nullptr;

  const Config config (kvev_config_new ());
  const std::pair<const char *, const char *> flags[] = {
    { "enable_kv_events", "true" },
    { "kv_events_bind_endpoint", endpoint },
    { "kv_events_backend_id", "store-0" },
  };
  for (const auto &[flag, value] : flags)
    if (!kvev_config_set (config.get (), flag, value, &error))
      return fail (flag, error);

  const Publisher publisher (kvev_publisher_new (config.get (), &error));
  if (!publisher)
    return fail ("kvev_publisher_new", error);
  const char *bound = kvev_publisher_get_endpoint (publisher.get ());
  std::fprintf (stderr, "master: publishing on %s\n",
                bound != nullptr ? bound : "nothing (this library has no transport)");

  /* A key is bytes with a length, never parsed: a std::string passes
   * its data and size as they are. */
  const std::string tenant = "tenant-a";
  const std::string key = "object-1";
  const auto key_len = static_cast<gssize> (key.size ());

  /* Put commit: every completed tier. */
  kvev_publish_stored (publisher.get (), tenant.c_str (), key.data (), key_len, nullptr,
                       KVEV_MEDIA_CPU | KVEV_MEDIA_DISK);
  /* Evicted from memory, still on disk. */
  kvev_publish_removed (publisher.get (), tenant.c_str (), key.data (), key_len, nullptr,
                        KVEV_MEDIA_CPU);
  /* RemoveAll: nothing of the tenant is left on any tier. */
  kvev_publish_cleared (publisher.get (), tenant.c_str ());

  if (!kvev_publisher_flush (publisher.get (), 5000))
    std::fprintf (stderr, "master: the events did not all go out within 5 s\n");
  const String stats (kvev_publisher_stats_json (publisher.get ()));
  std::puts (stats.get ());

  const guint64 enqueued = kvev_publisher_stat (publisher.get (), KVEV_STAT_ENQUEUED_EVENTS);
  const guint64 published = kvev_publisher_stat (publisher.get (), KVEV_STAT_PUBLISHED_EVENTS);
  return enqueued == published ? 0 : 1;
}
