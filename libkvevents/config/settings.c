/* settings.c: one validation pass over a configuration; see settings.h.
 * Every value goes where its row in the flag table says; what is checked
 * of the flags together, and what is worked out of them, is here.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "settings.h"

#include "config-private.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

static gpointer
settings_field (KvevSettings *settings, const KvevFlag *flag)
{
  return G_STRUCT_MEMBER_P (settings, flag->settings_offset);
}

/* Every value into its field, as the field's type has it; endpoints wait
 * for parse_endpoints (), since only an enabled publisher binds. */
static void
copy_values (KvevSettings *settings, const KvevConfig *config)
{
  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];
      const KvevFlagValue *value = kvev_config_peek (config, flag);
      gpointer field = settings_field (settings, flag);

      switch (flag->type)
        {
        case KVEV_FLAG_BOOLEAN:
          *(gboolean *) field = value->boolean;
          break;
        case KVEV_FLAG_UINT32:
          *(guint32 *) field = value->number;
          break;
        case KVEV_FLAG_WORD:
          *(guint *) field = value->word;
          break;
        case KVEV_FLAG_STRING:
        case KVEV_FLAG_PATH:
          *(char **) field = g_strdup (value->string);
          break;
        case KVEV_FLAG_ENDPOINT:
          break;
        }
    }
}

static gboolean
check_required (const KvevConfig *config, GError **error)
{
  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];

      if ((flag->checks & KVEV_FLAG_REQUIRED) && kvev_config_peek (config, flag)->string[0] == '\0')
        {
          g_set_error (error, KVEV_ERROR, KVEV_ERROR_INCOMPLETE,
                       /* TRANSLATORS: two flag names; "true" is the value the
                        * user typed, keep it. */
                       _ ("%s must be set when %s is true"), flag->name, "enable_kv_events");
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
parse_endpoints (KvevSettings *settings, const KvevConfig *config, GError **error)
{
  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];
      const char *text = kvev_config_peek (config, flag)->string;
      g_autoptr (GError) endpoint_error = NULL;
      g_autofree char *shown = NULL;
      KvevEndpoint *endpoint;

      if (flag->type != KVEV_FLAG_ENDPOINT || text[0] == '\0')
        continue;
      endpoint = kvev_endpoint_parse (text, &endpoint_error);
      if (endpoint == NULL)
        {
          shown = kvev_escape_for_message (text);
          g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                       /* TRANSLATORS: an endpoint, the flag name, then why
                        * it cannot be bound, an already translated message. */
                       _ ("Invalid value \"%s\" for %s: %s"), shown, flag->name,
                       endpoint_error->message);
          return FALSE;
        }
      *(KvevEndpoint **) settings_field (settings, flag) = endpoint;
    }
  return TRUE;
}

static gboolean
same_socket (const KvevEndpoint *endpoint, const KvevEndpoint *other)
{
  return other != NULL && strcmp (endpoint->text, other->text) == 0;
}

/* The replay and snapshot sockets take the live socket's keys and policy:
 * an address list needs a tcp:// endpoint there too, and no two sockets
 * can share one. */
static gboolean
check_side_endpoint (const KvevSettings *settings, const char *flag, const KvevEndpoint *endpoint,
                     const char *other_flag, const KvevEndpoint *other, GError **error)
{
  if (endpoint == NULL)
    return TRUE;
  /* A wildcard port or path takes a fresh one each: equal is fine then. */
  if (!endpoint->fresh
      && (same_socket (endpoint, settings->bind_endpoint) || same_socket (endpoint, other)))
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   /* TRANSLATORS: two flag names. */
                   _ ("%s must differ from %s: each is a socket of its own"), flag,
                   same_socket (endpoint, other) ? other_flag : "kv_events_bind_endpoint");
      return FALSE;
    }
  if (settings->allowed_addresses[0] != '\0' && endpoint->scheme != KVEV_ENDPOINT_TCP)
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
check_side_endpoints (const KvevSettings *settings, GError **error)
{
  return check_side_endpoint (settings, "kv_events_replay_endpoint", settings->replay_endpoint,
                              "kv_events_snapshot_endpoint", settings->snapshot_endpoint, error)
         && check_side_endpoint (settings, "kv_events_snapshot_endpoint",
                                 settings->snapshot_endpoint, "kv_events_replay_endpoint",
                                 settings->replay_endpoint, error);
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
check_wire_strings (KvevSettings *settings, GError **error)
{
  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];

      if ((flag->checks & KVEV_FLAG_UTF8)
          && !g_utf8_validate (*(char **) settings_field (settings, flag), -1, NULL))
        {
          g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                       /* TRANSLATORS: a flag name. */
                       _ ("Invalid value for %s: not valid UTF-8 (it is sent as a msgpack "
                          "string)"),
                       flag->name);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
check_send_budget (const KvevSettings *settings, GError **error)
{
  if (settings->send_buffer_bytes != 0 && settings->send_hwm == 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   /* TRANSLATORS: flag names and their values; keep them. */
                   _ ("%s=0 lets a subscriber that stops reading hold any number of "
                      "messages, which %s cannot bound: set %s=0 as well to allow that"),
                   "kv_events_send_hwm", "kv_events_send_buffer_bytes",
                   "kv_events_send_buffer_bytes");
      return FALSE;
    }
  if (settings->send_buffer_bytes != 0
      && settings->send_buffer_bytes / settings->send_hwm < KVEV_MIN_MESSAGE_BYTES)
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
message_limit (const KvevSettings *settings)
{
  if (settings->send_buffer_bytes == 0 || settings->send_hwm == 0)
    return KVEV_MAX_MESSAGE_BYTES;
  return MIN (settings->send_buffer_bytes / settings->send_hwm, KVEV_MAX_MESSAGE_BYTES);
}

KvevSettings *
kvev_settings_new (const KvevConfig *config, GError **error)
{
  g_autoptr (KvevSettings) settings = g_new0 (KvevSettings, 1);

  copy_values (settings, config);
  /* A disabled publisher never binds, so what the other flags say cannot
   * stop the master from starting; it still answers its calls as the
   * flags say. */
  if (settings->enable)
    {
      if (!check_required (config, error) || !parse_endpoints (settings, config, error)
          || !check_side_endpoints (settings, error) || !check_wire_strings (settings, error)
          || !check_send_budget (settings, error))
        return NULL;
      /* The security flags name files and address lists: reading them
       * here, in every build, reports a bad key at startup rather than at
       * the first bind. */
      settings->security = kvev_security_load (
          settings->curve_secret_key_file, settings->curve_allowed_clients_file,
          settings->allowed_addresses, settings->bind_endpoint, error);
      if (settings->security == NULL)
        return NULL;
    }

  settings->topic_len = strlen (settings->topic);
  settings->message_limit = message_limit (settings);
  draw_instance_id (settings);
  return g_steal_pointer (&settings);
}

void
kvev_settings_free (KvevSettings *settings)
{
  if (settings == NULL)
    return;
  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];
      gpointer field = settings_field (settings, flag);

      switch (flag->type)
        {
        case KVEV_FLAG_BOOLEAN:
        case KVEV_FLAG_UINT32:
        case KVEV_FLAG_WORD:
          break;
        case KVEV_FLAG_STRING:
        case KVEV_FLAG_PATH:
          g_free (*(char **) field);
          break;
        case KVEV_FLAG_ENDPOINT:
          kvev_endpoint_free (*(KvevEndpoint **) field);
          break;
        }
    }
  kvev_security_free (settings->security);
  g_free (settings);
}
