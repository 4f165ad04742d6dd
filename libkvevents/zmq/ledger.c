/* ledger.c: counts of the bytes libzmq holds for peers; see ledger.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "ledger.h"

#include "counter.h"

struct _KvevLedger
{
  gint refs;
  gsize bytes; /* atomic */
  KvevLedger *total;
};

/* What a message carries until libzmq frees it. */
typedef struct
{
  KvevLedger *ledger;
  gsize size;
  GDestroyNotify release;
  gpointer release_data;
} Entry;

KvevLedger *
kvev_ledger_new (KvevLedger *total)
{
  KvevLedger *ledger = g_new0 (KvevLedger, 1);

  ledger->refs = 1;
  ledger->total = total != NULL ? kvev_ledger_ref (total) : NULL;
  return ledger;
}

KvevLedger *
kvev_ledger_ref (KvevLedger *ledger)
{
  g_atomic_int_inc (&ledger->refs);
  return ledger;
}

void
kvev_ledger_unref (KvevLedger *ledger)
{
  if (ledger == NULL || !g_atomic_int_dec_and_test (&ledger->refs))
    return;
  kvev_ledger_unref (ledger->total);
  g_free (ledger);
}

gsize
kvev_ledger_bytes (const KvevLedger *ledger)
{
  return kvev_counter_get (&ledger->bytes);
}

static void
count (KvevLedger *ledger, gsize size, gboolean add)
{
  for (; ledger != NULL; ledger = ledger->total)
    {
      if (add)
        __atomic_fetch_add (&ledger->bytes, size, __ATOMIC_RELAXED);
      else
        __atomic_fetch_sub (&ledger->bytes, size, __ATOMIC_RELAXED);
    }
}

static void
entry_free (void *data, void *hint)
{
  Entry *entry = hint;

  count (entry->ledger, entry->size, FALSE);
  if (entry->release != NULL)
    entry->release (entry->release_data);
  kvev_ledger_unref (entry->ledger);
  g_free (entry);
}

gboolean
kvev_ledger_init_data (KvevLedger *ledger, zmq_msg_t *message, void *data, gsize size,
                       GDestroyNotify release, gpointer release_data)
{
  Entry *entry = g_new (Entry, 1);

  *entry = (Entry){ kvev_ledger_ref (ledger), size, release, release_data };
  count (ledger, size, TRUE);
  if (zmq_msg_init_data (message, data, size, entry_free, entry) == 0)
    return TRUE;
  entry_free (data, entry);
  zmq_msg_init (message);
  return FALSE;
}

static void
close_payload (gpointer data)
{
  zmq_msg_t *payload = data;

  zmq_msg_close (payload);
  g_free (payload);
}

gboolean
kvev_ledger_init_shared (KvevLedger *ledger, zmq_msg_t *message, zmq_msg_t *payload)
{
  zmq_msg_t *copy = g_new (zmq_msg_t, 1);

  zmq_msg_init (copy);
  zmq_msg_copy (copy, payload);
  return kvev_ledger_init_data (ledger, message, zmq_msg_data (copy), zmq_msg_size (copy),
                                close_payload, copy);
}
