/* internal.h: what every source of the library shares.
 * Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_INTERNAL_H
#define KVEV_INTERNAL_H

#include "config.h"

/* Before GLib's headers, which otherwise define it empty. */
#ifndef G_LOG_DOMAIN
#define G_LOG_DOMAIN "kvevents"
#endif

#define KVEVENTS_COMPILATION
#include <kvevents/kvevents.h>
#undef KVEVENTS_COMPILATION

#ifdef G_OS_UNIX
#include <signal.h>
#endif

G_BEGIN_DECLS

/* Messages a person reads go through the library's own domain; the
 * library binds it once and never touches the process locale. */
const char *kvev_gettext (const char *msgid) G_GNUC_FORMAT (1);
#define _(String) kvev_gettext (String)
#define N_(String) (String)

/* g_thread_try_new() for the library's own threads: see thread.c. */
GThread *kvev_thread_try_new (const char *name, GThreadFunc func, gpointer data, GError **error);
#ifdef G_OS_UNIX
/* Blocks what kvev_thread_try_new() blocks in the calling thread, so the
 * threads it then creates start with it; pthread_sigmask (SIG_SETMASK,
 * saved, NULL) restores the mask. */
void kvev_thread_block_signals (sigset_t *saved);
#endif

/* A value for a GError message: valid UTF-8 stays readable, anything
 * else becomes C escapes, and a long value is cut. */
char *kvev_escape_for_message (const char *text);

G_END_DECLS

#endif /* KVEV_INTERNAL_H */
