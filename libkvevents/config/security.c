/* security.c: reading and checking the security flags; see security.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "security.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* A Z85 key line is 41 bytes: 40 characters and a newline.  The secret
 * key file holds one, and the bound leaves room for the blanks around it
 * that an editor may add.  The allowed-clients file holds one line per
 * subscriber, and comments: a mebibyte is some 25 000 keys, far more
 * subscribers than one master serves. */
#define KVEV_SECRET_KEY_FILE_MAX 1024
#define KVEV_ALLOWED_CLIENTS_FILE_MAX (1024 * 1024)

/* Reads a key file whole into a NUL-terminated buffer of *length bytes
 * (plus the NUL).  Only a regular file of at most max_size bytes is
 * read: a FIFO nobody writes would hang validation, and /dev/zero would
 * grow the master until it is killed.  O_NONBLOCK keeps the open of a
 * FIFO from waiting for a writer, and O_NOCTTY a terminal named by
 * mistake from becoming the master's; the checks are made on the
 * descriptor opened, so the file cannot be swapped between them and the
 * read.  A
 * secret must also be out of reach of group and others: a leaked secret
 * key lets anyone impersonate the publisher.  The caller wipes a
 * secret's buffer with kvev_secret_wipe() before freeing it. */
static char *
read_key_file (const char *flag, const char *path, gboolean secret, gsize max_size, gsize *length,
               GError **error)
{
  char *contents = NULL;
  gsize total = 0;
  struct stat st;
  int saved = 0;
  int fd;

  fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 || fstat (fd, &st) != 0)
    {
      saved = errno;
      goto failed;
    }
  if (!S_ISREG (st.st_mode))
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   _ ("%s \"%s\" is not a regular file"), flag, path);
      goto out;
    }
  if (secret && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   _ ("%s \"%s\" is accessible by group or others (mode %04o); "
                      "it holds a secret key: chmod 600 it"),
                   flag, path, (unsigned) (st.st_mode & 07777));
      goto out;
    }
  if (st.st_size < 0 || (guint64) st.st_size > max_size)
    goto too_large;

  /* One byte more than the bound, so that a file that grew after fstat()
   * is still caught; one more for the NUL.  The pages a short file leaves
   * unwritten are never touched. */
  contents = g_malloc (max_size + 2);
  while (total <= max_size)
    {
      ssize_t n = read (fd, contents + total, max_size + 1 - total);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          saved = errno;
          goto failed;
        }
      if (n == 0)
        break;
      total += (gsize) n;
    }
  contents[total] = '\0';
  if (total > max_size)
    goto too_large;
  if (memchr (contents, '\0', total) != NULL)
    {
      g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                   _ ("%s \"%s\" holds a NUL byte: it is not a text file"), flag, path);
      goto out;
    }
  g_close (fd, NULL);
  *length = total;
  return contents;

too_large:
  g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE, _ ("%s \"%s\" is larger than %u bytes"),
               flag, path, (guint) max_size);
  goto out;
failed:
  g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE, _ ("Cannot read %s \"%s\": %s"), flag,
               path, g_strerror (saved));
out:
  if (contents != NULL)
    {
      if (secret)
        kvev_secret_wipe (contents, total + 1);
      g_free (contents);
    }
  if (fd >= 0)
    g_close (fd, NULL);
  return NULL;
}

static gboolean
load_secret_key (KvevSecurity *security, const char *path, GError **error)
{
  const char *flag = "kv_events_curve_secret_key_file";
  gsize length = 0;
  char *contents = read_key_file (flag, path, TRUE, KVEV_SECRET_KEY_FILE_MAX, &length, error);
  guint8 key[KVEV_KEY_BYTES];
  gboolean ok;

  if (contents == NULL)
    return FALSE;
  /* g_strstrip() moves the key within the buffer, which is wiped whole. */
  g_strstrip (contents);
  ok = kvev_z85_decode_key (contents, key);
  if (ok)
    memcpy (security->secret_key, contents, KVEV_Z85_KEY_LEN + 1);
  else
    g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                 _ ("%s \"%s\" does not hold a Z85 secret key (40 characters)"), flag, path);
  kvev_secret_wipe (key, sizeof key);
  kvev_secret_wipe (contents, length + 1);
  g_free (contents);
  return ok;
}

static gboolean
load_allowed_clients (KvevSecurity *security, const char *path, GError **error)
{
  const char *flag = "kv_events_curve_allowed_clients_file";
  gsize length = 0;
  g_autofree char *contents
      = read_key_file (flag, path, FALSE, KVEV_ALLOWED_CLIENTS_FILE_MAX, &length, error);
  g_auto (GStrv) lines = NULL;
  guint i;

  if (contents == NULL)
    return FALSE;
  security->allowed_clients
      = g_hash_table_new_full (g_bytes_hash, g_bytes_equal, (GDestroyNotify) g_bytes_unref, NULL);
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
                       _ ("%s \"%s\", line %u: \"%s\" is not a Z85 public key (40 characters)"),
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

      if (*digits == '\0' || strspn (digits, "0123456789") != strlen (digits)
          || strlen (digits) > 3)
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
                       _ ("Invalid entry \"%s\" in kv_events_allowed_addresses: expected an IPv4 "
                          "or IPv6 address, optionally with a /prefix"),
                       shown);
          return FALSE;
        }
      g_array_append_val (security->allowed_addresses, range);
    }
  return TRUE;
}

KvevSecurity *
kvev_security_load (const char *secret_key_file, const char *allowed_clients_file,
                    const char *allowed_addresses, const KvevEndpoint *bind_endpoint,
                    GError **error)
{
  g_autoptr (KvevSecurity) security = g_new0 (KvevSecurity, 1);

  if (secret_key_file[0] != '\0' && !load_secret_key (security, secret_key_file, error))
    return NULL;
  if (allowed_clients_file[0] != '\0')
    {
      if (secret_key_file[0] == '\0')
        {
          g_set_error (error, KVEV_ERROR, KVEV_ERROR_INCOMPLETE,
                       _ ("kv_events_curve_allowed_clients_file needs "
                          "kv_events_curve_secret_key_file: client keys mean nothing without "
                          "CURVE"));
          return NULL;
        }
      if (!load_allowed_clients (security, allowed_clients_file, error))
        return NULL;
    }
  if (allowed_addresses[0] != '\0')
    {
      if (bind_endpoint->scheme != KVEV_ENDPOINT_TCP)
        {
          g_set_error (error, KVEV_ERROR, KVEV_ERROR_INVALID_VALUE,
                       _ ("kv_events_allowed_addresses applies only to a tcp:// "
                          "kv_events_bind_endpoint"));
          return NULL;
        }
      if (!load_allowed_addresses (security, allowed_addresses, error))
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
  kvev_secret_wipe (security->secret_key, sizeof security->secret_key);
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
kvev_security_warn_if_exposed (const KvevEndpoint *bind_endpoint, const KvevSecurity *security)
{
  if (security->secret_key[0] != '\0' || security->allowed_addresses != NULL
      || !kvev_endpoint_is_wildcard (bind_endpoint))
    return;
  g_warning (_ ("kv_events_bind_endpoint \"%s\" listens on every interface without "
                "protection: anyone who reaches it sees every tenant's object keys.  Set "
                "kv_events_curve_secret_key_file (with kv_events_curve_allowed_clients_file) "
                "or kv_events_allowed_addresses, or bind a loopback or private address"),
             bind_endpoint->text);
}
