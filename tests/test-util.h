/* test-util.h: a subscriber for the publisher tests, decoding each message
 * with msgpack-c, and the helpers around it.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_TEST_UTIL_H
#define KVEV_TEST_UTIL_H

#include "config.h"

#include <kvevents/kvevents.h>

#include <msgpack.h>
#include <sys/types.h>

/* The sanitizers a build runs under, for the tests that cannot. */
#if defined(__SANITIZE_ADDRESS__)
#define KVEV_TEST_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define KVEV_TEST_TSAN 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(KVEV_TEST_ASAN)
#define KVEV_TEST_ASAN 1
#endif
#if __has_feature(thread_sanitizer) && !defined(KVEV_TEST_TSAN)
#define KVEV_TEST_TSAN 1
#endif
#endif

typedef struct
{
  guint n_frames;
  GBytes *topic;
  gsize sequence_len;
  guint64 sequence;
  /* msgpack-c's objects point into the payload for str and bin. */
  GBytes *payload;
  msgpack_unpacked unpacked;
  gboolean decoded;
  /* Valid when decoded: the payload triple. */
  gint64 timestamp_ms;
  guint64 dp_rank;
  const msgpack_object *events;
  guint n_events;
} TestMessage;

typedef struct _TestSub TestSub;

/* An ipc:// endpoint in a private temporary directory, removed at exit. */
char *test_ipc_endpoint (const char *name);

/* A SUB socket connected to endpoint, subscribed to everything, with no
 * receive high-water mark so nothing is lost on its side. */
TestSub *test_sub_new (const char *endpoint);
/* The same as a CURVE client of server_key (Z85) with its own key pair,
 * any of them NULL for a plain subscriber. */
TestSub *test_sub_new_curve (const char *endpoint, const char *server_key, const char *public_key,
                             const char *secret_key);
void test_sub_free (TestSub *sub);
/* NULL after timeout_ms without a message. */
TestMessage *test_sub_recv (TestSub *sub, int timeout_ms);
void test_message_free (TestMessage *message);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TestMessage, test_message_free)

/* PUB/SUB drops what is sent before a subscription arrives.  This
 * publishes cleared probes for tenant "kvev-test-sync" until one arrives,
 * then an end marker, and reads up to it, so the stream is in sync.
 * Returns the first probe received (the caller frees it). */
TestMessage *test_sync (KvevPublisher *publisher, TestSub *sub);

/* Whether sub gets any message within a short wait. */
gboolean test_sub_receives_anything (TestSub *sub);
/* Twenty stored events, flushed. */
void test_publish_some (KvevPublisher *publisher);
/* Whether this host can bind the IPv6 loopback at all. */
gboolean test_have_ipv6_loopback (void);
/* A publisher on endpoint with kv_events_allowed_addresses set to
 * allowed. */
KvevPublisher *test_publisher_new_allowing (const char *endpoint, const char *allowed);
/* For a publisher on 127.0.0.1 allowing only that address: a subscriber
 * from there is served and one from 127.0.0.2 is not; both connect now. */
void test_assert_only_local_admitted (KvevPublisher *publisher);

/* A configuration enabled on endpoint with backend "backend-1". */
KvevConfig *test_config_new (const char *endpoint);
void test_config_set (KvevConfig *config, const char *flag, const char *value);

/* Lookups in a decoded event map; NULL when absent. */
const msgpack_object *test_map_get (const msgpack_object *map, const char *key);
/* The event map's str value as a NUL-terminated copy, or NULL if the key
 * is absent or not a str. */
char *test_map_dup_str (const msgpack_object *map, const char *key);
guint64 test_map_uint (const msgpack_object *map, const char *key);

/* Whether the program runs under valgrind, whose preload library is then
 * in LD_PRELOAD (make check-valgrind). */
gboolean test_running_on_valgrind (void);
/* fork() with stdio flushed first, so nothing buffered is written twice. */
pid_t test_fork (void);
/* Waits for the child pid at most timeout_us; one still running then is
 * killed and the test fails, naming it by what.  Returns its status. */
int test_wait_child (pid_t pid, gint64 timeout_us, const char *what);
/* What fd gives until its end. */
char *test_read_all (int fd);

#endif /* KVEV_TEST_UTIL_H */
