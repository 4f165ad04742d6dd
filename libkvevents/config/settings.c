/* settings.c: one validation pass over a configuration; see settings.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "settings.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

static gboolean
check_required (const KvevConfig *config, GError **error)
{
  if (config->bind_endpoint[0] == '\0')
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INCOMPLETE,
                   /* TRANSLATORS: two flag names; "true" is the value the
                    * user typed, keep it. */
                   _ ("%s must be set when %s is true"), "kv_events_bind_endpoint",
                   "enable_kv_events");
      return FALSE;
    }
  if (config->backend_id[0] == '\0')
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INCOMPLETE, _ ("%s must be set when %s is true"),
                   "kv_events_backend_id", "enable_kv_events");
      return FALSE;
    }
  return TRUE;
}

/* Parses a non-empty endpoint into *parsed; the message names @flag. */
static gboolean
parse_endpoint (const char *flag, const char *text, KvevEndpoint **parsed, GError **error)
{
  g_autoptr (GError) endpoint_error = NULL;
  g_autofree char *shown = NULL;

  *parsed = kvev_endpoint_parse (text, &endpoint_error);
  if (*parsed != NULL)
    return TRUE;
  shown = kvev_escape_for_message (text);
  g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
               /* TRANSLATORS: an endpoint, the flag name, then why
                * it cannot be bound, an already translated message. */
               _ ("Invalid value \"%s\" for %s: %s"), shown, flag, endpoint_error->message);
  return FALSE;
}

static gboolean
same_socket (const KvevEndpoint *endpoint, const KvevEndpoint *other)
{
  return other != NULL && strcmp (endpoint->text, other->text) == 0;
}

/* The replay and snapshot sockets take the live socket's keys and policy:
 * an address list needs a tcp:// endpoint there too, and no two sockets
 * can share one.  @other is the other side socket's endpoint as
 * configured, "" for none. */
static gboolean
check_side_endpoint (const KvevConfig *config, const KvevSettings *settings, const char *flag,
                     const KvevEndpoint *endpoint, const char *other_flag, const char *other,
                     GError **error)
{
  gboolean same_as_other = strcmp (endpoint->text, other) == 0;

  /* A wildcard port or path takes a fresh one each: equal is fine then. */
  if (!endpoint->fresh && (same_socket (endpoint, settings->bind_endpoint) || same_as_other))
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   /* TRANSLATORS: two flag names. */
                   _ ("%s must differ from %s: each is a socket of its own"), flag,
                   same_as_other ? other_flag : "kv_events_bind_endpoint");
      return FALSE;
    }
  if (config->allowed_addresses[0] != '\0' && endpoint->scheme != KVEV_ENDPOINT_TCP)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   _ ("kv_events_allowed_addresses applies only to tcp:// endpoints, and "
                      "%s is not one"),
                   flag);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_side_endpoint (const KvevConfig *config, KvevSettings *settings, const char *flag,
                     const char *text, KvevEndpoint **parsed, const char *other_flag,
                     const char *other, GError **error)
{
  if (text[0] == '\0')
    return TRUE;
  return parse_endpoint (flag, text, parsed, error)
         && check_side_endpoint (config, settings, flag, *parsed, other_flag, other, error);
}

static gboolean
parse_endpoints (const KvevConfig *config, KvevSettings *settings, GError **error)
{
  return parse_endpoint ("kv_events_bind_endpoint", config->bind_endpoint, &settings->bind_endpoint,
                         error)
         && parse_side_endpoint (config, settings, "kv_events_replay_endpoint",
                                 config->replay_endpoint, &settings->replay_endpoint,
                                 "kv_events_snapshot_endpoint", config->snapshot_endpoint, error)
         && parse_side_endpoint (config, settings, "kv_events_snapshot_endpoint",
                                 config->snapshot_endpoint, &settings->snapshot_endpoint,
                                 "kv_events_replay_endpoint", config->replay_endpoint, error);
}

/* 128 bits from the system's random source: two publishers, or a master
 * and its restart, never share one. */
static void
draw_instance_id (KvevSettings *settings)
{
  gsize got = 0;
  guint i;

  while (got < sizeof settings->instance_id)
    {
      gssize n = getrandom (settings->instance_id + got, sizeof settings->instance_id - got, 0);

      if (n > 0)
        got += (gsize) n;
      else if (errno != EINTR)
        g_error ("%s: getrandom: %s", G_STRLOC, g_strerror (errno));
    }
  for (i = 0; i < sizeof settings->instance_id; i++)
    g_snprintf (settings->instance_id_hex + 2 * i, 3, "%02x", settings->instance_id[i]);
}

/* These go on the wire as msgpack str, in every event: one invalid byte
 * would make strict readers reject every payload. */
static gboolean
check_wire_strings (const KvevConfig *config, GError **error)
{
  const struct
  {
    const char *flag;
    const char *value;
  } wire_strings[] = {
    { "kv_events_backend_id", config->backend_id },
    { "kv_events_model_name", config->model_name },
    { "kv_events_additional_salt", config->additional_salt },
    { "kv_events_lora_name", config->lora_name },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (wire_strings); i++)
    if (!g_utf8_validate (wire_strings[i].value, -1, NULL))
      {
        g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                     /* TRANSLATORS: a flag name. */
                     _ ("Invalid value for %s: not valid UTF-8 (it is sent as a msgpack "
                        "string)"),
                     wire_strings[i].flag);
        return FALSE;
      }
  return TRUE;
}

static gboolean
check_send_budget (const KvevConfig *config, GError **error)
{
  if (config->send_buffer_bytes != 0 && config->send_hwm == 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   /* TRANSLATORS: flag names and their values; keep them. */
                   _ ("%s=0 lets a subscriber that stops reading hold any number of "
                      "messages, which %s cannot bound: set %s=0 as well to allow that"),
                   "kv_events_send_hwm", "kv_events_send_buffer_bytes",
                   "kv_events_send_buffer_bytes");
      return FALSE;
    }
  if (config->send_buffer_bytes != 0
      && config->send_buffer_bytes / config->send_hwm < KVEV_MIN_MESSAGE_BYTES)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   /* TRANSLATORS: two flag names, then a number of bytes. */
                   _ ("%s divided by %s leaves less than %u bytes a message: raise the "
                      "first or lower the second"),
                   "kv_events_send_buffer_bytes", "kv_events_send_hwm",
                   (guint) KVEV_MIN_MESSAGE_BYTES);
      return FALSE;
    }
  return TRUE;
}

/* Every payload stays within the share of the send budget that one of
 * kv_events_send_hwm messages may take, and within what every known
 * reader takes. */
static gsize
message_limit (const KvevConfig *config)
{
  if (config->send_buffer_bytes == 0 || config->send_hwm == 0)
    return KVEV_MAX_MESSAGE_BYTES;
  return MIN (config->send_buffer_bytes / config->send_hwm, KVEV_MAX_MESSAGE_BYTES);
}

KvevSettings *
kvev_settings_new (const KvevConfig *config, GError **error)
{
  g_autoptr (KvevSettings) settings = g_new0 (KvevSettings, 1);

  /* A disabled publisher never binds, so what the other flags say cannot
   * stop the master from starting; it still answers its calls as the
   * flags say. */
  if (config->enable)
    {
      if (!check_required (config, error) || !parse_endpoints (config, settings, error)
          || !check_wire_strings (config, error) || !check_send_budget (config, error))
        return NULL;
      /* The security flags name files and address lists: reading them
       * here, in every build, reports a bad key at startup rather than at
       * the first bind. */
      settings->security
          = kvev_security_load (config->curve_secret_key_file, config->curve_allowed_clients_file,
                                config->allowed_addresses, settings->bind_endpoint, error);
      if (settings->security == NULL)
        return NULL;
    }

  settings->enable = config->enable;
  settings->topic = g_strdup (config->topic);
  settings->topic_len = strlen (config->topic);
  settings->send_hwm = config->send_hwm;
  settings->backend_id = g_strdup (config->backend_id);
  settings->model_name = g_strdup (config->model_name);
  settings->block_size = config->block_size;
  settings->additional_salt = g_strdup (config->additional_salt);
  settings->lora_name = g_strdup (config->lora_name);
  settings->dp_rank = config->dp_rank;
  settings->emit_legacy_compat = config->emit_legacy_compat;
  settings->emit_object_key = config->emit_object_key;
  settings->non_utf8 = config->non_utf8;
  settings->queue_capacity = config->queue_capacity;
  settings->max_batch_events = config->max_batch_events;
  settings->batch_wait_us = config->batch_wait_us;
  settings->close_timeout_ms = config->close_timeout_ms;
  settings->message_limit = message_limit (config);
  settings->heartbeat_ms = config->heartbeat_ms;
  settings->send_wait_ms = config->send_wait_ms;
  settings->io_threads = config->io_threads;
  settings->emit_publisher_id = config->emit_publisher_id;
  draw_instance_id (settings);
  settings->replay_buffer_messages = config->replay_buffer_messages;
  settings->replay_buffer_bytes = config->replay_buffer_bytes;
  settings->replay_rate_bytes = config->replay_rate_bytes;
  settings->snapshot_duty_percent = config->snapshot_duty_percent;
  return g_steal_pointer (&settings);
}

void
kvev_settings_free (KvevSettings *settings)
{
  if (settings == NULL)
    return;
  kvev_security_free (settings->security);
  kvev_endpoint_free (settings->bind_endpoint);
  g_free (settings->topic);
  g_free (settings->backend_id);
  g_free (settings->model_name);
  g_free (settings->additional_salt);
  g_free (settings->lora_name);
  kvev_endpoint_free (settings->replay_endpoint);
  kvev_endpoint_free (settings->snapshot_endpoint);
  g_free (settings);
}
