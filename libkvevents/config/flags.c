/* flags.c: the table of the kv_events flags, and what is derived from
 * it: the names kvev_config_flags () lists, the long options, the lookup
 * of a name and the suggestion for a name that is none; see flags.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "flags.h"

#include "config-private.h"
#include "settings.h"

#include <string.h>

/* Longest flag name plus its NUL; checked when the derived tables are
 * built, so a longer name added to the table fails every test at once. */
#define FLAG_NAME_SIZE 48

/* Suggestions are for typos, not for arbitrary input: a longer name is
 * not compared at all, which also bounds the work an attacker-chosen
 * name can cause. */
#define SUGGEST_MAX_INPUT 256
#define SUGGEST_MAX_DISTANCE 3

/* Where a flag lands: the offset of its KvevSettings field, which must be
 * as large as the C type of the flag's type (flags.h), so that a row
 * naming the wrong field fails to build rather than writing past it: a
 * negative array size stops the compiler. */
#define SIZE_CHECK(field, ctype)                                                                   \
  sizeof (char[sizeof (((KvevSettings *) NULL)->field) == sizeof (ctype) ? 1 : -1])
#define LANDS_IN(field, ctype)                                                                     \
  (G_STRUCT_OFFSET (KvevSettings, field) + 0 * (glong) SIZE_CHECK (field, ctype))

#define BOOLEAN_FIELD(field, def)                                                                  \
  KVEV_FLAG_BOOLEAN, LANDS_IN (field, gboolean), (def), NULL, 0, 0, NULL, 0
#define UINT32_FIELD(field, def, lo, hi)                                                           \
  KVEV_FLAG_UINT32, LANDS_IN (field, guint32), (def), NULL, (lo), (hi), NULL, 0
#define STRING_FIELD(field, checks)                                                                \
  KVEV_FLAG_STRING, LANDS_IN (field, char *), 0, "", 0, 0, NULL, (checks)
#define PATH_FIELD(field) KVEV_FLAG_PATH, LANDS_IN (field, char *), 0, "", 0, 0, NULL, 0
#define ENDPOINT_FIELD(field, checks)                                                              \
  KVEV_FLAG_ENDPOINT, LANDS_IN (field, KvevEndpoint *), 0, "", 0, 0, NULL, (checks)
/* A word flag's field is an enum whose values index its words. */
#define WORD_FIELD(field, def, words)                                                              \
  KVEV_FLAG_WORD, LANDS_IN (field, guint), (def), NULL, 0, 0, (words), 0

/* kv_events_non_utf8, in KvevNonUtf8 order. */
static const char *const non_utf8_words[] = { "bin", "skip", NULL };
G_STATIC_ASSERT (KVEV_NON_UTF8_BIN == 0 && KVEV_NON_UTF8_SKIP == 1);

/* The one description of every flag.  Order is API: kvev_config_flags ()
 * and --help list them this way; a new flag goes at the end. */
const KvevFlag kvev_flag_table[] = {
  { "enable_kv_events", BOOLEAN_FIELD (enable, FALSE), N_ ("Publish KV cache availability events"),
    /* TRANSLATORS: the value of a boolean option, optional as the
     * brackets say. */
    N_ ("[BOOL]") },
  { "kv_events_bind_endpoint", ENDPOINT_FIELD (bind_endpoint, KVEV_FLAG_REQUIRED),
    /* TRANSLATORS: keep tcp://HOST:PORT, HOST, *, the brackets and
     * ipc://PATH as they are: they are ZeroMQ syntax. */
    N_ ("ZeroMQ endpoint the publisher binds: tcp://HOST:PORT (HOST: *, an IPv4 "
        "address, [an IPv6 address] or an interface name) or ipc://PATH"),
    N_ ("ENDPOINT") },
  { "kv_events_backend_id", STRING_FIELD (backend_id, KVEV_FLAG_REQUIRED | KVEV_FLAG_UTF8),
    N_ ("Backend identifier sent in every event (required when events "
        "are enabled)"),
    N_ ("ID") },
  { "kv_events_model_name", STRING_FIELD (model_name, KVEV_FLAG_UTF8),
    N_ ("Model name sent in every event (empty: none)"), N_ ("NAME") },
  { "kv_events_block_size", UINT32_FIELD (block_size, 0, 0, G_MAXUINT32),
    N_ ("Block size in tokens sent in every event (0: none)"), N_ ("N") },
  { "kv_events_additional_salt", STRING_FIELD (additional_salt, KVEV_FLAG_UTF8),
    N_ ("Additional hash salt sent in every event (empty: none)"), N_ ("SALT") },
  { "kv_events_lora_name", STRING_FIELD (lora_name, KVEV_FLAG_UTF8),
    N_ ("LoRA adapter name sent in every event (empty: none)"), N_ ("NAME") },
  { "kv_events_dp_rank", UINT32_FIELD (dp_rank, 0, 0, G_MAXUINT32),
    N_ ("Data-parallel rank sent with every batch and event"), N_ ("RANK") },
  { "kv_events_emit_object_key", BOOLEAN_FIELD (emit_object_key, TRUE),
    N_ ("Publish stored and removed events with their object key "
        "(false: do not publish them)"),
    N_ ("[BOOL]") },
  { "kv_events_emit_legacy_compat", BOOLEAN_FIELD (emit_legacy_compat, TRUE),
    N_ ("Also send the legacy field names older subscribers read"), N_ ("[BOOL]") },
  { "kv_events_queue_capacity",
    UINT32_FIELD (queue_capacity, KVEV_DEFAULT_QUEUE_CAPACITY, 0, G_MAXUINT32),
    N_ ("Events queued before the oldest is dropped (0: unbounded)"), N_ ("N") },
  { "kv_events_max_batch_events",
    UINT32_FIELD (max_batch_events, KVEV_DEFAULT_MAX_BATCH_EVENTS, 1, KVEV_MAX_MAX_BATCH_EVENTS),
    N_ ("Most events in one published message (1 to 4096)"), N_ ("N") },
  { "kv_events_send_hwm", UINT32_FIELD (send_hwm, KVEV_DEFAULT_SEND_HWM, 0, G_MAXUINT32),
    N_ ("ZeroMQ send high-water mark in messages (0: no limit)"), N_ ("N") },
  { "kv_events_close_timeout_ms",
    UINT32_FIELD (close_timeout_ms, KVEV_DEFAULT_CLOSE_TIMEOUT_MS, 0, KVEV_MAX_CLOSE_TIMEOUT_MS),
    N_ ("Milliseconds to keep publishing queued events when closing "
        "(0 to 600000)"),
    N_ ("MS") },
  { "kv_events_topic", STRING_FIELD (topic, 0),
    N_ ("Topic frame sent before every message (empty by default)"), N_ ("TOPIC") },
  { "kv_events_curve_secret_key_file", PATH_FIELD (curve_secret_key_file),
    N_ ("File holding the publisher's CURVE secret key in Z85, mode 600 "
        "(empty: no encryption)"),
    N_ ("FILE") },
  { "kv_events_curve_allowed_clients_file", PATH_FIELD (curve_allowed_clients_file),
    N_ ("File listing the CURVE public keys of the subscribers allowed, one "
        "per line (empty: any subscriber that knows the publisher's key)"),
    N_ ("FILE") },
  { "kv_events_allowed_addresses", STRING_FIELD (allowed_addresses, 0),
    N_ ("Comma-separated IP addresses or address/prefix ranges allowed to "
        "subscribe over tcp:// (empty: any)"),
    N_ ("LIST") },
  { "kv_events_batch_wait_us",
    UINT32_FIELD (batch_wait_us, KVEV_DEFAULT_BATCH_WAIT_US, 0, KVEV_MAX_BATCH_WAIT_US),
    N_ ("Microseconds the publisher thread waits for more events after "
        "sending, before publish calls must wake it (0 to 1000000)"),
    N_ ("US") },
  { "kv_events_send_buffer_bytes",
    UINT32_FIELD (send_buffer_bytes, KVEV_DEFAULT_SEND_BUFFER_BYTES, 0, G_MAXUINT32),
    N_ ("Most bytes of messages held for one subscriber that does not keep up; "
        "messages are cut so that the high-water mark of them fits (0: no bound)"),
    N_ ("BYTES") },
  { "kv_events_non_utf8", WORD_FIELD (non_utf8, KVEV_NON_UTF8_BIN, non_utf8_words),
    N_ ("What becomes of an event whose object key, tenant or group is not UTF-8: "
        "bin (sent as msgpack bin, alone in its message) or skip (not published, "
        "counted)"),
    /* TRANSLATORS: the two values of the option; keep them as they are. */
    N_ ("bin|skip") },
  { "kv_events_heartbeat_ms", UINT32_FIELD (heartbeat_ms, 0, 0, KVEV_MAX_HEARTBEAT_MS),
    N_ ("Milliseconds without a message after which an empty one is sent, and one "
        "is sent within 100 ms to a new subscriber (0: none)"),
    N_ ("MS") },
  { "kv_events_emit_publisher_id", BOOLEAN_FIELD (emit_publisher_id, FALSE),
    N_ ("Add this publisher's random instance id to every event as publisher_id"), N_ ("[BOOL]") },
  { "kv_events_replay_endpoint", ENDPOINT_FIELD (replay_endpoint, 0),
    N_ ("ZeroMQ endpoint where subscribers ask for the last messages again, as "
        "vLLM's replay protocol does (empty: none)"),
    N_ ("ENDPOINT") },
  { "kv_events_replay_buffer_messages",
    UINT32_FIELD (replay_buffer_messages, KVEV_DEFAULT_REPLAY_BUFFER_MESSAGES, 1, G_MAXUINT32),
    N_ ("Most messages kept for replay"), N_ ("N") },
  { "kv_events_replay_buffer_bytes",
    UINT32_FIELD (replay_buffer_bytes, KVEV_DEFAULT_REPLAY_BUFFER_BYTES, 1, G_MAXUINT32),
    N_ ("Most bytes of payload kept for replay; the oldest messages go first"), N_ ("BYTES") },
  { "kv_events_snapshot_endpoint", ENDPOINT_FIELD (snapshot_endpoint, 0),
    N_ ("ZeroMQ endpoint where subscribers ask for the master's state, which the "
        "master's snapshot function walks (empty: none)"),
    N_ ("ENDPOINT") },
  { "kv_events_replay_rate_bytes",
    UINT32_FIELD (replay_rate_bytes, KVEV_DEFAULT_REPLAY_RATE_BYTES, 0, G_MAXUINT32),
    N_ ("Most bytes of replay replies sent a second (0: no limit)"), N_ ("BYTES") },
  { "kv_events_send_wait_ms",
    UINT32_FIELD (send_wait_ms, KVEV_DEFAULT_SEND_WAIT_MS, 0, KVEV_MAX_SEND_WAIT_MS),
    N_ ("Milliseconds a second the stream may wait for subscribers that do not keep up "
        "before ZeroMQ drops for them, counted; a sole subscriber is always waited for "
        "(0: never wait; up to 1000)"),
    N_ ("MS") },
  { "kv_events_io_threads",
    UINT32_FIELD (io_threads, KVEV_DEFAULT_IO_THREADS, 1, KVEV_MAX_IO_THREADS),
    N_ ("ZeroMQ I/O threads that write to the subscribers (1 to 64)"), N_ ("N") },
  { "kv_events_snapshot_duty_percent",
    UINT32_FIELD (snapshot_duty_percent, KVEV_DEFAULT_SNAPSHOT_DUTY_PERCENT, 1, 100),
    N_ ("Most of the time, in percent, that snapshot walks may take (1 to 100)"), N_ ("PERCENT") },
};

#define N_FLAGS G_N_ELEMENTS (kvev_flag_table)

const gsize kvev_flag_count = N_FLAGS;

/* Tables derived from the rows once: C cannot compute them statically,
 * and deriving keeps the rows the only place a flag is described.
 * Static storage, so kvev_config_flags () and the option entries can
 * hand out pointers that never die. */
static const char *flag_names[N_FLAGS + 1];
static char option_names[N_FLAGS][FLAG_NAME_SIZE];

static void
derived_tables_init (void)
{
  static gsize initialized = 0;

  if (g_once_init_enter (&initialized))
    {
      for (gsize i = 0; i < N_FLAGS; i++)
        {
          g_assert (strlen (kvev_flag_table[i].name) < FLAG_NAME_SIZE);
          flag_names[i] = kvev_flag_table[i].name;
          g_strlcpy (option_names[i], kvev_flag_table[i].name, FLAG_NAME_SIZE);
          g_strdelimit (option_names[i], "_", '-');
        }
      flag_names[N_FLAGS] = NULL;
      g_once_init_leave (&initialized, 1);
    }
}

const char *const *
kvev_flag_names (void)
{
  derived_tables_init ();
  return flag_names;
}

const char *
kvev_flag_option_name (const KvevFlag *flag)
{
  derived_tables_init ();
  return option_names[kvev_flag_index (flag)];
}

const KvevFlag *
kvev_flag_lookup (const char *name)
{
  for (gsize i = 0; i < N_FLAGS; i++)
    if (strcmp (kvev_flag_table[i].name, name) == 0)
      return &kvev_flag_table[i];
  return NULL;
}

/* GOption hands the callback the option as the user wrote its name:
 * "--kv-events-dp-rank". */
const KvevFlag *
kvev_flag_lookup_option (const char *option_name)
{
  const char *name = option_name;

  if (g_str_has_prefix (name, "--"))
    name += 2;
  derived_tables_init ();
  for (gsize i = 0; i < N_FLAGS; i++)
    if (strcmp (option_names[i], name) == 0)
      return &kvev_flag_table[i];
  return NULL;
}

/* Flag names are ASCII; a user's near miss often differs only in case or
 * in writing the option's dashes. */
static guchar
fold_name_char (char c)
{
  return c == '-' ? '_' : (guchar) g_ascii_tolower (c);
}

/* Levenshtein distance between @input and a flag name, or @limit + 1 once
 * it is known to exceed @limit.  Two rows as wide as the flag name, so
 * the memory is fixed whatever @input is. */
static guint
name_distance (const char *input, gsize input_length, const char *name, guint limit)
{
  guint rows[2][FLAG_NAME_SIZE];
  gsize name_length = strlen (name);
  guint *previous = rows[0];
  guint *current = rows[1];

  g_return_val_if_fail (name_length < FLAG_NAME_SIZE, limit + 1);

  for (gsize j = 0; j <= name_length; j++)
    previous[j] = (guint) j;

  for (gsize i = 1; i <= input_length; i++)
    {
      guint row_min;
      guint *swap;

      current[0] = (guint) i;
      row_min = current[0];
      for (gsize j = 1; j <= name_length; j++)
        {
          guint substitute
              = previous[j - 1] + (fold_name_char (input[i - 1]) != fold_name_char (name[j - 1]));
          guint best = MIN (previous[j] + 1, current[j - 1] + 1);

          current[j] = MIN (best, substitute);
          row_min = MIN (row_min, current[j]);
        }
      /* No later row can go below this one's minimum. */
      if (row_min > limit)
        return limit + 1;
      swap = previous;
      previous = current;
      current = swap;
    }

  return MIN (previous[name_length], limit + 1);
}

static const KvevFlag *
flag_nearest (const char *name)
{
  gsize length = strlen (name);
  const KvevFlag *best = NULL;
  guint best_distance = SUGGEST_MAX_DISTANCE + 1;

  if (length > SUGGEST_MAX_INPUT)
    return NULL;

  for (gsize i = 0; i < N_FLAGS; i++)
    {
      guint distance = name_distance (name, length, kvev_flag_table[i].name, SUGGEST_MAX_DISTANCE);

      /* Strictly less: on a tie the earlier flag in the table wins. */
      if (distance < best_distance)
        {
          best = &kvev_flag_table[i];
          best_distance = distance;
        }
    }
  return best;
}

void
kvev_flag_set_unknown_error (const char *name, GError **error)
{
  const KvevFlag *nearest = flag_nearest (name);
  g_autofree char *shown = kvev_escape_for_message (name);

  if (nearest != NULL)
    g_set_error (error, KVEV_ERROR, KVEV_ERROR_UNKNOWN_FLAG,
                 /* TRANSLATORS: both are flag names, e.g.
                  * kv_events_dp_rank; keep them as they are. */
                 _ ("Unknown flag \"%s\" (did you mean \"%s\"?)"), shown, nearest->name);
  else
    g_set_error (error, KVEV_ERROR, KVEV_ERROR_UNKNOWN_FLAG, _ ("Unknown flag \"%s\""), shown);
}
