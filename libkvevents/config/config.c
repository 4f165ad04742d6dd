/* config.c: the flag table, parsing, validation, key-file and GOption
 * front ends.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "internal.h"

#include "precondition.h"
#include "settings.h"

#include <string.h>

/* Closing is bounded so a stuck subscriber cannot hold a master's
 * shutdown for more than ten minutes. */
#define KVEV_MAX_CLOSE_TIMEOUT_MS 600000

/* Longest flag name plus its NUL; checked when the derived tables are
 * built, so a longer name added to the table fails every test at once. */
#define FLAG_NAME_SIZE 48

/* Suggestions are for typos, not for arbitrary input: a longer name is
 * not compared at all, which also bounds the work an attacker-chosen
 * name can cause. */
#define SUGGEST_MAX_INPUT 256
#define SUGGEST_MAX_DISTANCE 3

typedef enum
{
  FLAG_BOOLEAN,
  FLAG_UINT32,
  FLAG_STRING,
  FLAG_WORD,
} FlagType;

typedef struct
{
  const char *name;
  FlagType type;
  glong offset;               /* of the field in KvevConfig */
  guint32 default_number;     /* booleans, integers, a word's index */
  const char *default_string; /* strings */
  guint32 min;                /* integers */
  guint32 max;
  const char *const *words; /* words: NULL-terminated; the index is stored */
  gboolean path;            /* strings: a file name (see config_load_key_file_in) */
  const char *help;         /* N_(): translated when shown */
  const char *arg;          /* N_(): the value's name in --help */
} Flag;

typedef union
{
  gboolean boolean;
  guint32 number;
  guint word;         /* index into the flag's words */
  const char *string; /* borrowed until stored */
} FlagValue;

#define BOOLEAN_FIELD(field, def)                                                                  \
  FLAG_BOOLEAN, G_STRUCT_OFFSET (KvevConfig, field), (def), NULL, 0, 0, NULL, FALSE
#define UINT32_FIELD(field, def, lo, hi)                                                           \
  FLAG_UINT32, G_STRUCT_OFFSET (KvevConfig, field), (def), NULL, (lo), (hi), NULL, FALSE
#define STRING_FIELD(field, def)                                                                   \
  FLAG_STRING, G_STRUCT_OFFSET (KvevConfig, field), 0, (def), 0, 0, NULL, FALSE
#define PATH_FIELD(field) FLAG_STRING, G_STRUCT_OFFSET (KvevConfig, field), 0, "", 0, 0, NULL, TRUE
/* A word flag's field is an enum whose values index its words. */
#define WORD_FIELD(field, def, words)                                                              \
  FLAG_WORD, G_STRUCT_OFFSET (KvevConfig, field), (def), NULL, 0, 0, (words), FALSE

/* kv_events_non_utf8, in KvevNonUtf8 order. */
static const char *const non_utf8_words[] = { "bin", "skip", NULL };
G_STATIC_ASSERT (KVEV_NON_UTF8_BIN == 0 && KVEV_NON_UTF8_SKIP == 1);
G_STATIC_ASSERT (sizeof (KvevNonUtf8) == sizeof (guint));

/* The one description of every flag.  Order is API: kvev_config_flags ()
 * and --help list them this way. */
static const Flag flags[] = {
  { "enable_kv_events", BOOLEAN_FIELD (enable, FALSE), N_ ("Publish KV cache availability events"),
    /* TRANSLATORS: the value of a boolean option, optional as the
     * brackets say. */
    N_ ("[BOOL]") },
  { "kv_events_bind_endpoint", STRING_FIELD (bind_endpoint, ""),
    /* TRANSLATORS: keep tcp://HOST:PORT, HOST, *, the brackets and
     * ipc://PATH as they are: they are ZeroMQ syntax. */
    N_ ("ZeroMQ endpoint the publisher binds: tcp://HOST:PORT (HOST: *, an IPv4 "
        "address, [an IPv6 address] or an interface name) or ipc://PATH"),
    N_ ("ENDPOINT") },
  { "kv_events_backend_id", STRING_FIELD (backend_id, ""),
    N_ ("Backend identifier sent in every event (required when events "
        "are enabled)"),
    N_ ("ID") },
  { "kv_events_model_name", STRING_FIELD (model_name, ""),
    N_ ("Model name sent in every event (empty: none)"), N_ ("NAME") },
  { "kv_events_block_size", UINT32_FIELD (block_size, 0, 0, G_MAXUINT32),
    N_ ("Block size in tokens sent in every event (0: none)"), N_ ("N") },
  { "kv_events_additional_salt", STRING_FIELD (additional_salt, ""),
    N_ ("Additional hash salt sent in every event (empty: none)"), N_ ("SALT") },
  { "kv_events_lora_name", STRING_FIELD (lora_name, ""),
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
  { "kv_events_topic", STRING_FIELD (topic, ""),
    N_ ("Topic frame sent before every message (empty by default)"), N_ ("TOPIC") },
  { "kv_events_curve_secret_key_file", PATH_FIELD (curve_secret_key_file),
    N_ ("File holding the publisher's CURVE secret key in Z85, mode 600 "
        "(empty: no encryption)"),
    N_ ("FILE") },
  { "kv_events_curve_allowed_clients_file", PATH_FIELD (curve_allowed_clients_file),
    N_ ("File listing the CURVE public keys of the subscribers allowed, one "
        "per line (empty: any subscriber that knows the publisher's key)"),
    N_ ("FILE") },
  { "kv_events_allowed_addresses", STRING_FIELD (allowed_addresses, ""),
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
  { "kv_events_replay_endpoint", STRING_FIELD (replay_endpoint, ""),
    N_ ("ZeroMQ endpoint where subscribers ask for the last messages again, as "
        "vLLM's replay protocol does (empty: none)"),
    N_ ("ENDPOINT") },
  { "kv_events_replay_buffer_messages",
    UINT32_FIELD (replay_buffer_messages, KVEV_DEFAULT_REPLAY_BUFFER_MESSAGES, 1, G_MAXUINT32),
    N_ ("Most messages kept for replay"), N_ ("N") },
  { "kv_events_replay_buffer_bytes",
    UINT32_FIELD (replay_buffer_bytes, KVEV_DEFAULT_REPLAY_BUFFER_BYTES, 1, G_MAXUINT32),
    N_ ("Most bytes of payload kept for replay; the oldest messages go first"), N_ ("BYTES") },
  { "kv_events_snapshot_endpoint", STRING_FIELD (snapshot_endpoint, ""),
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

#define N_FLAGS G_N_ELEMENTS (flags)

/* Tables derived from flags[] once: C cannot compute them statically,
 * and deriving keeps flags[] the only place a flag is described.  Static
 * storage, so kvev_config_flags () and the option entries can hand out
 * pointers that never die. */
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
          g_assert (strlen (flags[i].name) < FLAG_NAME_SIZE);
          flag_names[i] = flags[i].name;
          g_strlcpy (option_names[i], flags[i].name, FLAG_NAME_SIZE);
          g_strdelimit (option_names[i], "_", '-');
        }
      flag_names[N_FLAGS] = NULL;
      g_once_init_leave (&initialized, 1);
    }
}

static gpointer
flag_field (KvevConfig *config, const Flag *flag)
{
  return G_STRUCT_MEMBER_P (config, flag->offset);
}

static gconstpointer
flag_const_field (const KvevConfig *config, const Flag *flag)
{
  return (const guint8 *) config + flag->offset;
}

static const Flag *
flag_lookup (const char *name)
{
  for (gsize i = 0; i < N_FLAGS; i++)
    if (strcmp (flags[i].name, name) == 0)
      return &flags[i];
  return NULL;
}

static void
flag_default (const Flag *flag, FlagValue *value)
{
  switch (flag->type)
    {
    case FLAG_BOOLEAN:
      value->boolean = flag->default_number != 0;
      return;
    case FLAG_UINT32:
      value->number = flag->default_number;
      return;
    case FLAG_STRING:
      value->string = flag->default_string;
      return;
    case FLAG_WORD:
      value->word = flag->default_number;
      return;
    }
  g_return_if_reached ();
}

/* The value borrows from @config: store or format it before @config
 * changes. */
static void
flag_load (const KvevConfig *config, const Flag *flag, FlagValue *value)
{
  gconstpointer field = flag_const_field (config, flag);

  switch (flag->type)
    {
    case FLAG_BOOLEAN:
      value->boolean = *(const gboolean *) field;
      return;
    case FLAG_UINT32:
      value->number = *(const guint32 *) field;
      return;
    case FLAG_STRING:
      value->string = *(char *const *) field;
      return;
    case FLAG_WORD:
      value->word = *(const guint *) field;
      return;
    }
  g_return_if_reached ();
}

static void
flag_store (KvevConfig *config, const Flag *flag, const FlagValue *value)
{
  gpointer field = flag_field (config, flag);

  switch (flag->type)
    {
    case FLAG_BOOLEAN:
      *(gboolean *) field = value->boolean;
      return;
    case FLAG_UINT32:
      *(guint32 *) field = value->number;
      return;
    case FLAG_STRING:
      {
        char **slot = field;
        char *old = *slot;

        /* Duplicate before freeing: the new value may live in the old. */
        *slot = g_strdup (value->string);
        g_free (old);
      }
      return;
    case FLAG_WORD:
      *(guint *) field = value->word;
      return;
    }
  g_return_if_reached ();
}

/* Exchanges one flag's value between two configurations; strings change
 * owner rather than being copied, so this cannot fail. */
static void
flag_swap (KvevConfig *a, KvevConfig *b, const Flag *flag)
{
  gpointer field_a = flag_field (a, flag);
  gpointer field_b = flag_field (b, flag);

  switch (flag->type)
    {
    case FLAG_BOOLEAN:
      {
        gboolean saved = *(gboolean *) field_a;

        *(gboolean *) field_a = *(gboolean *) field_b;
        *(gboolean *) field_b = saved;
      }
      return;
    case FLAG_UINT32:
      {
        guint32 saved = *(guint32 *) field_a;

        *(guint32 *) field_a = *(guint32 *) field_b;
        *(guint32 *) field_b = saved;
      }
      return;
    case FLAG_STRING:
      {
        char *saved = *(char **) field_a;

        *(char **) field_a = *(char **) field_b;
        *(char **) field_b = saved;
      }
      return;
    case FLAG_WORD:
      {
        guint saved = *(guint *) field_a;

        *(guint *) field_a = *(guint *) field_b;
        *(guint *) field_b = saved;
      }
      return;
    }
  g_return_if_reached ();
}

static void
flag_clear (KvevConfig *config, const Flag *flag)
{
  if (flag->type == FLAG_STRING)
    {
      char **slot = flag_field (config, flag);

      g_free (*slot);
      *slot = NULL;
    }
}

static char *
flag_format (const Flag *flag, const FlagValue *value)
{
  switch (flag->type)
    {
    case FLAG_BOOLEAN:
      return g_strdup (value->boolean ? "true" : "false");
    case FLAG_UINT32:
      return g_strdup_printf ("%" G_GUINT32_FORMAT, value->number);
    case FLAG_STRING:
      return g_strdup (value->string);
    case FLAG_WORD:
      return g_strdup (flag->words[value->word]);
    }
  g_return_val_if_reached (NULL);
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

static const Flag *
flag_nearest (const char *name)
{
  gsize length = strlen (name);
  const Flag *best = NULL;
  guint best_distance = SUGGEST_MAX_DISTANCE + 1;

  if (length > SUGGEST_MAX_INPUT)
    return NULL;

  for (gsize i = 0; i < N_FLAGS; i++)
    {
      guint distance = name_distance (name, length, flags[i].name, SUGGEST_MAX_DISTANCE);

      /* Strictly less: on a tie the earlier flag in the table wins. */
      if (distance < best_distance)
        {
          best = &flags[i];
          best_distance = distance;
        }
    }
  return best;
}

static void
set_unknown_flag_error (const char *name, GError **error)
{
  const Flag *nearest = flag_nearest (name);
  g_autofree char *shown = kvev_escape_for_message (name);

  if (nearest != NULL)
    g_set_error (error, KVEV_ERROR, KVEV_ERROR_UNKNOWN_FLAG,
                 /* TRANSLATORS: both are flag names, e.g.
                  * kv_events_dp_rank; keep them as they are. */
                 _ ("Unknown flag \"%s\" (did you mean \"%s\"?)"), shown, nearest->name);
  else
    g_set_error (error, KVEV_ERROR, KVEV_ERROR_UNKNOWN_FLAG, _ ("Unknown flag \"%s\""), shown);
}

static gboolean
parse_boolean (const char *text, gboolean *out)
{
  static const char *const true_words[] = { "true", "yes", "1" };
  static const char *const false_words[] = { "false", "no", "0" };

  for (gsize i = 0; i < G_N_ELEMENTS (true_words); i++)
    {
      if (g_ascii_strcasecmp (text, true_words[i]) == 0)
        {
          *out = TRUE;
          return TRUE;
        }
      if (g_ascii_strcasecmp (text, false_words[i]) == 0)
        {
          *out = FALSE;
          return TRUE;
        }
    }
  return FALSE;
}

/* Digits only: strtoul would take signs, spaces and "0x", and wrap a
 * negative number around to a huge one. */
static gboolean
parse_uint32 (const char *text, guint32 *out)
{
  guint64 number = 0;

  if (*text == '\0')
    return FALSE;
  for (const char *p = text; *p != '\0'; p++)
    {
      if (!g_ascii_isdigit (*p))
        return FALSE;
      number = number * 10 + (guint64) (*p - '0');
      if (number > G_MAXUINT32)
        return FALSE;
    }
  *out = (guint32) number;
  return TRUE;
}

static gboolean
flag_parse (const Flag *flag, const char *text, FlagValue *value, GError **error)
{
  g_autofree char *shown = NULL;

  switch (flag->type)
    {
    case FLAG_BOOLEAN:
      if (parse_boolean (text, &value->boolean))
        return TRUE;
      shown = kvev_escape_for_message (text);
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   /* TRANSLATORS: a value, then a flag name; true, false,
                    * yes, no, 1 and 0 are what the user may type. */
                   _ ("Invalid value \"%s\" for %s: expected true, false, "
                      "yes, no, 1 or 0"),
                   shown, flag->name);
      return FALSE;

    case FLAG_UINT32:
      if (parse_uint32 (text, &value->number) && value->number >= flag->min
          && value->number <= flag->max)
        return TRUE;
      shown = kvev_escape_for_message (text);
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   /* TRANSLATORS: a value, a flag name, then the smallest
                    * and the largest value allowed. */
                   _ ("Invalid value \"%s\" for %s: expected an unsigned "
                      "integer from %u to %u"),
                   shown, flag->name, (guint) flag->min, (guint) flag->max);
      return FALSE;

    case FLAG_STRING:
      /* Any bytes: what a string must look like is for validate, which
       * sees the flags together. */
      value->string = text;
      return TRUE;

    case FLAG_WORD:
      {
        g_autofree char *accepted = NULL;

        /* In any case, as booleans are. */
        for (guint i = 0; flag->words[i] != NULL; i++)
          if (g_ascii_strcasecmp (text, flag->words[i]) == 0)
            {
              value->word = i;
              return TRUE;
            }
        shown = kvev_escape_for_message (text);
        accepted = g_strjoinv (", ", (char **) flag->words);
        g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                     /* TRANSLATORS: a value, a flag name, then the words
                      * the flag takes, separated by commas; keep them as
                      * they are. */
                     _ ("Invalid value \"%s\" for %s: expected one of %s"), shown, flag->name,
                     accepted);
        return FALSE;
      }
    }
  g_return_val_if_reached (FALSE);
}

/* The one path from text to a stored value: kvev_config_set, the key
 * file and the command line all end here, so they accept and refuse the
 * same things with the same words. */
static gboolean
config_set_flag (KvevConfig *config, const Flag *flag, const char *text, GError **error)
{
  FlagValue value = { 0 };

  if (!flag_parse (flag, text, &value, error))
    return FALSE;
  flag_store (config, flag, &value);
  return TRUE;
}

KvevConfig *
kvev_config_new (void)
{
  KvevConfig *config = g_new0 (KvevConfig, 1);

  for (gsize i = 0; i < N_FLAGS; i++)
    {
      FlagValue value = { 0 };

      flag_default (&flags[i], &value);
      flag_store (config, &flags[i], &value);
    }
  return config;
}

KvevConfig *
kvev_config_copy (const KvevConfig *config)
{
  KvevConfig *copy;

  kvev_return_val_if_fail (config != NULL, NULL);

  copy = g_new0 (KvevConfig, 1);
  for (gsize i = 0; i < N_FLAGS; i++)
    {
      FlagValue value = { 0 };

      flag_load (config, &flags[i], &value);
      flag_store (copy, &flags[i], &value);
    }
  return copy;
}

void
kvev_config_free (KvevConfig *config)
{
  if (config == NULL)
    return;
  for (gsize i = 0; i < N_FLAGS; i++)
    flag_clear (config, &flags[i]);
  g_free (config);
}

gboolean
kvev_config_set (KvevConfig *config, const char *flag, const char *value, GError **error)
{
  const Flag *entry;

  kvev_return_val_if_fail (config != NULL, FALSE);
  kvev_return_val_if_fail (flag != NULL, FALSE);
  kvev_return_val_if_fail (value != NULL, FALSE);
  kvev_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  entry = flag_lookup (flag);
  if (entry == NULL)
    {
      set_unknown_flag_error (flag, error);
      return FALSE;
    }
  return config_set_flag (config, entry, value, error);
}

char *
kvev_config_get (const KvevConfig *config, const char *flag)
{
  const Flag *entry;
  FlagValue value = { 0 };

  kvev_return_val_if_fail (config != NULL, NULL);
  kvev_return_val_if_fail (flag != NULL, NULL);

  entry = flag_lookup (flag);
  if (entry == NULL)
    return NULL;
  flag_load (config, entry, &value);
  return flag_format (entry, &value);
}

const char *const *
kvev_config_flags (void)
{
  derived_tables_init ();
  return flag_names;
}

/* A key file's value as g_key_file_get_string() reads it: UTF-8, with
 * the escapes \s \n \t \r and \\ undone.  Done here rather than by
 * g_key_file_get_string(), which sets its GError twice (a GLib warning,
 * fatal under G_DEBUG=fatal-warnings) for a value with an unknown escape
 * that also ends in a backslash. */
static char *
key_file_value_unescape (const char *raw, GError **error)
{
  g_autoptr (GString) value = NULL;

  if (!g_utf8_validate (raw, -1, NULL))
    {
      g_set_error_literal (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                           _ ("The value is not UTF-8"));
      return NULL;
    }
  value = g_string_sized_new (strlen (raw));
  for (const char *p = raw; *p != '\0'; p++)
    {
      if (*p != '\\')
        {
          g_string_append_c (value, *p);
          continue;
        }
      p++;
      switch (*p)
        {
        case 's':
          g_string_append_c (value, ' ');
          break;
        case 'n':
          g_string_append_c (value, '\n');
          break;
        case 't':
          g_string_append_c (value, '\t');
          break;
        case 'r':
          g_string_append_c (value, '\r');
          break;
        case '\\':
          g_string_append_c (value, '\\');
          break;
        case '\0':
          g_set_error_literal (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                               _ ("The value ends in a lone backslash"));
          return NULL;
        default:
          {
            /* The whole character after the backslash, which may take
             * several bytes. */
            g_autofree char *sequence = g_strndup (p - 1, (gsize) (g_utf8_next_char (p) - (p - 1)));

            g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                         /* TRANSLATORS: a backslash and the character after
                          * it; the known escapes are \s \n \t \r \\. */
                         _ ("Unknown escape sequence \"%s\" (known: \\s \\n \\t \\r \\\\)"),
                         sequence);
            return NULL;
          }
        }
    }
  return g_string_free (g_steal_pointer (&value), FALSE);
}

/* A path flag's relative value, read from a key file in @base_dir, names
 * a file beside the key file: a master started from another directory,
 * or that changes directory once started, still finds its keys.  Without
 * a @base_dir (a GKeyFile does not know where it was read from) a value
 * is stored as it is, relative to the current directory like one given
 * on the command line. */
static gboolean
config_load_key_file_in (KvevConfig *config, GKeyFile *key_file, const char *group,
                         const char *base_dir, GError **error)
{
  g_autoptr (KvevConfig) work = NULL;
  g_auto (GStrv) keys = NULL;

  if (group == NULL)
    group = "kv_events";
  if (!g_key_file_has_group (key_file, group))
    return TRUE;

  keys = g_key_file_get_keys (key_file, group, NULL, NULL);
  if (keys == NULL)
    return TRUE;

  /* All or nothing: a half-applied file would leave a master running
   * with a mix of old and new flags it never asked for. */
  work = kvev_config_copy (config);
  for (gsize i = 0; keys[i] != NULL; i++)
    {
      g_autoptr (GError) local_error = NULL;
      g_autofree char *raw = NULL;
      g_autofree char *value = NULL;
      g_autofree char *shown_key = NULL;
      g_autofree char *shown_group = NULL;
      g_autofree char *reason = NULL;
      const Flag *flag = flag_lookup (keys[i]);
      int code;

      raw = g_key_file_get_value (key_file, group, keys[i], &local_error);
      if (raw != NULL)
        value = key_file_value_unescape (raw, &local_error);
      if (value != NULL && flag == NULL)
        set_unknown_flag_error (keys[i], &local_error);
      else if (value != NULL)
        {
          if (flag->path && base_dir != NULL && value[0] != '\0' && !g_path_is_absolute (value))
            {
              char *resolved = g_build_filename (base_dir, value, NULL);

              g_free (value);
              value = resolved;
            }
          if (config_set_flag (work, flag, value, &local_error))
            continue;
        }

      shown_key = kvev_escape_for_message (keys[i]);
      shown_group = kvev_escape_for_message (group);
      code = local_error->domain == KVEV_ERROR ? local_error->code : KVEV_ERROR_INVALID_VALUE;
      /* GKeyFile quotes the raw key in its messages, bytes that are not
       * UTF-8 included; ours must stay printable. */
      reason = g_utf8_make_valid (local_error->message, -1);
      g_set_error (error, KVEV_ERROR, code,
                   /* TRANSLATORS: a key and a group of a key file, then
                    * the reason, an already translated message. */
                   _ ("Key \"%s\" in group [%s]: %s"), shown_key, shown_group, reason);
      return FALSE;
    }

  /* Commit by exchanging values: @config takes the new ones, and @work,
   * freed on return, the old. */
  for (gsize i = 0; i < N_FLAGS; i++)
    flag_swap (config, work, &flags[i]);
  return TRUE;
}

gboolean
kvev_config_load_key_file (KvevConfig *config, GKeyFile *key_file, const char *group,
                           GError **error)
{
  kvev_return_val_if_fail (config != NULL, FALSE);
  kvev_return_val_if_fail (key_file != NULL, FALSE);
  kvev_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return config_load_key_file_in (config, key_file, group, NULL, error);
}

/* Absolute, so that what the key file names stays the same file when
 * the master changes directory after loading it.  Not canonicalized:
 * ".." after a symbolic link is the kernel's to resolve, as it would be
 * for the path itself. */
static char *
key_file_directory (const char *path)
{
  g_autofree char *directory = g_path_get_dirname (path);
  g_autofree char *current = NULL;

  if (g_path_is_absolute (directory))
    return g_steal_pointer (&directory);
  current = g_get_current_dir ();
  if (strcmp (directory, ".") == 0)
    return g_steal_pointer (&current);
  return g_build_filename (current, directory, NULL);
}

gboolean
kvev_config_load_file (KvevConfig *config, const char *path, const char *group, GError **error)
{
  g_autoptr (GKeyFile) key_file = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *directory = NULL;
  g_autofree char *shown = NULL;
  gsize length = 0;

  kvev_return_val_if_fail (config != NULL, FALSE);
  kvev_return_val_if_fail (path != NULL, FALSE);
  kvev_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* Read first, then parsed: g_key_file_load_from_file () reports a
   * directory or a FIFO as a parse error, and this way a pipe (a shell's
   * <(...)) can be the file.  GLib's message names the path. */
  if (!g_file_get_contents (path, &contents, &length, error))
    return FALSE;
  key_file = g_key_file_new ();
  directory = key_file_directory (path);
  if (g_key_file_load_from_data (key_file, contents, length, G_KEY_FILE_NONE, error)
      && config_load_key_file_in (config, key_file, group, directory, error))
    return TRUE;
  shown = g_filename_display_name (path);
  g_prefix_error (error, "%s: ", shown);
  return FALSE;
}

/* GOption hands the callback the option as the user wrote its name:
 * "--kv-events-dp-rank". */
static const Flag *
flag_of_option (const char *option_name)
{
  const char *name = option_name;

  if (g_str_has_prefix (name, "--"))
    name += 2;
  for (gsize i = 0; i < N_FLAGS; i++)
    if (strcmp (option_names[i], name) == 0)
      return &flags[i];
  return NULL;
}

/* The group's user data.  GOption reverts what it stored itself when a
 * parse fails, but callback options are ours to revert: the values as
 * they were before the parse, put back by the error hook, so a failed
 * parse leaves the configuration as it found it, as a key file does. */
typedef struct
{
  KvevConfig *config;
  KvevConfig *before; /* during a parse */
  /* With --kv-events-config-file: the file, and the flags the command
   * line set, which the file must not override. */
  char *file;
  gboolean on_command_line[N_FLAGS];
} OptionGroupData;

#define CONFIG_FILE_OPTION "kv-events-config-file"

static void
option_group_data_free (gpointer data)
{
  OptionGroupData *group_data = data;

  g_clear_pointer (&group_data->before, kvev_config_free);
  g_free (group_data->file);
  g_free (group_data);
}

static gboolean
option_pre_parse (GOptionContext *context G_GNUC_UNUSED, GOptionGroup *group G_GNUC_UNUSED,
                  gpointer data, GError **error G_GNUC_UNUSED)
{
  OptionGroupData *group_data = data;

  g_clear_pointer (&group_data->before, kvev_config_free);
  group_data->before = kvev_config_copy (group_data->config);
  g_clear_pointer (&group_data->file, g_free);
  memset (group_data->on_command_line, 0, sizeof group_data->on_command_line);
  return TRUE;
}

/* The file goes under the flags however the command line orders them, so
 * it is loaded once every option is known: onto the values from before
 * the parse, then the command line's put back on top.  A failure here
 * fails the parse, and the error hook restores the snapshot. */
static gboolean
option_post_parse (GOptionContext *context G_GNUC_UNUSED, GOptionGroup *group G_GNUC_UNUSED,
                   gpointer data, GError **error)
{
  OptionGroupData *group_data = data;
  g_autoptr (KvevConfig) work = NULL;

  if (group_data->file == NULL)
    return TRUE;
  work = kvev_config_copy (group_data->before);
  if (!kvev_config_load_file (work, group_data->file, NULL, error))
    {
      g_prefix_error (error, "--%s: ", CONFIG_FILE_OPTION);
      return FALSE;
    }
  for (gsize i = 0; i < N_FLAGS; i++)
    if (group_data->on_command_line[i])
      {
        FlagValue value = { 0 };

        flag_load (group_data->config, &flags[i], &value);
        flag_store (work, &flags[i], &value);
      }
  for (gsize i = 0; i < N_FLAGS; i++)
    flag_swap (group_data->config, work, &flags[i]);
  return TRUE;
}

/* Called for every group when any option of the command line is bad, or
 * when any group's hook fails: puts the snapshot back.  No post-parse
 * hook drops the snapshot, because GLib runs the main group's post-parse
 * hook after ours and the parse fails when that one does.  The snapshot
 * lives until the next parse or the group's end.  What this leaves: a
 * second parse of the same context that fails in an earlier group's
 * pre-parse hook, before ours took a new snapshot, would put back the
 * values from before the first parse.  GLib has no hook for "the parse
 * is over", and a main group that validates in its post-parse hook is
 * far more common than that. */
static void
option_parse_failed (GOptionContext *context G_GNUC_UNUSED, GOptionGroup *group G_GNUC_UNUSED,
                     gpointer data, GError **error G_GNUC_UNUSED)
{
  OptionGroupData *group_data = data;

  if (group_data->before == NULL)
    return;
  for (gsize i = 0; i < N_FLAGS; i++)
    flag_swap (group_data->config, group_data->before, &flags[i]);
  g_clear_pointer (&group_data->before, kvev_config_free);
}

static gboolean
option_parse_file (const char *option_name G_GNUC_UNUSED, const char *value, gpointer data,
                   GError **error G_GNUC_UNUSED)
{
  OptionGroupData *group_data = data;

  /* The last one wins, as for every other option. */
  g_free (group_data->file);
  group_data->file = g_strdup (value);
  return TRUE;
}

static gboolean
option_parse (const char *option_name, const char *value, gpointer data, GError **error)
{
  OptionGroupData *group_data = data;
  KvevConfig *config = group_data->config;
  const Flag *flag = flag_of_option (option_name);

  if (flag == NULL)
    {
      set_unknown_flag_error (option_name, error);
      return FALSE;
    }
  /* Only booleans take an optional argument; alone, they switch on. */
  if (value == NULL && flag->type == FLAG_BOOLEAN)
    value = "true";
  if (value == NULL)
    {
      g_autofree char *shown = kvev_escape_for_message (option_name);

      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE, _ ("Missing value for %s"), shown);
      return FALSE;
    }
  if (!config_set_flag (config, flag, value, error))
    return FALSE;
  group_data->on_command_line[flag - flags] = TRUE;
  return TRUE;
}

/* g_option_group_set_translation_domain would call dgettext before our
 * domain is bound; kvev_gettext binds it first. */
static const char *
option_translate (const char *text, gpointer data G_GNUC_UNUSED)
{
  return kvev_gettext (text);
}

static GOptionGroup *
option_group_new (KvevConfig *config, gboolean with_file)
{
  GOptionEntry entries[N_FLAGS + 2];
  GOptionEntry *entry = entries;
  GOptionGroup *group;
  OptionGroupData *group_data;

  derived_tables_init ();

  group_data = g_new0 (OptionGroupData, 1);
  group_data->config = config;
  /* Descriptions stay msgids here; the translate function turns them
   * into the user's language when --help prints them. */
  group = g_option_group_new ("kv-events", N_ ("KV event publisher options:"),
                              N_ ("Show KV event publisher options"), group_data,
                              option_group_data_free);
  g_option_group_set_translate_func (group, option_translate, NULL, NULL);
  g_option_group_set_parse_hooks (group, option_pre_parse, with_file ? option_post_parse : NULL);
  g_option_group_set_error_hook (group, option_parse_failed);

  memset (entries, 0, sizeof entries);
  if (with_file)
    {
      entry->long_name = CONFIG_FILE_OPTION;
      entry->flags = G_OPTION_FLAG_FILENAME;
      entry->arg = G_OPTION_ARG_CALLBACK;
      entry->arg_data = (gpointer) option_parse_file;
      entry->description = N_ ("Read the [kv_events] group of the key file FILE first; the other "
                               "options override it wherever they stand, and a relative path in "
                               "it is relative to its directory");
      entry->arg_description = N_ ("FILE");
      entry++;
    }
  for (gsize i = 0; i < N_FLAGS; i++, entry++)
    {
      entry->long_name = option_names[i];
      entry->short_name = 0;
      entry->flags
          = flags[i].type == FLAG_BOOLEAN ? G_OPTION_FLAG_OPTIONAL_ARG : G_OPTION_FLAG_NONE;
      entry->arg = G_OPTION_ARG_CALLBACK;
      entry->arg_data = (gpointer) option_parse;
      entry->description = flags[i].help;
      entry->arg_description = flags[i].arg;
    }
  /* The group copies the array; the strings it points to are static. */
  g_option_group_add_entries (group, entries);
  return group;
}

GOptionGroup *
kvev_config_option_group (KvevConfig *config)
{
  kvev_return_val_if_fail (config != NULL, NULL);

  return option_group_new (config, FALSE);
}

GOptionGroup *
kvev_config_option_group_with_file (KvevConfig *config)
{
  kvev_return_val_if_fail (config != NULL, NULL);

  return option_group_new (config, TRUE);
}

gboolean
kvev_config_validate (const KvevConfig *config, GError **error)
{
  g_autoptr (KvevSettings) settings = NULL;

  kvev_return_val_if_fail (config != NULL, FALSE);
  kvev_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  settings = kvev_settings_new (config, error);
  return settings != NULL;
}
