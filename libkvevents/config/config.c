/* config.c: KvevConfig, the public object a master fills: one value for
 * each row of the flag table, made, copied, set and read through the
 * rows, and checked by making settings of it.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config-private.h"

#include "precondition.h"
#include "settings.h"

#include <string.h>

static KvevConfig *
config_alloc (void)
{
  KvevConfig *config = g_new0 (KvevConfig, 1);

  config->values = g_new0 (KvevFlagValue, kvev_flag_count);
  return config;
}

gboolean
kvev_config_set_flag (KvevConfig *config, const KvevFlag *flag, const char *text, GError **error)
{
  KvevFlagValue value = { 0 };

  if (!kvev_flag_value_parse (flag, text, &value, error))
    return FALSE;
  kvev_flag_value_store (flag, kvev_config_slot (config, flag), &value);
  return TRUE;
}

void
kvev_config_exchange (KvevConfig *a, KvevConfig *b)
{
  KvevFlagValue *saved = a->values;

  /* Strings change owner with their values. */
  a->values = b->values;
  b->values = saved;
}

KvevConfig *
kvev_config_new (void)
{
  KvevConfig *config = config_alloc ();

  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];
      KvevFlagValue value = { 0 };

      kvev_flag_value_default (flag, &value);
      kvev_flag_value_store (flag, kvev_config_slot (config, flag), &value);
    }
  return config;
}

KvevConfig *
kvev_config_copy (const KvevConfig *config)
{
  KvevConfig *copy;

  kvev_return_val_if_fail (config != NULL, NULL);

  copy = config_alloc ();
  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];

      kvev_flag_value_store (flag, kvev_config_slot (copy, flag), kvev_config_peek (config, flag));
    }
  return copy;
}

void
kvev_config_free (KvevConfig *config)
{
  if (config == NULL)
    return;
  for (gsize i = 0; i < kvev_flag_count; i++)
    {
      const KvevFlag *flag = &kvev_flag_table[i];

      kvev_flag_value_clear (flag, kvev_config_slot (config, flag));
    }
  g_free (config->values);
  g_free (config);
}

gboolean
kvev_config_set (KvevConfig *config, const char *flag, const char *value, GError **error)
{
  const KvevFlag *entry;

  kvev_return_val_if_fail (config != NULL, FALSE);
  kvev_return_val_if_fail (flag != NULL, FALSE);
  kvev_return_val_if_fail (value != NULL, FALSE);
  kvev_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  entry = kvev_flag_lookup (flag);
  if (entry == NULL)
    {
      kvev_flag_set_unknown_error (flag, error);
      return FALSE;
    }
  return kvev_config_set_flag (config, entry, value, error);
}

char *
kvev_config_get (const KvevConfig *config, const char *flag)
{
  const KvevFlag *entry;

  kvev_return_val_if_fail (config != NULL, NULL);
  kvev_return_val_if_fail (flag != NULL, NULL);

  entry = kvev_flag_lookup (flag);
  if (entry == NULL)
    return NULL;
  return kvev_flag_value_format (entry, kvev_config_peek (config, entry));
}

const char *const *
kvev_config_flags (void)
{
  return kvev_flag_names ();
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
