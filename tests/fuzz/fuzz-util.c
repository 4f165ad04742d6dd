/* fuzz-util.c: what every fuzz target needs, GLib only (see fuzz.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "fuzz.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static char *private_dir;

static void
remove_private_dir (void)
{
  GDir *dir;
  const char *name;

  if (private_dir == NULL)
    return;
  dir = g_dir_open (private_dir, 0, NULL);
  if (dir != NULL)
    {
      while ((name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *path = g_build_filename (private_dir, name, NULL);

          g_unlink (path);
        }
      g_dir_close (dir);
    }
  g_rmdir (private_dir);
  g_clear_pointer (&private_dir, g_free);
}

/* A fatal GLib message ends in G_BREAKPOINT (), a SIGTRAP, which
 * libFuzzer does not catch: as an abort it saves the input. */
static void
abort_on_trap (int signal_number)
{
  abort ();
}

void
kvev_fuzz_init (void)
{
  static gsize done = 0;

  if (!g_once_init_enter (&done))
    return;

  /* G_DEBUG=fatal-warnings does the same under make check; a fuzzer is
   * usually started without it. */
  g_log_set_always_fatal (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  signal (SIGTRAP, abort_on_trap);

  private_dir = g_dir_make_tmp ("kvevents-fuzz-XXXXXX", NULL);
  if (private_dir == NULL)
    {
      fprintf (stderr, "fuzz: cannot make a temporary directory\n");
      abort ();
    }
  atexit (remove_private_dir);

  g_once_init_leave (&done, 1);
}

const char *
kvev_fuzz_private_dir (void)
{
  kvev_fuzz_init ();
  return private_dir;
}

void
kvev_fuzz_fail (const char *file, int line, const char *what)
{
  fprintf (stderr, "%s:%d: fuzz oracle failed: %s\n", file, line, what);
  fflush (stderr);
  abort ();
}
