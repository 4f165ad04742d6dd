/* standalone.c: a main () for a fuzz target without libFuzzer, so that
 * `make check` replays the seed corpus and every saved crash input in any
 * build (gcc, clang, sanitizers, valgrind).
 *
 *   replay-TARGET [FILE|DIR]...
 *
 * With no argument it replays $top_srcdir/tests/fuzz/corpus/TARGET and
 * $top_srcdir/tests/fuzz/regressions/TARGET (top_srcdir from the
 * environment, as make check exports it, else the source tree it was
 * built from).  A directory means every regular file in it, sorted.  Output
 * is TAP, one test per input; an input that crashes takes the program down
 * after its name was printed, which the TAP driver reports.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef KVEV_FUZZ_TARGET
#error "KVEV_FUZZ_TARGET must name the target, e.g. -DKVEV_FUZZ_TARGET=\"config\""
#endif
#ifndef KVEV_FUZZ_SRCDIR
#define KVEV_FUZZ_SRCDIR "."
#endif

static int
compare_paths (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Adds path, or the files of the directory path, to inputs.  A missing
 * directory adds nothing when optional (regressions/ may be empty, and
 * git keeps no empty directory). */
static gboolean
add_inputs (GPtrArray *inputs, const char *path, gboolean optional)
{
  g_autoptr (GPtrArray) files = NULL;
  GDir *dir;
  const char *name;

  if (!g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
        {
          g_ptr_array_add (inputs, g_strdup (path));
          return TRUE;
        }
      if (optional)
        return TRUE;
      printf ("Bail out! %s: no such file or directory\n", path);
      return FALSE;
    }

  dir = g_dir_open (path, 0, NULL);
  if (dir == NULL)
    {
      printf ("Bail out! cannot read the directory %s\n", path);
      return FALSE;
    }
  files = g_ptr_array_new_with_free_func (g_free);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      char *file = g_build_filename (path, name, NULL);

      /* Dot files are for git (.gitkeep) and editors. */
      if (name[0] != '.' && g_file_test (file, G_FILE_TEST_IS_REGULAR))
        g_ptr_array_add (files, file);
      else
        g_free (file);
    }
  g_dir_close (dir);
  g_ptr_array_sort (files, compare_paths);
  for (guint i = 0; i < files->len; i++)
    g_ptr_array_add (inputs, g_strdup (g_ptr_array_index (files, i)));
  return TRUE;
}

int
main (int argc, char **argv)
{
  g_autoptr (GPtrArray) inputs = g_ptr_array_new_with_free_func (g_free);
  guint failed = 0;

  /* Only C's own buffering matters: each name is out before its input
   * runs, in case the input crashes. */
  setvbuf (stdout, NULL, _IOLBF, 0);

  if (argc > 1)
    {
      for (int i = 1; i < argc; i++)
        if (!add_inputs (inputs, argv[i], FALSE))
          return 1;
    }
  else
    {
      const char *top = g_getenv ("top_srcdir");
      g_autofree char *corpus = NULL;
      g_autofree char *regressions = NULL;

      if (top == NULL || top[0] == '\0')
        top = KVEV_FUZZ_SRCDIR;
      corpus = g_build_filename (top, "tests", "fuzz", "corpus", KVEV_FUZZ_TARGET, NULL);
      regressions = g_build_filename (top, "tests", "fuzz", "regressions", KVEV_FUZZ_TARGET, NULL);
      if (!add_inputs (inputs, corpus, FALSE) || !add_inputs (inputs, regressions, TRUE))
        return 1;
    }

  LLVMFuzzerInitialize (&argc, &argv);

  if (inputs->len == 0)
    {
      printf ("1..0 # SKIP no inputs for %s\n", KVEV_FUZZ_TARGET);
      return 0;
    }
  printf ("1..%u\n", inputs->len);
  for (guint i = 0; i < inputs->len; i++)
    {
      const char *path = g_ptr_array_index (inputs, i);
      g_autoptr (GError) error = NULL;
      g_autofree char *contents = NULL;
      gsize len = 0;
      guint8 *copy;
      int status;

      printf ("# %s: %s\n", KVEV_FUZZ_TARGET, path);
      if (!g_file_get_contents (path, &contents, &len, &error))
        {
          printf ("not ok %u - %s: %s\n", i + 1, path, error->message);
          failed++;
          continue;
        }
      /* Exactly len bytes, as libFuzzer hands them: the NUL that
       * g_file_get_contents () adds would hide a read past the end. */
      copy = malloc (len);
      if (len > 0)
        memcpy (copy, contents, len);
      status = LLVMFuzzerTestOneInput (copy, len);
      free (copy);
      if (status == 0)
        printf ("ok %u - %s\n", i + 1, path);
      else
        {
          printf ("not ok %u - %s: returned %d\n", i + 1, path, status);
          failed++;
        }
    }
  return failed > 0 ? 1 : 0;
}
