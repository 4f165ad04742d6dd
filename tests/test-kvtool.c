/* test-kvtool.c: the helpers the tools share (tools/common/kvtool.c).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "config.h"

#include "kvtool.h"
#include <base/endpoint-syntax.h>
#include <base/quote.h>

#include <string.h>

/* The tools' error domain has the name its macro gives it, and the codes
 * the exit statuses map from. */
static void
test_error_quark (void)
{
  g_assert_cmpstr (g_quark_to_string (KVT_ERROR), ==, "kvt-error-quark");
  g_assert_cmpint (KVT_ERROR_FAILED, ==, 0);
  g_assert_cmpint (KVT_ERROR_USAGE, ==, 1);
}

static void
test_parse_uint (void)
{
  guint64 value = 0;

  g_assert_true (kvt_parse_uint ("0", 0, 10, &value));
  g_assert_cmpuint (value, ==, 0);
  g_assert_true (kvt_parse_uint ("4294967295", 0, G_MAXUINT32, &value));
  g_assert_cmpuint (value, ==, G_MAXUINT32);
  g_assert_false (kvt_parse_uint ("4294967296", 0, G_MAXUINT32, &value));
  g_assert_false (kvt_parse_uint ("+1", 0, 10, &value));
  g_assert_false (kvt_parse_uint (" 1", 0, 10, &value));
  g_assert_false (kvt_parse_uint ("1 ", 0, 10, &value));
  g_assert_false (kvt_parse_uint ("-1", 0, 10, &value));
  g_assert_false (kvt_parse_uint ("", 0, 10, &value));
  g_assert_false (kvt_parse_uint (NULL, 0, 10, &value));
  g_assert_false (kvt_parse_uint ("5", 6, 10, &value));
  g_assert_cmpuint (value, ==, G_MAXUINT32);
}

static void
test_connect_endpoint (void)
{
  g_assert_true (kvev_connect_endpoint_is_valid ("tcp://127.0.0.1:5557"));
  g_assert_true (kvev_connect_endpoint_is_valid ("tcp://[::1]:65535"));
  g_assert_true (kvev_connect_endpoint_is_valid ("tcp://127.0.0.2:0;127.0.0.1:1"));
  g_assert_true (kvev_connect_endpoint_is_valid ("ipc:///tmp/x"));
  g_assert_false (kvev_connect_endpoint_is_valid ("tcp://127.0.0.1"));
  g_assert_false (kvev_connect_endpoint_is_valid ("tcp://127.0.0.1:"));
  g_assert_false (kvev_connect_endpoint_is_valid ("tcp://127.0.0.1:0"));
  g_assert_false (kvev_connect_endpoint_is_valid ("tcp://127.0.0.1:65536"));
  g_assert_false (kvev_connect_endpoint_is_valid ("tcp://127.0.0.1:*"));
  g_assert_false (kvev_connect_endpoint_is_valid ("tcp://[::1:5557"));
  g_assert_false (kvev_connect_endpoint_is_valid ("tcp://:5557"));
  /* What a connect takes and a bind does not: host names, a SOURCE;, an
   * unbracketed IPv6 host whose port follows the last colon. */
  g_assert_true (kvev_connect_endpoint_is_valid ("tcp://kv-master.example:5557"));
  g_assert_true (kvev_connect_endpoint_is_valid ("tcp://eth0;kv-master.example:05557"));
  g_assert_true (kvev_connect_endpoint_is_valid ("tcp://::1:5557"));
  /* The syntax they share: a port of digits, a closed bracket right before
   * its colon, and something in the brackets. */
  g_assert_false (kvev_connect_endpoint_is_valid ("tcp://127.0.0.1:+1"));
  g_assert_false (kvev_connect_endpoint_is_valid ("tcp://[::1]x:5557"));
  g_assert_false (kvev_connect_endpoint_is_valid ("tcp://[]:5557"));
  g_assert_false (kvev_connect_endpoint_is_valid ("tcp://127.0.0.2:0;"));
}

/* Text that is UTF-8, NULs included, is a JSON string; other bytes are
 * hexadecimal, flagged when they were meant as text. */
static void
test_json_bytes (void)
{
  static const struct
  {
    const char *bytes;
    gsize len;
    gboolean is_text;
    const char *json;
  } cases[] = {
    { "key", 3, TRUE, "\"key\"" },
    { "a\0b", 3, TRUE, "\"a\\u0000b\"" },
    { "q\"\\\n\t\x7f", 6, TRUE, "\"q\\\"\\\\\\n\\t\\u007f\"" },
    { "\xc3\xa9", 2, TRUE, "\"\xc3\xa9\"" },
    { "\xff", 1, TRUE, "{\"hex\": \"ff\", \"invalid_utf8\": true}" },
    { "\xc3", 1, TRUE, "{\"hex\": \"c3\", \"invalid_utf8\": true}" },
    { "ok", 2, FALSE, "{\"hex\": \"6f6b\"}" },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GString) out = g_string_new (NULL);

      kvt_json_append_bytes (out, cases[i].bytes, cases[i].len, cases[i].is_text);
      g_assert_cmpstr (out->str, ==, cases[i].json);
    }
}

/* The statistics' quoting (base/quote.h), which the publisher's and the
 * subscriber's pages share: JSON escapes control characters, an
 * OpenMetrics label value, which has no such escape, makes them spaces. */
static void
test_quote (void)
{
  static const struct
  {
    const char *text;
    const char *json;
    const char *label;
  } cases[] = {
    { "", "\"\"", "\"\"" },
    { "tcp://127.0.0.1:5557", "\"tcp://127.0.0.1:5557\"", "\"tcp://127.0.0.1:5557\"" },
    { "a\"b\\c", "\"a\\\"b\\\\c\"", "\"a\\\"b\\\\c\"" },
    { "line\nnext", "\"line\\nnext\"", "\"line\\nnext\"" },
    { "tab\tbell\a", "\"tab\\u0009bell\\u0007\"", "\"tab bell \"" },
    { "caf\xc3\xa9", "\"caf\xc3\xa9\"", "\"caf\xc3\xa9\"" },
    { "bad\xff", "\"bad\xef\xbf\xbd\"", "\"bad\xef\xbf\xbd\"" },
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *json = kvev_quote (cases[i].text, TRUE);
      g_autofree char *label = kvev_quote (cases[i].text, FALSE);

      g_assert_cmpstr (json, ==, cases[i].json);
      g_assert_cmpstr (label, ==, cases[i].label);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/kvevents/kvtool/error-quark", test_error_quark);
  g_test_add_func ("/kvevents/kvtool/parse-uint", test_parse_uint);
  g_test_add_func ("/kvevents/kvtool/connect-endpoint", test_connect_endpoint);
  g_test_add_func ("/kvevents/kvtool/json-bytes", test_json_bytes);
  g_test_add_func ("/kvevents/kvtool/quote", test_quote);
  return g_test_run ();
}
