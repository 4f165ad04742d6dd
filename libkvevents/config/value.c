/* value.c: a flag's value: read from text as its row says, written back
 * as text, kept in a configuration; see flags.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "flags.h"

#include <string.h>

void
kvev_flag_value_default (const KvevFlag *flag, KvevFlagValue *value)
{
  switch (flag->type)
    {
    case KVEV_FLAG_BOOLEAN:
      value->boolean = flag->default_number != 0;
      return;
    case KVEV_FLAG_UINT32:
      value->number = flag->default_number;
      return;
    case KVEV_FLAG_WORD:
      value->word = flag->default_number;
      return;
    case KVEV_FLAG_STRING:
    case KVEV_FLAG_PATH:
    case KVEV_FLAG_ENDPOINT:
      value->string = (char *) flag->default_string;
      return;
    }
  g_return_if_reached ();
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

gboolean
kvev_flag_value_parse (const KvevFlag *flag, const char *text, KvevFlagValue *value, GError **error)
{
  g_autofree char *shown = NULL;

  switch (flag->type)
    {
    case KVEV_FLAG_BOOLEAN:
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

    case KVEV_FLAG_UINT32:
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

    case KVEV_FLAG_STRING:
    case KVEV_FLAG_PATH:
    case KVEV_FLAG_ENDPOINT:
      /* Any bytes: what a string must look like is for validate, which
       * sees the flags together.  Borrowed, as flags.h says. */
      value->string = (char *) text;
      return TRUE;

    case KVEV_FLAG_WORD:
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

char *
kvev_flag_value_format (const KvevFlag *flag, const KvevFlagValue *value)
{
  switch (flag->type)
    {
    case KVEV_FLAG_BOOLEAN:
      return g_strdup (value->boolean ? "true" : "false");
    case KVEV_FLAG_UINT32:
      return g_strdup_printf ("%" G_GUINT32_FORMAT, value->number);
    case KVEV_FLAG_WORD:
      return g_strdup (flag->words[value->word]);
    case KVEV_FLAG_STRING:
    case KVEV_FLAG_PATH:
    case KVEV_FLAG_ENDPOINT:
      return g_strdup (value->string);
    }
  g_return_val_if_reached (NULL);
}

void
kvev_flag_value_store (const KvevFlag *flag, KvevFlagValue *slot, const KvevFlagValue *value)
{
  switch (flag->type)
    {
    case KVEV_FLAG_BOOLEAN:
    case KVEV_FLAG_UINT32:
    case KVEV_FLAG_WORD:
      *slot = *value;
      return;
    case KVEV_FLAG_STRING:
    case KVEV_FLAG_PATH:
    case KVEV_FLAG_ENDPOINT:
      {
        char *old = slot->string;

        /* Duplicate before freeing: the new value may live in the old. */
        slot->string = g_strdup (value->string);
        g_free (old);
      }
      return;
    }
  g_return_if_reached ();
}

void
kvev_flag_value_clear (const KvevFlag *flag, KvevFlagValue *slot)
{
  switch (flag->type)
    {
    case KVEV_FLAG_BOOLEAN:
    case KVEV_FLAG_UINT32:
    case KVEV_FLAG_WORD:
      return;
    case KVEV_FLAG_STRING:
    case KVEV_FLAG_PATH:
    case KVEV_FLAG_ENDPOINT:
      g_clear_pointer (&slot->string, g_free);
      return;
    }
  g_return_if_reached ();
}
