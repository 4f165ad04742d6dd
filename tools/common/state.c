/* state.c: a subscriber's rebuilt availability; see state.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "state.h"

#include "kvtool.h"

#include <stdlib.h>
#include <string.h>

/* An entry is its four members joined by newlines: JSON text escapes
 * every newline inside a string, so none is ambiguous. */
#define SEPARATOR '\n'

struct _KvtState
{
  GHashTable *entries; /* a set of joined members */
};

KvtState *
kvt_state_new (void)
{
  KvtState *state = g_new0 (KvtState, 1);

  state->entries = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return state;
}

void
kvt_state_free (KvtState *state)
{
  if (state == NULL)
    return;
  g_hash_table_unref (state->entries);
  g_free (state);
}

/* backend and tenant joined, with the separator after them: the prefix of
 * every entry they hold. */
static char *
scope_of (const char *backend, const char *tenant)
{
  return tenant != NULL ? g_strdup_printf ("%s%c%s%c", backend, SEPARATOR, tenant, SEPARATOR)
                        : g_strdup_printf ("%s%c", backend, SEPARATOR);
}

static void
remove_scope (KvtState *state, const char *scope)
{
  GHashTableIter iter;
  gpointer key;

  g_hash_table_iter_init (&iter, state->entries);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if (g_str_has_prefix (key, scope))
      g_hash_table_iter_remove (&iter);
}

gboolean
kvt_state_apply (KvtState *state, const KvtEvent *event)
{
  g_autofree char *scope = NULL;
  char *entry;

  if (event->backend_id == NULL || event->tenant_id == NULL)
    return FALSE;
  scope = scope_of (event->backend_id, event->tenant_id);
  if (event->kind == KVT_EVENT_CLEARED)
    {
      remove_scope (state, scope);
      return TRUE;
    }
  if (event->object_key == NULL || event->medium == NULL)
    return FALSE;
  entry = g_strdup_printf ("%s%s%c%s", scope, event->object_key, SEPARATOR, event->medium);
  if (event->kind == KVT_EVENT_STORED)
    g_hash_table_add (state->entries, entry);
  else
    {
      g_hash_table_remove (state->entries, entry);
      g_free (entry);
    }
  return TRUE;
}

void
kvt_state_replace_backend (KvtState *state, const char *backend, KvtState *snapshot)
{
  g_autofree char *scope = scope_of (backend, NULL);
  GHashTableIter iter;
  gpointer key;

  remove_scope (state, scope);
  g_hash_table_iter_init (&iter, snapshot->entries);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      g_hash_table_iter_steal (&iter);
      g_hash_table_add (state->entries, key);
    }
}

guint
kvt_state_size (const KvtState *state)
{
  return g_hash_table_size (state->entries);
}

static gint
compare_entries (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

gboolean
kvt_state_write (const KvtState *state, const char *path, GError **error)
{
  static const char *const names[] = { "backend_id", "tenant_id", "object_key", "medium" };
  g_autofree gpointer *entries = NULL;
  g_autoptr (GString) text = g_string_new (NULL);
  guint n, i, m;

  entries = g_hash_table_get_keys_as_array (state->entries, &n);
  qsort (entries, n, sizeof *entries, compare_entries);
  for (i = 0; i < n; i++)
    {
      g_auto (GStrv) members = g_strsplit (entries[i], "\n", G_N_ELEMENTS (names));

      g_string_append_c (text, '{');
      for (m = 0; m < G_N_ELEMENTS (names) && members[m] != NULL; m++)
        g_string_append_printf (text, "%s\"%s\": %s", m > 0 ? ", " : "", names[m], members[m]);
      g_string_append (text, "}\n");
    }

  return kvt_write_in_place (path, text, error);
}
