/* security.c: reading and checking the security flags; see security.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "security.h"

#include "endpoint.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

/* Key files are small; anything larger is not a key file. */
#define KVEV_MAX_KEY_FILE_SIZE (1024 * 1024)

static const char z85_alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz"
                                   "ABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

gboolean
kvev_z85_decode_key (const char *z85, guint8 key[KVEV_KEY_BYTES])
{
  guint i, j;

  if (strlen (z85) != KVEV_Z85_KEY_LEN)
    return FALSE;
  for (i = 0; i < KVEV_Z85_KEY_LEN; i += 5)
    {
      guint64 value = 0;

      for (j = 0; j < 5; j++)
        {
          const char *digit = z85[i + j] != '\0' ? strchr (z85_alphabet, z85[i + j]) : NULL;

          if (digit == NULL)
            return FALSE;
          value = value * 85 + (guint64) (digit - z85_alphabet);
        }
      if (value > G_MAXUINT32)
        return FALSE;
      for (j = 0; j < 4; j++)
        key[i / 5 * 4 + j] = (guint8) (value >> (24 - 8 * j));
    }
  return TRUE;
}

/* Reads a file that holds a secret: it must be a regular file that
 * neither group nor others can read, since a leaked secret key lets
 * anyone impersonate the publisher. */
static char *
read_secret_file (const char *flag, const char *path, GError **error)
{
  struct stat st;
  char *contents = NULL;

  if (g_stat (path, &st) != 0)
    {
      int saved = errno;
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE, _("Cannot read %s \"%s\": %s"),
                   flag, path, g_strerror (saved));
      return NULL;
    }
  if (!S_ISREG (st.st_mode) || st.st_size > KVEV_MAX_KEY_FILE_SIZE)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   _("%s \"%s\" is not a key file"), flag, path);
      return NULL;
    }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   _("%s \"%s\" is accessible by group or others (mode %04o); "
                     "it holds a secret key: chmod 600 it"),
                   flag, path, (unsigned) (st.st_mode & 07777));
      return NULL;
    }
  if (!g_file_get_contents (path, &contents, NULL, NULL))
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE, _("Cannot read %s \"%s\""), flag,
                   path);
      return NULL;
    }
  return contents;
}

static char *
read_plain_file (const char *flag, const char *path, GError **error)
{
  g_autoptr (GError) local_error = NULL;
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, &local_error))
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE, _("Cannot read %s \"%s\": %s"),
                   flag, path, local_error->message);
      return NULL;
    }
  return contents;
}

static gboolean
load_secret_key (KvevSecurity *security, const char *path, GError **error)
{
  const char *flag = "kv_events_curve_secret_key_file";
  g_autofree char *contents = read_secret_file (flag, path, error);
  guint8 key[KVEV_KEY_BYTES];

  if (contents == NULL)
    return FALSE;
  g_strstrip (contents);
  if (!kvev_z85_decode_key (contents, key))
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   _("%s \"%s\" does not hold a Z85 secret key (40 characters)"), flag, path);
      return FALSE;
    }
  memcpy (security->secret_key, contents, KVEV_Z85_KEY_LEN + 1);
  return TRUE;
}

static gboolean
load_allowed_clients (KvevSecurity *security, const char *path, GError **error)
{
  const char *flag = "kv_events_curve_allowed_clients_file";
  g_autofree char *contents = read_plain_file (flag, path, error);
  g_auto (GStrv) lines = NULL;
  guint i;

  if (contents == NULL)
    return FALSE;
  security->allowed_clients = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
                                                     (GDestroyNotify) g_bytes_unref, NULL);
  lines = g_strsplit (contents, "\n", -1);
  for (i = 0; lines[i] != NULL; i++)
    {
      char *line = g_strstrip (lines[i]);
      guint8 key[KVEV_KEY_BYTES];

      if (line[0] == '\0' || line[0] == '#')
        continue;
      if (!kvev_z85_decode_key (line, key))
        {
          g_autofree char *shown = g_strescape (line, NULL);
          g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                       _("%s \"%s\", line %u: \"%s\" is not a Z85 public key (40 characters)"),
                       flag, path, i + 1, shown);
          return FALSE;
        }
      g_hash_table_add (security->allowed_clients, g_bytes_new (key, sizeof key));
    }
  return TRUE;
}

static gboolean
parse_range (const char *text, KvevAddressRange *range)
{
  g_autofree char *address = g_strdup (text);
  char *slash = strchr (address, '/');
  guint max_prefix;

  memset (range, 0, sizeof *range);
  if (slash != NULL)
    *slash = '\0';
  if (inet_pton (AF_INET, address, range->bytes) == 1)
    {
      range->family = AF_INET;
      max_prefix = 32;
    }
  else if (inet_pton (AF_INET6, address, range->bytes) == 1)
    {
      range->family = AF_INET6;
      max_prefix = 128;
    }
  else
    return FALSE;
  range->prefix = max_prefix;
  if (slash != NULL)
    {
      const char *digits = slash + 1;
      guint64 prefix;

      if (*digits == '\0' || strspn (digits, "0123456789") != strlen (digits) || strlen (digits) > 3)
        return FALSE;
      prefix = g_ascii_strtoull (digits, NULL, 10);
      if (prefix > max_prefix)
        return FALSE;
      range->prefix = (guint) prefix;
    }
  return TRUE;
}

static gboolean
load_allowed_addresses (KvevSecurity *security, const char *list, GError **error)
{
  g_auto (GStrv) items = g_strsplit (list, ",", -1);
  guint i;

  security->allowed_addresses = g_array_new (FALSE, FALSE, sizeof (KvevAddressRange));
  for (i = 0; items[i] != NULL; i++)
    {
      char *item = g_strstrip (items[i]);
      KvevAddressRange range;

      if (!parse_range (item, &range))
        {
          g_autofree char *shown = g_strescape (item, NULL);
          g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                       _("Invalid entry \"%s\" in kv_events_allowed_addresses: expected an IPv4 "
                         "or IPv6 address, optionally with a /prefix"),
                       shown);
          return FALSE;
        }
      g_array_append_val (security->allowed_addresses, range);
    }
  return TRUE;
}

KvevSecurity *
kvev_security_load (const KvevConfig *config, GError **error)
{
  g_autoptr (KvevSecurity) security = g_new0 (KvevSecurity, 1);

  if (config->curve_secret_key_file[0] != '\0'
      && !load_secret_key (security, config->curve_secret_key_file, error))
    return NULL;
  if (config->curve_allowed_clients_file[0] != '\0')
    {
      if (config->curve_secret_key_file[0] == '\0')
        {
          g_set_error (error, KVEV_ERROR, KVEV_ERROR_INCOMPLETE,
                       _("kv_events_curve_allowed_clients_file needs "
                         "kv_events_curve_secret_key_file: client keys mean nothing without "
                         "CURVE"));
          return NULL;
        }
      if (!load_allowed_clients (security, config->curve_allowed_clients_file, error))
        return NULL;
    }
  if (config->allowed_addresses[0] != '\0')
    {
      if (!g_str_has_prefix (config->bind_endpoint, "tcp://"))
        {
          g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                       _("kv_events_allowed_addresses applies only to a tcp:// "
                         "kv_events_bind_endpoint"));
          return NULL;
        }
      if (!load_allowed_addresses (security, config->allowed_addresses, error))
        return NULL;
    }
  return g_steal_pointer (&security);
}

void
kvev_security_free (KvevSecurity *security)
{
  if (security == NULL)
    return;
  /* The secret does not outlive its use in freed memory. */
  memset (security->secret_key, 0, sizeof security->secret_key);
  g_clear_pointer (&security->allowed_clients, g_hash_table_unref);
  g_clear_pointer (&security->allowed_addresses, g_array_unref);
  g_free (security);
}

static gboolean
range_contains (const KvevAddressRange *range, const guint8 *bytes)
{
  guint full = range->prefix / 8, rest = range->prefix % 8;

  if (memcmp (range->bytes, bytes, full) != 0)
    return FALSE;
  if (rest == 0)
    return TRUE;
  return ((range->bytes[full] ^ bytes[full]) & (guint8) (0xff << (8 - rest))) == 0;
}

gboolean
kvev_security_address_allowed (const KvevSecurity *security, const char *address)
{
  static const guint8 v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
  guint8 v4[4], v6[16];
  gboolean is_v4, is_v6;
  guint i;

  if (security->allowed_addresses == NULL)
    return TRUE;
  is_v4 = inet_pton (AF_INET, address, v4) == 1;
  is_v6 = !is_v4 && inet_pton (AF_INET6, address, v6) == 1;
  /* An IPv4 peer on a dual-stack socket shows as ::ffff:a.b.c.d. */
  if (is_v6 && memcmp (v6, v4_mapped, sizeof v4_mapped) == 0)
    {
      memcpy (v4, v6 + 12, 4);
      is_v4 = TRUE;
    }
  for (i = 0; i < security->allowed_addresses->len; i++)
    {
      const KvevAddressRange *range
          = &g_array_index (security->allowed_addresses, KvevAddressRange, i);

      if ((range->family == AF_INET && is_v4 && range_contains (range, v4))
          || (range->family == AF_INET6 && is_v6 && range_contains (range, v6)))
        return TRUE;
    }
  return FALSE;
}

void
kvev_security_warn_if_exposed (const KvevConfig *config, const KvevSecurity *security)
{
  if (security->secret_key[0] != '\0' || security->allowed_addresses != NULL
      || !kvev_endpoint_is_wildcard (config->bind_endpoint))
    return;
  g_warning (_("kv_events_bind_endpoint \"%s\" listens on every interface without "
               "protection: anyone who reaches it sees every tenant's object keys.  Set "
               "kv_events_curve_secret_key_file (with kv_events_curve_allowed_clients_file) "
               "or kv_events_allowed_addresses, or bind a loopback or private address"),
             config->bind_endpoint);
}
