/* version.c: version, build features, the error domain, the text domain.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "internal.h"

#include <libintl.h>
#include <string.h>

#define KVEV_STR_(x) #x
#define KVEV_STR(x) KVEV_STR_ (x)

const char *
kvev_version (void)
{
  return KVEV_STR (KVEV_VERSION_MAJOR) "." KVEV_STR (KVEV_VERSION_MINOR) "." KVEV_STR (
      KVEV_VERSION_MICRO);
}

gboolean
kvev_has_transport (void)
{
#ifdef HAVE_ZMQ
  return TRUE;
#else
  return FALSE;
#endif
}

/* The quark's name is a token GLib stringifies, which clang-format would
 * read as a subtraction. */
/* clang-format off */
G_DEFINE_QUARK (kvev-error-quark, kvev_error)
/* clang-format on */

/* Binding is process-wide state, so it happens once, at the first message;
 * the locale itself is the application's business.  An application that
 * bound our domain before (a tool or test running uninstalled points it at
 * the build tree) keeps its binding: an unbound domain reports the same
 * directory as a domain nobody uses, a bound one does not. */
const char *
kvev_gettext (const char *msgid)
{
  static gsize bound = 0;

  if (g_once_init_enter (&bound))
    {
      const char *current = bindtextdomain (GETTEXT_PACKAGE, NULL);
      const char *unbound = bindtextdomain (GETTEXT_PACKAGE "-unbound-probe", NULL);

      if (current == NULL || unbound == NULL || strcmp (current, unbound) == 0)
        bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
      bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
      g_once_init_leave (&bound, 1);
    }
  return dgettext (GETTEXT_PACKAGE, msgid);
}
