/* kvevents-config.h: the master's kv_events flags.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEVENTS_CONFIG_H
#define KVEVENTS_CONFIG_H

#if !defined(KVEVENTS_H_INSIDE) && !defined(KVEVENTS_COMPILATION)
#error "Only <kvevents/kvevents.h> can be included directly."
#endif

#include <kvevents/kvevents-common.h>

G_BEGIN_DECLS

/**
 * KvevConfig:
 *
 * An opaque set of flag values, every flag at its default when created.
 * A configuration is not locked: use one from one thread at a time, or
 * only read it from several.
 */
typedef struct _KvevConfig KvevConfig;

/**
 * kvev_config_new:
 *
 * Creates a configuration, which kvev_config_set(),
 * kvev_config_load_key_file() or kvev_config_option_group() then fill.
 *
 * Returns: (transfer full): a configuration with every flag at its
 *   default (events disabled).  Free with kvev_config_free().
 */
KVEV_API KvevConfig *kvev_config_new (void);

/**
 * kvev_config_copy:
 * @config: a configuration.
 *
 * Copies a configuration, every flag with its value.
 *
 * Returns: (transfer full): an independent copy.  Free with
 *   kvev_config_free().
 */
KVEV_API KvevConfig *kvev_config_copy (const KvevConfig *config);

/**
 * kvev_config_free:
 * @config: (nullable) (transfer full): a configuration, or %NULL.
 *
 * Frees a configuration.  A publisher made from it has its own copy.
 */
KVEV_API void kvev_config_free (KvevConfig *config);

/**
 * kvev_config_set:
 * @config: a configuration.
 * @flag: a flag name from kvev_config_flags(), e.g. "kv_events_dp_rank".
 * @value: the value as text.  Booleans take true/false/1/0/yes/no in any
 *   case; integers take decimal digits only.
 * @error: return location for a #GError, or %NULL.
 *
 * Parses @value and stores it.  On failure @config is unchanged.
 *
 * Returns: %TRUE on success; %FALSE with %KVEV_ERROR_UNKNOWN_FLAG (naming
 *   the nearest flag when one is close) or %KVEV_ERROR_INVALID_VALUE
 *   (naming the flag and the value).
 */
KVEV_API gboolean kvev_config_set (KvevConfig *config, const char *flag, const char *value,
                                   GError **error);

/**
 * kvev_config_get:
 * @config: a configuration.
 * @flag: a flag name.
 *
 * Reads one flag's value.
 *
 * Returns: (transfer full) (nullable): the value as text, in the form
 *   kvev_config_set() accepts ("true"/"false" for booleans); %NULL for an
 *   unknown flag.  Free with g_free().
 */
KVEV_API char *kvev_config_get (const KvevConfig *config, const char *flag);

/**
 * kvev_config_flags:
 *
 * Lists the flags, for a program's help or its own configuration
 * format.
 *
 * Returns: (transfer none) (array zero-terminated=1): every flag name
 *   this library accepts, in table order; a static array.
 * Thread-safe.
 */
KVEV_API const char *const *kvev_config_flags (void);

/**
 * kvev_config_load_key_file:
 * @config: a configuration.
 * @key_file: a loaded key file.
 * @group: (nullable): the group to read, %NULL for "kv_events".
 * @error: return location for a #GError, or %NULL.
 *
 * Sets every key of @group as kvev_config_set() would.  A missing group
 * changes nothing and succeeds.  The first unknown key or bad value fails
 * the whole load, naming the key, and leaves @config as it was.  A
 * #GKeyFile does not know the file it was read from, so a relative path
 * in it (kv_events_curve_secret_key_file, ...) stays relative to the
 * current directory; kvev_config_load_file() resolves it against the
 * file's directory.
 *
 * Returns: %TRUE on success.
 */
KVEV_API gboolean kvev_config_load_key_file (KvevConfig *config, GKeyFile *key_file,
                                             const char *group, GError **error);

/**
 * kvev_config_load_file:
 * @config: a configuration.
 * @path: (type filename): the key file to read; a FIFO or a pipe is read
 *   as a file.
 * @group: (nullable): the group to read, %NULL for "kv_events".
 * @error: return location for a #GError, or %NULL.
 *
 * Reads @path and loads @group as kvev_config_load_key_file() does, with
 * one difference: a relative value of a path flag
 * (kv_events_curve_secret_key_file, kv_events_curve_allowed_clients_file)
 * names a file in the directory of @path, as most daemons read their
 * configuration, and is stored as an absolute path, so changing directory
 * afterwards changes nothing.  Values given by kvev_config_set() or on
 * the command line stay relative to the current directory.
 *
 * Returns: %TRUE on success; %FALSE with a %G_FILE_ERROR (naming @path)
 *   when it cannot be read, a %G_KEY_FILE_ERROR when it is not a key
 *   file, or a %KVEV_ERROR as from kvev_config_load_key_file(), the last
 *   two prefixed with @path.  On failure @config is unchanged.
 * Since: 1.1
 */
KVEV_API gboolean kvev_config_load_file (KvevConfig *config, const char *path, const char *group,
                                         GError **error);

/**
 * kvev_config_option_group:
 * @config: a configuration that outlives the option group's use.
 *
 * A #GOptionGroup with one long option per flag: --enable-kv-events and
 * --kv-events-... (dashes for underscores).  Boolean options take an
 * optional value (--enable-kv-events alone means true,
 * --kv-events-emit-object-key=false sets false).  Each value is checked
 * as kvev_config_set() checks it, and a bad one fails the parse with the
 * same message.  A failed parse, for a bad option of this group or of any
 * other, leaves @config as it was before the parse.  Help texts are
 * translated in the library's domain.
 *
 * Returns: (transfer full): a new group, usually handed to
 *   g_option_context_add_group(), which takes it.
 */
KVEV_API GOptionGroup *kvev_config_option_group (KvevConfig *config);

/**
 * kvev_config_option_group_with_file:
 * @config: a configuration that outlives the option group's use.
 *
 * The group of kvev_config_option_group() with one more option,
 * --kv-events-config-file=FILE: a key file whose [kv_events] group is
 * loaded as kvev_config_load_file() loads it, before the other options
 * of the group, wherever they stand on the command line, so that they
 * override it.  Given more than once, the last one counts.  The file is
 * read once the whole command line is parsed; a file that cannot be read
 * or a bad value in it fails the parse with the error of
 * kvev_config_load_file(), prefixed with "--kv-events-config-file: ", and
 * leaves @config as it was before the parse.  Without the option it
 * behaves as kvev_config_option_group().  This is the one call a master
 * needs for "key file first, command line over it":
 *
 * |[<!-- language="C" -->
 * g_option_context_add_group (context, kvev_config_option_group_with_file (config));
 * if (!g_option_context_parse (context, &argc, &argv, &error))
 *   ...
 * ]|
 *
 * Returns: (transfer full): a new group, usually handed to
 *   g_option_context_add_group(), which takes it.
 * Since: 1.1
 */
KVEV_API GOptionGroup *kvev_config_option_group_with_file (KvevConfig *config);

/**
 * kvev_config_validate:
 * @config: a configuration.
 * @error: return location for a #GError, or %NULL.
 *
 * Checks the flags together.  A disabled configuration is always valid.
 * An enabled one needs a bind endpoint and a backend id
 * (%KVEV_ERROR_INCOMPLETE otherwise, naming the flag), and an endpoint of
 * the form tcp://HOST:PORT or ipc://PATH that ZeroMQ can bind: HOST is
 * "*", a numeric IPv4 address, a numeric IPv6 address in brackets or the
 * name of a network interface, never a host name
 * (%KVEV_ERROR_INVALID_VALUE otherwise, saying what to write instead;
 * inproc:// is refused too, as nothing outside the publisher could reach
 * it).  The security flags are loaded
 * and checked here too: an allowed-clients file without a secret key
 * file is %KVEV_ERROR_INCOMPLETE; a key file that cannot be read, is
 * not a regular file (it is never waited on or read: a FIFO or a device
 * is refused at once), is larger than its bound or holds a NUL byte,
 * holds no valid key or gives group or others any permission, a malformed
 * address entry, an address list on an endpoint other than tcp://, and
 * a context string (backend id, model, salt, LoRA) that is not UTF-8 are
 * %KVEV_ERROR_INVALID_VALUE.
 *
 * Returns: %TRUE when a publisher can be created from @config.
 */
KVEV_API gboolean kvev_config_validate (const KvevConfig *config, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (KvevConfig, kvev_config_free)

G_END_DECLS

#endif /* KVEVENTS_CONFIG_H */
