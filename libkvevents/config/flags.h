/* flags.h: the kv_events flags as one table.  Each row says what a flag
 * is called, what type its value has, its default and limits, what
 * validation asks of it, its --help text, and which field of
 * KvevSettings carries it.  The configuration keeps one value a row,
 * the setters, the key file and the command line parse through the row,
 * kvev_config_flags () lists the rows and kvev_settings_new () copies
 * through them: a flag is its row and the settings field it lands in.
 * Inside config/ only.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_FLAGS_H
#define KVEVENTS_FLAGS_H

#include "internal.h"

G_BEGIN_DECLS

/* Each with the C type of its KvevSettings field. */
typedef enum
{
  KVEV_FLAG_BOOLEAN,  /* gboolean */
  KVEV_FLAG_UINT32,   /* guint32, from min to max */
  KVEV_FLAG_WORD,     /* guint: an enum whose values index the row's words */
  KVEV_FLAG_STRING,   /* char *, any bytes */
  KVEV_FLAG_PATH,     /* char *, a file name: see keyfile.c */
  KVEV_FLAG_ENDPOINT, /* KvevEndpoint *, NULL when "" or disabled */
} KvevFlagType;

/* What kvev_settings_new () asks of a value when events are enabled. */
typedef enum
{
  KVEV_FLAG_REQUIRED = 1 << 0, /* not "" */
  KVEV_FLAG_UTF8 = 1 << 1,     /* valid UTF-8: it goes out as a msgpack str */
} KvevFlagChecks;

typedef struct
{
  const char *name;
  KvevFlagType type;
  glong settings_offset;      /* of the KvevSettings field that carries it */
  guint32 default_number;     /* booleans, integers, a word's index */
  const char *default_string; /* strings, paths, endpoints */
  guint32 min;                /* integers */
  guint32 max;
  const char *const *words; /* words: NULL-terminated */
  KvevFlagChecks checks;
  const char *help; /* N_(): translated when shown */
  const char *arg;  /* N_(): the value's name in --help */
} KvevFlag;

/* One flag's value.  A configuration owns its strings (never NULL); a
 * value kvev_flag_value_parse () made borrows the text it read. */
typedef union
{
  gboolean boolean;
  guint32 number;
  guint word;   /* index into the flag's words */
  char *string; /* strings, paths and endpoints */
} KvevFlagValue;

/* flags.c: the table, in the order kvev_config_flags () and --help list
 * it, which is API. */
extern const KvevFlag kvev_flag_table[];
extern const gsize kvev_flag_count;

static inline gsize
kvev_flag_index (const KvevFlag *flag)
{
  return (gsize) (flag - kvev_flag_table);
}

/* The row named @name exactly, or NULL. */
const KvevFlag *kvev_flag_lookup (const char *name);
/* The row of an option as GOption hands it over ("--kv-events-dp-rank"),
 * or NULL. */
const KvevFlag *kvev_flag_lookup_option (const char *option_name);
/* The flag's long option, its name with dashes ("kv-events-dp-rank"):
 * static storage. */
const char *kvev_flag_option_name (const KvevFlag *flag);
/* Every name in table order, NULL-terminated: static storage. */
const char *const *kvev_flag_names (void);
/* KVEV_ERROR_UNKNOWN_FLAG for @name, suggesting the nearest flag when one
 * is close: the same words from the setter, the key file and the command
 * line. */
void kvev_flag_set_unknown_error (const char *name, GError **error);

/* value.c: a flag's value as text, in a configuration, and back. */
void kvev_flag_value_default (const KvevFlag *flag, KvevFlagValue *value);
/* Parses @text as @flag's type and limits; a string borrows @text.  FALSE
 * with a KVEV_ERROR_INVALID_VALUE naming the flag and the value. */
gboolean kvev_flag_value_parse (const KvevFlag *flag, const char *text, KvevFlagValue *value,
                                GError **error);
/* The text kvev_flag_value_parse () reads back as @value, to g_free (). */
char *kvev_flag_value_format (const KvevFlag *flag, const KvevFlagValue *value);
/* Stores @value in @slot, which owns a copy of a string: @value may be
 * @slot's own. */
void kvev_flag_value_store (const KvevFlag *flag, KvevFlagValue *slot, const KvevFlagValue *value);
void kvev_flag_value_clear (const KvevFlag *flag, KvevFlagValue *slot);

G_END_DECLS

#endif /* KVEVENTS_FLAGS_H */
