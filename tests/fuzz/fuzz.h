/* fuzz.h: what the fuzz targets share.
 *
 * Each fuzz-*.c defines LLVMFuzzerTestOneInput () (and
 * LLVMFuzzerInitialize ()).  Built with --enable-fuzzing they link
 * libFuzzer; in every build they also link standalone.c, which replays
 * the seed corpus and the saved regressions through the same function
 * under `make check`.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef KVEV_FUZZ_H
#define KVEV_FUZZ_H

#include <kvevents/kvevents.h>
#include <stddef.h>
#include <stdint.h>

G_BEGIN_DECLS

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Once per process: criticals and warnings become fatal (on fuzz input a
 * g_return_if_fail () firing is a bug, not a shrug), and a private
 * temporary directory is made for the files the security flags name,
 * removed at exit. */
void kvev_fuzz_init (void);

/* That directory. */
const char *kvev_fuzz_private_dir (void);

/* A broken promise of the code under test: prints what and aborts, which
 * libFuzzer reports as a crash with the input that caused it. */
#define kvev_fuzz_assert(expr)                                                                     \
  G_STMT_START                                                                                     \
  {                                                                                                \
    if (G_UNLIKELY (!(expr)))                                                                      \
      kvev_fuzz_fail (__FILE__, __LINE__, #expr);                                                  \
  }                                                                                                \
  G_STMT_END
void kvev_fuzz_fail (const char *file, int line, const char *what) G_GNUC_NORETURN;

/* Whether name is one of the two flags whose value is a path that
 * kvev_config_validate () reads. */
gboolean kvev_fuzz_is_file_flag (const char *name);

/* The fuzzer never chooses a path: the value of a file flag is turned into
 * the path of a file in the private directory, and the value becomes that
 * file's contents, with \n, \t, \0 and \\ unescaped so that one line of
 * input can hold a multi-line allowed-clients file or a NUL byte.  A value
 * starting with '!' makes the file readable by others (which the secret
 * key file must refuse), one starting with '?' names a file that does not
 * exist, and "" stays "" (the flag off).  Returns a new string. */
char *kvev_fuzz_file_value (const char *name, const char *value);

/* Passes every file flag of config through kvev_fuzz_file_value (), so a
 * configuration read from fuzzed input can be validated safely. */
void kvev_fuzz_redirect_files (KvevConfig *config);

/* Every flag's value (kvev_config_get ()), in kvev_config_flags ()
 * order; compare with kvev_fuzz_snapshot_equal (). */
GStrv kvev_fuzz_snapshot (const KvevConfig *config);
gboolean kvev_fuzz_snapshot_equal (const char *const *a, const char *const *b);

/* What every failing call must give: a KVEV_ERROR whose code is one of
 * the allowed ones and whose message is UTF-8 (it goes to logs and
 * terminals); and no error on success. */
void kvev_fuzz_check_error (gboolean ok, const GError *error, guint allowed_codes);
#define KVEV_FUZZ_CODE(code) (1u << (code))

G_END_DECLS

#endif /* KVEV_FUZZ_H */
