# man3.awk: the section-3 manual pages, one for each documented function,
# type and macro of the public headers, made from the headers' own
# comments at build time so that a page cannot say something its header
# does not.  POSIX awk only (Debian builds with mawk).
#
#   awk -v outdir=DIR -v version=VERSION -f man3.awk HEADER...
#
# A comment is GLib's: "/**", " * name:", the "@arg: text" lines, the
# description, then "Returns:", "Errors:" and "Since:" paragraphs, a tag's
# continuation lines indented further.  "Thread-safe." stands alone.  A
# declaration with KVEV_API and no such comment, an argument of a
# prototype the comment does not describe, or a comment without a
# description stops the build: the page would be missing or empty.

function fail(msg) {
  printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"
  failed = 1
  exit 1
}

function trim(s) {
  sub(/^[ \t]+/, "", s)
  sub(/[ \t]+$/, "", s)
  return s
}

# Text for roff: a backslash and a hyphen escaped, nothing else touched.
function esc(s,    out, i, c) {
  out = ""
  for (i = 1; i <= length(s); i++) {
    c = substr(s, i, 1)
    if (c == "\\")
      out = out "\\e"
    else if (c == "-")
      out = out "\\-"
    else
      out = out c
  }
  return out
}

# GLib's markup: %CONSTANT and #Type bold, @argument italic, function()
# bold.
function markup(s,    out, tok, name) {
  out = ""
  while (match(s, /[%@#][A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_]*\(\)/)) {
    out = out esc(substr(s, 1, RSTART - 1))
    tok = substr(s, RSTART, RLENGTH)
    s = substr(s, RSTART + RLENGTH)
    name = substr(tok, 2)
    if (tok ~ /^[%#]/ && name ~ /^[A-Z]/)
      out = out "\\fB\\%" esc(name) "\\fR"
    else if (tok ~ /^@/)
      out = out "\\fI\\%" esc(name) "\\fR"
    else if (tok ~ /\(\)$/)
      out = out "\\fB\\%" esc(substr(tok, 1, length(tok) - 2)) "\\fR()"
    else
      out = out esc(tok)
  }
  return out esc(s)
}

# A paragraph as roff source, a sentence a line as roff wants them (it
# spaces sentences by their line ends); a line that would start with a
# control character starts with \& instead.
function para(s,    out, n, parts, i, l) {
  s = markup(trim(s))
  gsub(/\.  +/, ".\n", s)
  n = split(s, parts, "\n")
  out = ""
  for (i = 1; i <= n; i++) {
    l = trim(parts[i])
    if (l ~ /^[.']/)
      l = "\\&" l
    out = out (i > 1 ? "\n" : "") l
  }
  return out
}

function reset_doc() {
  doc_name = ""; n_body = 0; n_args = 0; tag = ""; cur = ""
  returns = ""; errors = ""; since = ""; threadsafe = 0
}

# GObject introspection's annotations, "(transfer full) (nullable):",
# are for bindings; a reader is told only that an argument may be NULL.
function strip_annotations(s, is_arg,    nullable) {
  s = trim(s)
  nullable = 0
  while (match(s, /^\([a-z][a-z =0-9-]*\) */)) {
    if (substr(s, RSTART, RLENGTH) ~ /nullable/)
      nullable = 1
    s = substr(s, RSTART + RLENGTH)
  }
  sub(/^: */, "", s)
  if (nullable && is_arg && s !~ /%NULL/)
    s = s "  May be %NULL."
  return s
}

# The part being read ends: an argument, a tag or a paragraph.
function flush_part() {
  if (cur == "")
    return
  if (tag == "arg")
    arg_text[n_args] = strip_annotations(cur, 1)
  else if (tag == "Returns")
    returns = strip_annotations(cur, 0)
  else if (tag == "Errors")
    errors = (errors == "" ? "" : errors "\n") cur
  else
    body[++n_body] = cur
  cur = ""
  tag = ""
}

function doc_line(line,    content, indented) {
  content = line
  sub(/^ \*( |$)/, "", content)
  if (doc_name == "") {
    if (content !~ /^[A-Za-z_][A-Za-z0-9_]*:/)
      fail("a documentation comment starts with \"name:\"")
    doc_name = content
    sub(/:.*/, "", doc_name)
    return
  }
  indented = content ~ /^[ \t]/
  content = trim(content)
  if (content == "") {
    flush_part()
    return
  }
  if (content ~ /^Thread-safe\./) {
    flush_part()
    threadsafe = 1
    sub(/^Thread-safe\.[ ]*/, "", content)
    if (content == "")
      return
  }
  if (content ~ /^Since: /) {
    flush_part()
    since = content
    sub(/^Since: /, "", since)
    return
  }
  if (content ~ /^@[A-Za-z_][A-Za-z0-9_]*:/) {
    flush_part()
    tag = "arg"
    n_args++
    arg_name[n_args] = substr(content, 2, index(content, ":") - 2)
    cur = substr(content, index(content, ":") + 1)
    return
  }
  if (content ~ /^(Returns|Errors):/) {
    flush_part()
    tag = substr(content, 1, index(content, ":") - 1)
    cur = substr(content, index(content, ":") + 1)
    return
  }
  # A tag goes on while its lines are indented; GLib's comments then
  # go back to the description ("Thread-safe." after "Returns:").
  if (tag != "" && !indented)
    flush_part()
  # Two spaces end a sentence, as within the comment's lines.
  cur = (cur == "" ? "" : cur (cur ~ /\.$/ ? "  " : " ")) content
}

# A structure whose members are public, handed to the caller read-only:
# its page shows them, as an enum's shows its values.
function is_record(decl) {
  return decl ~ /^typedef struct( *\{|$)/
}

# The comment just read belongs to the declaration decl (one line).
function record(decl,    kind, name, head, params, p) {
  if (decl ~ /^typedef struct _[A-Za-z0-9_]+ [A-Za-z0-9_]+;$/) {
    kind = "struct"
    name = decl
    sub(/;$/, "", name)
    sub(/.* /, "", name)
  } else if (decl ~ /^typedef enum/ || is_record(decl)) {
    kind = decl ~ /^typedef enum/ ? "enum" : "record"
    name = decl
    sub(/;$/, "", name)
    sub(/.*} */, "", name)
  } else if (decl ~ /^typedef [^(]*\(\*[A-Za-z0-9_]+\) *\(/) {
    kind = "callback"
    name = decl
    sub(/^[^(]*\(\*/, "", name)
    sub(/\).*/, "", name)
  } else if (decl ~ /^KVEV_API /) {
    kind = "function"
    head = decl
    sub(/^KVEV_API /, "", head)
    sub(/ *\(.*/, "", head)
    name = head
    sub(/.*[ *]/, "", name)
  } else if (decl ~ /^#define /) {
    kind = "macro"
    name = decl
    sub(/^#define /, "", name)
    sub(/[ (].*/, "", name)
  } else
    return
  if (name != doc_name)
    fail("the comment of " doc_name " stands before " name)
  if (n_body == 0)
    fail(name ": the comment has no description (the page's NAME line)")
  n_syms++
  sym[n_syms] = name
  sym_kind[name] = kind
  sym_decl[name] = decl
  sym_file[name] = FILENAME
  sub(/.*\/include\//, "include/", sym_file[name])
  sym_body[name] = n_body
  for (p = 1; p <= n_body; p++)
    sym_para[name, p] = body[p]
  sym_args[name] = n_args
  for (p = 1; p <= n_args; p++) {
    sym_arg[name, p] = arg_name[p]
    sym_arg_text[name, p] = arg_text[p]
    # An enum's values, for the ERRORS of the functions that set them.
    if (kind == "enum")
      value_text[arg_name[p]] = arg_text[p]
  }
  sym_returns[name] = returns
  sym_errors[name] = errors
  sym_since[name] = since
  sym_threadsafe[name] = threadsafe
  if (kind == "function" || kind == "callback")
    check_args(name)
}

# Every argument of the prototype is described: a page that leaves one
# out tells less than the header.
function check_args(name,    decl, list, n, i, j, a, p, found) {
  decl = sym_decl[name]
  if (sym_kind[name] == "callback")
    sub(/^[^)]*\) */, "", decl)
  list = decl
  sub(/^[^(]*\(/, "", list)
  sub(/\) *;$/, "", list)
  if (trim(list) == "void")
    return
  n = split(list, a, ",")
  for (i = 1; i <= n; i++) {
    p = trim(a[i])
    sub(/.*[ *]/, "", p)
    found = 0
    for (j = 1; j <= sym_args[name]; j++)
      if (sym_arg[name, j] == p)
        found = 1
    if (!found)
      fail(name ": argument " p " is not described")
  }
}

BEGIN {
  if (outdir == "")
    outdir = "."
  reset_doc()
  state = "code"
}

FNR == 1 {
  if (state != "code")
    fail("a comment or a declaration is not closed")
}

state == "doc" && /^ \*\/$/ {
  flush_part()
  state = "after"
  decl = ""
  next
}

state == "doc" {
  doc_line($0)
  next
}

# The declaration after a comment, up to its end: ";" (the closing
# brace's for an enum) or a #define's last line.
state == "after" || state == "decl" {
  line = $0
  if (state == "after" && trim(line) == "")
    next
  if (state == "after" && line !~ /^(KVEV_API|typedef|#define)/) {
    # A comment for what has no page (KVEV_API's #if).
    reset_doc()
    state = "code"
    next
  }
  state = "decl"
  # Comments inside an enum say why, for the header's reader.
  if (in_comment) {
    if (line !~ /\*\//)
      next
    sub(/.*\*\//, "", line)
    in_comment = 0
  }
  gsub(/\/\*.*\*\//, "", line)
  if (line ~ /\/\*/) {
    sub(/\/\*.*/, "", line)
    in_comment = 1
  }
  if (trim(line) == "")
    next
  if (decl ~ /^typedef enum/ || is_record(decl))
    enum_lines = enum_lines "\n" line
  else if (decl == "" && (line ~ /^typedef enum/ || is_record(trim(line))))
    enum_lines = line
  cont = line ~ /\\$/
  sub(/[ \t]*\\$/, "", line)
  decl = trim(decl " " trim(line))
  if ((decl ~ /^#define/ && !cont) ||
      (decl !~ /^(typedef enum|#define)/ && !is_record(decl) && decl ~ /;$/) ||
      ((decl ~ /^typedef enum/ || is_record(decl)) && decl ~ /} *[A-Za-z0-9_]+;$/)) {
    gsub(/[ \t]+/, " ", decl)
    record(decl)
    if (decl ~ /^typedef enum/ || is_record(decl))
      sym_enum_lines[doc_name] = enum_lines
    enum_lines = ""
    reset_doc()
    state = "code"
  }
  next
}

/^\/\*\*[ \t]*$/ {
  state = "doc"
  reset_doc()
  next
}

/^KVEV_API / {
  fail("an exported declaration without a documentation comment: " $0)
}

# ---- The pages ----

function th(name) {
  return ".TH " toupper(name) " 3 \"\" \"libkvevents " version "\" \"libkvevents\""
}

# A prototype, an argument a line, each name in italics.  Aligned on the
# parenthesis while that fits 80 columns, indented by four otherwise.
function synopsis_prototype(name, out,    decl, head, list, n, a, i, p, t, pad, width, line, sep) {
  decl = sym_decl[name]
  sub(/^KVEV_API /, "", decl)
  if (sym_kind[name] == "callback") {
    head = decl
    sub(/\) *\(.*/, ")", head)
    list = decl
    sub(/^[^)]*\) *\(/, "", list)
  } else {
    head = decl
    sub(/ *\(.*/, "", head)
    list = decl
    sub(/^[^(]*\(/, "", list)
  }
  sub(/\) *;$/, "", list)
  n = split(list, a, ",")
  width = length(head) + 2
  for (i = 1; i <= n; i++)
    if (width + length(trim(a[i])) + 2 > 78)
      width = 4
  if (trim(list) == "void") {
    print ".BI \"" esc(head) " (void);\"" > out
    return
  }
  pad = sprintf("%" width "s", "")
  for (i = 1; i <= n; i++) {
    p = trim(a[i])
    t = p
    sub(/[A-Za-z0-9_]+$/, "", t)
    sub(/.*[ *]/, "", p)
    sep = i < n ? "," : ");"
    if (i == 1 && width > 4)
      line = esc(head) " (" esc(t)
    else {
      if (i == 1)
        print ".B \"" esc(head) " (\"" > out
      line = pad esc(t)
    }
    print ".BI \"" line "\" " esc(p) " \"" sep "\"" > out
  }
}

# A macro with arguments: its name and arguments, not its expansion.
function synopsis_macro(name, out,    list, n, a, i, line) {
  list = sym_decl[name]
  sub(/^[^(]*\(/, "", list)
  sub(/\).*/, "", list)
  n = split(list, a, ",")
  line = ".BI \"#define " name "(\""
  for (i = 1; i <= n; i++)
    line = line " " trim(a[i]) " \"" (i < n ? ", " : ")") "\""
  print line > out
}

function see_also_add(ref) {
  if (ref in seen)
    return
  seen[ref] = 1
  n_see++
  see[n_see] = ref
}

# Every page the text or the declaration names, then kvevents(7).
function see_also(name, out,    text, p, s, i, other) {
  split("", seen)
  n_see = 0
  seen[name] = 1
  text = sym_decl[name] " " sym_returns[name] " " sym_errors[name]
  for (p = 1; p <= sym_body[name]; p++)
    text = text " " sym_para[name, p]
  for (p = 1; p <= sym_args[name]; p++)
    text = text " " sym_arg_text[name, p]
  s = text
  while (match(s, /[A-Za-z_][A-Za-z0-9_]*/)) {
    other = substr(s, RSTART, RLENGTH)
    s = substr(s, RSTART + RLENGTH)
    if (other in sym_kind)
      see_also_add(other)
  }
  # A type's page lists what takes or returns it.
  if (sym_kind[name] != "function" && sym_kind[name] != "macro")
    for (i = 1; i <= n_syms; i++)
      if (sym_kind[sym[i]] == "function" && (" " sym_decl[sym[i]] " ") ~ ("[ (*]" name "[ *]"))
        see_also_add(sym[i])
  print ".SH SEE ALSO" > out
  print ".nh" > out
  print ".ad l" > out
  for (i = 1; i <= n_see; i++)
    print ".BR " see[i] " (3)," > out
  print ".BR kvevents (7)" > out
}

# The codes of the KVEV_ERROR domain that a function's text names.
function gerror_codes(name, out,    text, p, s, code, n, seen_code, other) {
  text = sym_returns[name]
  for (p = 1; p <= sym_body[name]; p++)
    text = text " " sym_para[name, p]
  # "the errors of kvev_config_validate()": that function's codes too.
  s = text
  while (match(s, /errors of [a-z_]+\(\)/)) {
    other = substr(s, RSTART + 10, RLENGTH - 12)
    s = substr(s, RSTART + RLENGTH)
    if (other in sym_kind) {
      text = text " " sym_returns[other]
      for (p = 1; p <= sym_body[other]; p++)
        text = text " " sym_para[other, p]
    }
  }
  s = text
  n = 0
  while (match(s, /%KVEV_ERROR_[A-Z_]+/)) {
    code = substr(s, RSTART + 1, RLENGTH - 1)
    s = substr(s, RSTART + RLENGTH)
    if ((code in value_text) && !((name, code) in seen_code)) {
      seen_code[name, code] = 1
      if (n++ == 0) {
        print ".SH ERRORS" > out
        print "On failure \\fIerror\\fR is set in the \\fBKVEV_ERROR\\fR domain" > out
        print "(\\fBKvevError\\fR(3)) with one of these codes:" > out
      }
      print ".TP" > out
      print ".B " code > out
      print para(value_text[code]) > out
    }
  }
  return n
}

# The NAME line: the description's first sentence, cut before its first
# colon, semicolon, comma or parenthesis when that is long for whatis.
function short_summary(s,    cut, i, c) {
  if (match(s, /[^.]\. /))
    s = substr(s, 1, RSTART)
  sub(/\.$/, "", s)
  if (length(s) <= 60)
    return s
  cut = 0
  for (i = 16; i < length(s) && !cut; i++) {
    c = substr(s, i, 2)
    if (c == ": " || c == "; " || c == ", " || c == " (")
      cut = i
  }
  return cut ? substr(s, 1, cut - 1) : s
}

function write_page(name,    out, kind, p, n, lines, i, l, summary) {
  out = outdir "/" name ".3"
  kind = sym_kind[name]
  print ".\\\" " name "(3): generated by doc/man3.awk from " sym_file[name] "." > out
  print ".\\\" Edit the header's comment, not this page." > out
  print th(name) > out
  summary = short_summary(sym_para[name, 1])
  print ".SH NAME" > out
  print name " \\- " markup(summary) > out
  print ".SH SYNOPSIS" > out
  print ".nf" > out
  print ".B #include <kvevents/kvevents.h>" > out
  print ".PP" > out
  if (kind == "function" || kind == "callback")
    synopsis_prototype(name, out)
  else if (kind == "enum" || kind == "record") {
    n = split(sym_enum_lines[name], lines, "\n")
    for (i = 1; i <= n; i++) {
      l = lines[i]
      sub(/[ \t]+$/, "", l)
      print ".B \"" esc(l) "\"" > out
    }
  } else if (kind == "macro" && sym_decl[name] ~ /^#define [A-Za-z0-9_]+\(/)
    synopsis_macro(name, out)
  else
    print ".B \"" esc(sym_decl[name]) "\"" > out
  print ".fi" > out
  print ".SH DESCRIPTION" > out
  for (p = 1; p <= sym_body[name]; p++) {
    if (p > 1)
      print ".PP" > out
    print para(sym_para[name, p]) > out
  }
  if (sym_args[name] > 0) {
    print ".PP" > out
    print (kind == "enum" ? "The values:" : kind == "record" ? "The members:" : "The arguments:") > out
    for (p = 1; p <= sym_args[name]; p++) {
      print ".TP" > out
      print (kind == "enum" || kind == "record" ? ".B " : ".I ") sym_arg[name, p] > out
      print para(sym_arg_text[name, p]) > out
    }
  }
  if (kind == "function" || kind == "callback") {
    print ".SH RETURN VALUE" > out
    if (sym_returns[name] != "")
      print para(sym_returns[name]) > out
    else
      print "None." > out
  }
  if (sym_errors[name] != "") {
    print ".SH ERRORS" > out
    n = split(sym_errors[name], lines, "\n")
    for (i = 1; i <= n; i++) {
      if (i > 1)
        print ".PP" > out
      print para(lines[i]) > out
    }
  } else if (sym_decl[name] ~ /GError \*\*error/)
    gerror_codes(name, out)
  if (sym_threadsafe[name]) {
    print ".SH NOTES" > out
    print (kind == "function" ? "This function is thread\\-safe." : "Thread\\-safe.") > out
  }
  if (sym_since[name] != "") {
    print ".SH HISTORY" > out
    print "Since libkvevents " esc(sym_since[name]) "." > out
  }
  see_also(name, out)
  close(out)
}

END {
  if (failed)
    exit 1
  if (state != "code")
    fail("a comment or a declaration is not closed")
  for (i = 1; i <= n_syms; i++)
    write_page(sym[i])
}
