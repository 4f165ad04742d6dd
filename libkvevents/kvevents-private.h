/* kvevents-private.h: what every source of the library shares.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_PRIVATE_H
#define KVEVENTS_PRIVATE_H

#include "config.h"

/* Before GLib's headers, which otherwise define it empty. */
#ifndef G_LOG_DOMAIN
#define G_LOG_DOMAIN "kvevents"
#endif

#define KVEVENTS_COMPILATION
#include <kvevents/kvevents.h>
#undef KVEVENTS_COMPILATION

#ifdef G_OS_UNIX
#include <signal.h>
#endif

G_BEGIN_DECLS

/* Messages a person reads go through the library's own domain; the
 * library binds it once and never touches the process locale. */
const char *kvev_gettext (const char *msgid) G_GNUC_FORMAT (1);
#define _(String) kvev_gettext (String)
#define N_(String) (String)

/* g_thread_try_new() for the library's own threads: see thread.c. */
GThread *kvev_thread_try_new (const char *name, GThreadFunc func, gpointer data,
                              GError **error);
#ifdef G_OS_UNIX
/* Blocks what kvev_thread_try_new() blocks in the calling thread, so the
 * threads it then creates start with it; pthread_sigmask (SIG_SETMASK,
 * saved, NULL) restores the mask. */
void kvev_thread_block_signals (sigset_t *saved);
#endif

/* Keys longer than this are refused: a Store key is a name, not a value. */
#define KVEV_MAX_KEY_LEN (1024 * 1024)

struct _KvevConfig
{
  gboolean enable;
  char *bind_endpoint;
  char *backend_id;
  char *model_name;
  guint32 block_size;
  char *additional_salt;
  char *lora_name;
  guint32 dp_rank;
  gboolean emit_object_key;
  gboolean emit_legacy_compat;
  guint32 queue_capacity;
  guint32 max_batch_events;
  guint32 send_hwm;
  guint32 close_timeout_ms;
  char *topic;
  char *curve_secret_key_file;
  char *curve_allowed_clients_file;
  char *allowed_addresses;
  guint32 batch_wait_us;
};

/* Defaults of the tuning flags that the contract does not fix. */
#define KVEV_DEFAULT_QUEUE_CAPACITY 65536
#define KVEV_DEFAULT_MAX_BATCH_EVENTS 64
#define KVEV_MAX_MAX_BATCH_EVENTS 4096
#define KVEV_DEFAULT_SEND_HWM 10000
#define KVEV_DEFAULT_CLOSE_TIMEOUT_MS 1000
#define KVEV_DEFAULT_BATCH_WAIT_US 50
#define KVEV_MAX_BATCH_WAIT_US 1000000

G_END_DECLS

#endif /* KVEVENTS_PRIVATE_H */
