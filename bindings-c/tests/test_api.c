/*
 * The C API's conventions, function by function: NULL arguments give
 * SNOWMINT_STATUS_NULL_ARGUMENT (or 0/false/NULL for accessors), bad
 * arguments give their status, outputs are untouched on error, buffers that
 * are too small are refused, and the version macros agree with the library.
 * cargo xtask test c checks that every function the header declares is named here.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define NULL_ARG "null_argument"

static const uint64_t TW_NODES[2] = {1, 3};
static const char *const TW_NAMES[2] = {"worker", "datacenter"};
static const uint64_t TW_VALUES[2] = {3, 1};

static void version(void) {
  char want[64];
  snprintf(want, sizeof want, "%d.%d.%d", SNOWMINT_VERSION_MAJOR, SNOWMINT_VERSION_MINOR,
           SNOWMINT_VERSION_PATCH);
  CHECK(strcmp(want, SNOWMINT_VERSION_STRING) == 0, "macros %s vs %s", want, SNOWMINT_VERSION_STRING);
  CHECK(strcmp(snowmint_version(), SNOWMINT_VERSION_STRING) == 0, "library %s, header %s",
        snowmint_version(), SNOWMINT_VERSION_STRING);
}

static void statuses(void) {
  CHECK(strcmp(snowmint_status_code(SNOWMINT_STATUS_OK), "ok") == 0, "ok");
  CHECK(strcmp(snowmint_status_code(SNOWMINT_STATUS_NULL_ARGUMENT), "null_argument") == 0, "null");
  CHECK(strcmp(snowmint_status_code(SNOWMINT_STATUS_BUFFER_TOO_SMALL), "buffer_too_small") == 0, "buf");
  CHECK(strcmp(snowmint_status_code(SNOWMINT_STATUS_INVALID_UTF8), "invalid_utf8") == 0, "utf8");
  CHECK(strcmp(snowmint_status_code(SNOWMINT_STATUS_INDEX_OUT_OF_RANGE), "index_out_of_range") == 0, "index");
  CHECK(strcmp(snowmint_status_code(SNOWMINT_STATUS_PANIC), "panic") == 0, "panic");
  CHECK(strcmp(snowmint_status_code(SNOWMINT_STATUS_UNKNOWN_ERROR), "unknown_error") == 0, "unknown");
  CHECK(strcmp(snowmint_status_code(SNOWMINT_STATUS_INVALID_LAYOUT), "invalid_layout") == 0, "layout");
  /* Values are fixed forever. */
  CHECK(SNOWMINT_STATUS_INVALID_LAYOUT == 1 && SNOWMINT_STATUS_PROCESS_FORKED == 11 &&
            SNOWMINT_STATUS_NULL_ARGUMENT == 100 && SNOWMINT_STATUS_PANIC == 104,
        "status values");
  /* Values that are no status still give a string, never NULL. */
  CHECK(strcmp(snowmint_status_code(-1), "unknown_status") == 0, "-1");
  CHECK(strcmp(snowmint_status_code(12345), "unknown_status") == 0, "12345");
  CHECK(strcmp(snowmint_status_str(12345), "unknown status") == 0, "str 12345");
  CHECK(strlen(snowmint_status_str(SNOWMINT_STATUS_TIME_OVERFLOW)) > 10, "message");
}

static void layouts(void) {
  const snowmint_layout *l = NULL, *sentinel = (const snowmint_layout *)&l;
  const snowmint_layout *out = sentinel;

  /* Constructors. */
  CHECK_CODE(snowmint_layout_preset(NULL, &out), NULL_ARG, "preset(NULL)");
  CHECK_CODE(snowmint_layout_preset("twitter", NULL), NULL_ARG, "preset(out NULL)");
  CHECK_CODE(snowmint_layout_preset("nope", &out), "unknown_preset", "preset nope");
  CHECK_CODE(snowmint_layout_preset("tw\xff", &out), "invalid_utf8", "preset bad utf8");
  CHECK_CODE(snowmint_layout_parse(NULL, 3, &out), NULL_ARG, "parse(NULL)");
  CHECK_CODE(snowmint_layout_parse(NULL, 0, &out), NULL_ARG, "parse(NULL, 0)");
  CHECK_CODE(snowmint_layout_parse("", 0, &out), "unknown_preset", "parse empty");
  CHECK_CODE(snowmint_layout_parse("tsid", 4, NULL), NULL_ARG, "parse(out NULL)");
  CHECK_CODE(snowmint_layout_parse("\xc3", 1, &out), "invalid_utf8", "parse bad utf8");
  CHECK_CODE(snowmint_layout_from_json(NULL, 2, &out), NULL_ARG, "from_json(NULL)");
  CHECK_CODE(snowmint_layout_from_json(NULL, 0, &out), NULL_ARG, "from_json(NULL, 0)");
  CHECK_CODE(snowmint_layout_from_json("\"tsid\"", 6, NULL), NULL_ARG, "from_json(out NULL)");
  /* from_json is strict JSON: a bare preset name is not JSON. */
  CHECK_CODE(snowmint_layout_from_json("tsid", 4, &out), "invalid_layout", "from_json bare name");
  CHECK_CODE(snowmint_layout_from_json("{", 1, &out), "invalid_layout", "from_json {");
  CHECK(out == sentinel, "output written on error");
  /* Lengths are honoured: no NUL needed, bytes after len are ignored. */
  CHECK_OK(snowmint_layout_parse("tsidXXXX", 4, &l), "parse with len");
  CHECK(strcmp(snowmint_layout_preset_name(l), "tsid") == 0, "tsid");
  const snowmint_layout *tsid2 = NULL;
  CHECK_OK(snowmint_layout_from_json("\"tsid\"", 6, &tsid2), "from_json string");
  CHECK(snowmint_layout_equal(l, tsid2), "equal");
  snowmint_layout_free(tsid2);
  snowmint_layout_free(l);
  snowmint_layout_free(NULL);

  CHECK_OK(snowmint_layout_preset("twitter", &l), "twitter");

  /* Accessors: 0 / false / NULL for a NULL handle. */
  CHECK(snowmint_layout_epoch_ms(NULL) == 0 && snowmint_layout_epoch_ms(l) == 1288834974657ULL, "epoch");
  CHECK(snowmint_layout_time_unit_ms(NULL) == 0 && snowmint_layout_time_unit_ms(l) == 1, "unit");
  CHECK(snowmint_layout_total_bits(NULL) == 0 && snowmint_layout_total_bits(l) == 63, "bits");
  CHECK(snowmint_layout_max_id(NULL) == 0 && snowmint_layout_max_id(l) == INT64_MAX, "max id");
  CHECK(snowmint_layout_time_end_ms(NULL) == 0 && snowmint_layout_time_end_ms(l) == 3487858230209ULL, "end");
  CHECK(snowmint_layout_i64_end_ms(NULL) == 0 && snowmint_layout_i64_end_ms(l) == 3487858230209ULL, "i64 end");
  CHECK(snowmint_layout_js_safe_end_ms(NULL) == 0 && snowmint_layout_js_safe_end_ms(l) == 1290982458305ULL, "js end");
  CHECK(snowmint_layout_field_count(NULL) == 0 && snowmint_layout_field_count(l) == 4, "fields");
  CHECK(snowmint_layout_node_count(NULL) == 0 && snowmint_layout_node_count(l) == 2, "nodes");
  CHECK(snowmint_layout_preset_name(NULL) == NULL, "preset name NULL");
  CHECK(!snowmint_layout_equal(NULL, l) && !snowmint_layout_equal(l, NULL) && snowmint_layout_equal(l, l), "equal NULL");

  /* Fields and node names. */
  snowmint_field f = {0}, f_sentinel = {0};
  f_sentinel.bits = 77;
  f = f_sentinel;
  CHECK_CODE(snowmint_layout_field(NULL, 0, &f), NULL_ARG, "field(NULL)");
  CHECK_CODE(snowmint_layout_field(l, 0, NULL), NULL_ARG, "field(out NULL)");
  CHECK_CODE(snowmint_layout_field(l, 4, &f), "index_out_of_range", "field 4");
  CHECK_CODE(snowmint_layout_field(l, SIZE_MAX, &f), "index_out_of_range", "field SIZE_MAX");
  CHECK(f.bits == 77, "field written on error");
  CHECK_OK(snowmint_layout_field(l, 3, &f), "field 3");
  CHECK(strcmp(f.name, "sequence") == 0 && f.bits == 12 && f.shift == 0 && f.kind == SNOWMINT_FIELD_KIND_SEQUENCE, "field 3");
  const char *name = "untouched";
  CHECK_CODE(snowmint_layout_node_name(NULL, 0, &name), NULL_ARG, "node_name(NULL)");
  CHECK_CODE(snowmint_layout_node_name(l, 0, NULL), NULL_ARG, "node_name(out NULL)");
  CHECK_CODE(snowmint_layout_node_name(l, 2, &name), "index_out_of_range", "node 2");
  CHECK(strcmp(name, "untouched") == 0, "node name written on error");
  CHECK_OK(snowmint_layout_node_name(l, 1, &name), "node 1");
  CHECK(strcmp(name, "worker") == 0, "node 1 is worker");
  size_t index = 42;
  CHECK_CODE(snowmint_layout_node_index(NULL, "worker", &index), NULL_ARG, "node_index(NULL)");
  CHECK_CODE(snowmint_layout_node_index(l, NULL, &index), NULL_ARG, "node_index(name NULL)");
  CHECK_CODE(snowmint_layout_node_index(l, "worker", NULL), NULL_ARG, "node_index(out NULL)");
  CHECK_CODE(snowmint_layout_node_index(l, "sequence", &index), "unknown_field", "sequence is no node");
  CHECK_CODE(snowmint_layout_node_index(l, "nope", &index), "unknown_field", "nope");
  CHECK_CODE(snowmint_layout_node_index(l, "\xff", &index), "invalid_utf8", "bad utf8");
  CHECK(index == 42, "index written on error");
  CHECK_OK(snowmint_layout_node_index(l, "datacenter", &index), "datacenter");
  CHECK(index == 0, "datacenter is node 0");

  /* JSON into a buffer. */
  char buf[SNOWMINT_LAYOUT_JSON_SIZE];
  size_t w = 999;
  memset(buf, 'x', sizeof buf);
  CHECK_CODE(snowmint_layout_to_json(NULL, buf, sizeof buf, &w), NULL_ARG, "to_json(NULL)");
  CHECK_CODE(snowmint_layout_to_json(l, NULL, sizeof buf, &w), NULL_ARG, "to_json(buf NULL)");
  CHECK_CODE(snowmint_layout_to_json(l, buf, sizeof buf, NULL), NULL_ARG, "to_json(written NULL)");
  CHECK_CODE(snowmint_layout_to_json(l, buf, 0, &w), "buffer_too_small", "len 0");
  CHECK_CODE(snowmint_layout_to_json(l, buf, 20, &w), "buffer_too_small", "len 20");
  CHECK(buf[0] == 'x' && w == 999, "to_json wrote on error");
  CHECK_OK(snowmint_layout_to_json(l, buf, sizeof buf, &w), "to_json");
  CHECK(w == strlen(buf) && buf[0] == '{', "to_json");
  size_t need = w + 1;
  CHECK_CODE(snowmint_layout_to_json(l, buf, need - 1, &w), "buffer_too_small", "one short");
  CHECK_OK(snowmint_layout_to_json(l, buf, need, &w), "exact size");

  /* Epoch check. */
  CHECK_CODE(snowmint_layout_check_epoch(NULL, 0), NULL_ARG, "check_epoch(NULL)");
  CHECK_CODE(snowmint_layout_check_epoch(l, 0), "invalid_layout", "epoch in the future");
  CHECK_OK(snowmint_layout_check_epoch(l, 1288834974657ULL), "epoch now");

  /* Presets. */
  CHECK(snowmint_preset_count() == 10, "10 presets");
  CHECK(strcmp(snowmint_preset_name(0), "twitter") == 0, "preset 0");
  CHECK(snowmint_preset_name(10) == NULL && snowmint_preset_name(SIZE_MAX) == NULL, "preset past the end");
  snowmint_layout_free(l);
}

static void ids(void) {
  const snowmint_layout *l = NULL;
  CHECK_OK(snowmint_layout_preset("twitter", &l), "twitter");
  const uint64_t ms = 1656432460105ULL, id = 1541815603606036480ULL;

  snowmint_parts p;
  memset(&p, 0xab, sizeof p);
  CHECK_CODE(snowmint_decode(NULL, id, &p), NULL_ARG, "decode(NULL)");
  CHECK_CODE(snowmint_decode(l, id, NULL), NULL_ARG, "decode(out NULL)");
  CHECK_CODE(snowmint_decode(l, UINT64_MAX, &p), "invalid_id", "too wide");
  CHECK(p.node_count == (size_t)0xababababababababULL, "decode wrote on error");
  CHECK_OK(snowmint_decode(l, id, &p), "decode");
  CHECK(p.timestamp_ms == ms && p.sequence == 0 && p.node_count == 2 && p.id == id, "decode parts");

  uint64_t out = 5;
  CHECK_CODE(snowmint_compose(NULL, ms, 0, TW_NODES, 2, &out), NULL_ARG, "compose(NULL)");
  CHECK_CODE(snowmint_compose(l, ms, 0, TW_NODES, 2, NULL), NULL_ARG, "compose(out NULL)");
  CHECK_CODE(snowmint_compose(l, ms, 0, NULL, 2, &out), NULL_ARG, "compose(nodes NULL)");
  CHECK_CODE(snowmint_compose(l, ms, 0, NULL, 0, &out), "missing_node", "compose no nodes");
  CHECK_CODE(snowmint_compose(l, ms, 0, TW_NODES, 1, &out), "missing_node", "compose 1 node");
  uint64_t three[3] = {1, 2, 3};
  CHECK_CODE(snowmint_compose(l, ms, 0, three, 3, &out), "unknown_field", "compose 3 nodes");
  CHECK_CODE(snowmint_compose(l, ms, 4096, TW_NODES, 2, &out), "node_out_of_range", "sequence 4096");
  CHECK_CODE(snowmint_compose(l, 0, 0, TW_NODES, 2, &out), "time_before_epoch", "time 0");
  CHECK_CODE(snowmint_compose(l, UINT64_MAX, 0, TW_NODES, 2, &out), "time_overflow", "time max");
  CHECK(out == 5, "compose wrote on error");
  CHECK_OK(snowmint_compose(l, ms, 0, TW_NODES, 2, &out), "compose");
  uint64_t by_name = 0;
  CHECK_CODE(snowmint_compose_by_name(NULL, ms, 0, TW_NAMES, TW_VALUES, 2, &by_name), NULL_ARG, "by_name(NULL)");
  CHECK_CODE(snowmint_compose_by_name(l, ms, 0, NULL, TW_VALUES, 2, &by_name), NULL_ARG, "names NULL");
  CHECK_CODE(snowmint_compose_by_name(l, ms, 0, TW_NAMES, NULL, 2, &by_name), NULL_ARG, "values NULL");
  CHECK_CODE(snowmint_compose_by_name(l, ms, 0, TW_NAMES, TW_VALUES, 2, NULL), NULL_ARG, "out NULL");
  const char *const with_null[2] = {"worker", NULL};
  CHECK_CODE(snowmint_compose_by_name(l, ms, 0, with_null, TW_VALUES, 2, &by_name), NULL_ARG, "a NULL name");
  const char *const twice[2] = {"worker", "worker"};
  CHECK_CODE(snowmint_compose_by_name(l, ms, 0, twice, TW_VALUES, 2, &by_name), "unknown_field", "name twice");
  CHECK_CODE(snowmint_compose_by_name(l, ms, 0, NULL, NULL, 0, &by_name), "missing_node", "no names");
  CHECK_OK(snowmint_compose_by_name(l, ms, 0, TW_NAMES, TW_VALUES, 2, &by_name), "by name");
  CHECK(by_name == out, "by name == by value");

  uint64_t lo = 1, hi = 1;
  CHECK_CODE(snowmint_id_bounds(NULL, ms, &lo, &hi), NULL_ARG, "bounds(NULL)");
  CHECK_CODE(snowmint_id_bounds(l, ms, NULL, &hi), NULL_ARG, "bounds(min NULL)");
  CHECK_CODE(snowmint_id_bounds(l, ms, &lo, NULL), NULL_ARG, "bounds(max NULL)");
  CHECK_CODE(snowmint_id_bounds(l, 5, &lo, &hi), "time_before_epoch", "bounds early");
  CHECK(lo == 1 && hi == 1, "bounds wrote on error");
  CHECK_OK(snowmint_id_bounds(l, ms, &lo, &hi), "bounds");
  CHECK(lo <= id && id <= hi && hi - lo == 4194303, "bounds");

  CHECK(!snowmint_is_plausible(NULL, id, ms), "plausible NULL");
  CHECK(snowmint_is_plausible(l, id, ms), "plausible");
  CHECK(!snowmint_is_plausible(l, UINT64_MAX, ms), "too wide");

  /* Formats. */
  snowmint_format fmt = SNOWMINT_FORMAT_DECIMAL;
  CHECK_CODE(snowmint_format_from_name(NULL, &fmt), NULL_ARG, "format(NULL)");
  CHECK_CODE(snowmint_format_from_name("base32", NULL), NULL_ARG, "format(out NULL)");
  CHECK_CODE(snowmint_format_from_name("hex", &fmt), "invalid_id", "hex");
  CHECK(fmt == SNOWMINT_FORMAT_DECIMAL, "format written on error");
  CHECK_OK(snowmint_format_from_name("base62", &fmt), "base62");
  CHECK(fmt == SNOWMINT_FORMAT_BASE62, "base62 value");
  char s[SNOWMINT_ID_STR_SIZE] = "untouched";
  size_t w = 0;
  CHECK_CODE(snowmint_format_id(id, SNOWMINT_FORMAT_BASE32, NULL, sizeof s, &w), NULL_ARG, "format_id(buf NULL)");
  CHECK_CODE(snowmint_format_id(id, SNOWMINT_FORMAT_BASE32, s, sizeof s, NULL), NULL_ARG, "format_id(written NULL)");
  CHECK_CODE(snowmint_format_id(id, 3, s, sizeof s, &w), "invalid_id", "format 3");
  CHECK_CODE(snowmint_format_id(id, 0xffffffffu, s, sizeof s, &w), "invalid_id", "format max");
  CHECK_CODE(snowmint_format_id(id, SNOWMINT_FORMAT_BASE32, s, 13, &w), "buffer_too_small", "13 bytes");
  CHECK(strcmp(s, "untouched") == 0, "format_id wrote on error");
  CHECK_OK(snowmint_format_id(id, SNOWMINT_FORMAT_BASE32, s, 14, &w), "14 bytes");
  CHECK(strcmp(s, "1ASD13XH1F800") == 0 && w == 13, "base32 %s", s);
  CHECK_OK(snowmint_format_id(UINT64_MAX, SNOWMINT_FORMAT_DECIMAL, s, sizeof s, &w), "max");
  CHECK(strcmp(s, "18446744073709551615") == 0 && w == 20, "decimal max");

  uint64_t v = 9;
  CHECK_CODE(snowmint_parse_id(NULL, 3, SNOWMINT_FORMAT_DECIMAL, &v), NULL_ARG, "parse(NULL)");
  CHECK_CODE(snowmint_parse_id(NULL, 0, SNOWMINT_FORMAT_DECIMAL, &v), NULL_ARG, "parse(NULL, 0)");
  CHECK_CODE(snowmint_parse_id("123", 3, SNOWMINT_FORMAT_DECIMAL, NULL), NULL_ARG, "parse(out NULL)");
  CHECK_CODE(snowmint_parse_id("123", 3, 7, &v), "invalid_id", "format 7");
  CHECK_CODE(snowmint_parse_id("12\xff", 3, SNOWMINT_FORMAT_DECIMAL, &v), "invalid_utf8", "bad utf8");
  CHECK_CODE(snowmint_parse_id("12\0" "3", 4, SNOWMINT_FORMAT_DECIMAL, &v), "invalid_id", "embedded NUL");
  CHECK_CODE(snowmint_parse_id("", 0, SNOWMINT_FORMAT_DECIMAL, &v), "invalid_id", "empty");
  CHECK(v == 9, "parse wrote on error");
  CHECK_OK(snowmint_parse_id("123456", 3, SNOWMINT_FORMAT_DECIMAL, &v), "len 3");
  CHECK(v == 123, "only len bytes are read");

  char iso[SNOWMINT_ISO8601_SIZE] = "untouched";
  CHECK_CODE(snowmint_iso8601(0, NULL, sizeof iso, &w), NULL_ARG, "iso(buf NULL)");
  CHECK_CODE(snowmint_iso8601(0, iso, sizeof iso, NULL), NULL_ARG, "iso(written NULL)");
  CHECK_CODE(snowmint_iso8601(0, iso, 24, &w), "buffer_too_small", "24 bytes");
  CHECK(strcmp(iso, "untouched") == 0, "iso wrote on error");
  CHECK_OK(snowmint_iso8601(1462015105796ULL, iso, 25, &w), "25 bytes");
  CHECK(strcmp(iso, "2016-04-30T11:18:25.796Z") == 0 && w == 24, "iso %s", iso);
  CHECK_OK(snowmint_iso8601(UINT64_MAX, iso, sizeof iso, &w), "iso max");
  snowmint_layout_free(l);
}

static void generators(void) {
  const snowmint_layout *l = NULL;
  CHECK_OK(snowmint_layout_preset("twitter", &l), "twitter");
  const snowmint_generator *g = NULL, *g2 = NULL;
  snowmint_options bad = {0};
  bad.sequence_start = "random:0";

  CHECK_CODE(snowmint_generator_new(NULL, TW_NODES, 2, NULL, &g), NULL_ARG, "new(NULL)");
  CHECK_CODE(snowmint_generator_new(l, TW_NODES, 2, NULL, NULL), NULL_ARG, "new(out NULL)");
  CHECK_CODE(snowmint_generator_new(l, NULL, 2, NULL, &g), NULL_ARG, "new(nodes NULL)");
  CHECK_CODE(snowmint_generator_new(l, TW_NODES, 1, NULL, &g), "missing_node", "new 1 node");
  CHECK_CODE(snowmint_generator_new(l, TW_NODES, 2, &bad, &g), "invalid_option", "random:0");
  bad.sequence_start = "\xff";
  CHECK_CODE(snowmint_generator_new(l, TW_NODES, 2, &bad, &g), "invalid_utf8", "bad utf8 policy");
  snowmint_options future = {0};
  future.has_resume_after = true;
  future.resume_after = UINT64_MAX;
  CHECK_CODE(snowmint_generator_new(l, TW_NODES, 2, &future, &g), "invalid_option", "resume_after too wide");
  CHECK_CODE(snowmint_generator_new_by_name(NULL, TW_NAMES, TW_VALUES, 2, NULL, &g), NULL_ARG, "by_name(NULL)");
  CHECK_CODE(snowmint_generator_new_by_name(l, NULL, TW_VALUES, 2, NULL, &g), NULL_ARG, "by_name(names NULL)");
  CHECK_CODE(snowmint_generator_new_by_name(l, TW_NAMES, NULL, 2, NULL, &g), NULL_ARG, "by_name(values NULL)");
  CHECK_CODE(snowmint_generator_new_by_name(l, TW_NAMES, TW_VALUES, 2, NULL, NULL), NULL_ARG, "by_name(out NULL)");
  CHECK(g == NULL, "generator written on error");

  snowmint_options opts = {0};
  opts.clock_backwards = "wait:5";
  opts.sequence_exhausted = "wait";
  opts.sequence_start = "zero";
  CHECK_OK(snowmint_generator_new(l, TW_NODES, 2, &opts, &g), "new");
  CHECK_OK(snowmint_generator_new_by_name(l, TW_NAMES, TW_VALUES, 2, NULL, &g2), "new by name");
  CHECK(snowmint_generator_shares_state(g, g2), "same layout and nodes share state");
  CHECK(!snowmint_generator_shares_state(g, NULL) && !snowmint_generator_shares_state(NULL, g2), "shares NULL");

  uint64_t id = 0, prev = 0;
  CHECK_CODE(snowmint_generator_next_id(NULL, &id), NULL_ARG, "next_id(NULL)");
  CHECK_CODE(snowmint_generator_next_id(g, NULL), NULL_ARG, "next_id(out NULL)");
  CHECK_OK(snowmint_generator_next_id(g, &prev), "next_id");
  CHECK_OK(snowmint_generator_next_id(g2, &id), "next_id g2");
  CHECK(id > prev, "increasing across generators");
  snowmint_parts p;
  CHECK_OK(snowmint_decode(l, id, &p), "decode");
  CHECK(p.nodes[0] == 1 && p.nodes[1] == 3, "node values");

  snowmint_next next = {SNOWMINT_NEXT_KIND_RETRY_AT, 0};
  CHECK_CODE(snowmint_generator_try_next_id(NULL, &next), NULL_ARG, "try(NULL)");
  CHECK_CODE(snowmint_generator_try_next_id(g, NULL), NULL_ARG, "try(out NULL)");
  CHECK_OK(snowmint_generator_try_next_id(g, &next), "try");
  CHECK(next.kind == SNOWMINT_NEXT_KIND_ID ? next.value > id : next.value > 0, "try value");

  uint64_t batch[1000];
  CHECK_CODE(snowmint_generator_next_ids(NULL, batch, 1000), NULL_ARG, "next_ids(NULL)");
  CHECK_CODE(snowmint_generator_next_ids(g, NULL, 1000), NULL_ARG, "next_ids(buf NULL)");
  CHECK_OK(snowmint_generator_next_ids(g, NULL, 0), "next_ids 0");
  if (sizeof(size_t) > 4) {
    CHECK_CODE(snowmint_generator_next_ids(g, batch, (size_t)1 << 33), "invalid_option", "2^33 ids");
  }
  CHECK_OK(snowmint_generator_next_ids(g, batch, 1000), "next_ids");
  int increasing = 1;
  for (int i = 1; i < 1000; i++) increasing &= batch[i] > batch[i - 1];
  CHECK(increasing && batch[0] > id, "batch increasing");

  /* A generator inherited across fork() refuses to run in the child. The
   * child reports success by SIGUSR1 rather than its exit status: under
   * valgrind a forked child's exit runs a leak check that counts the
   * parent's thread stacks (gone in the child) as lost and turns the exit
   * status into valgrind's error code. */
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    uint64_t x = 0;
    snowmint_status s = snowmint_generator_next_id(g, &x);
    if (s == SNOWMINT_STATUS_PROCESS_FORKED) raise(SIGUSR1);
    fprintf(stderr, "child: %s\n", snowmint_status_code(s));
    _exit(1);
  }
  int wstatus = 0;
  CHECK(pid > 0 && waitpid(pid, &wstatus, 0) == pid, "fork");
  CHECK(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGUSR1, "the child did not get process_forked");
  CHECK_OK(snowmint_generator_next_id(g, &id), "the parent goes on");

  snowmint_generator_free(g2);
  snowmint_generator_free(g);
  snowmint_generator_free(NULL);

  /* The pure generator. */
  snowmint_pure_generator *pg = NULL;
  CHECK_CODE(snowmint_pure_generator_new(NULL, TW_NODES, 2, NULL, &pg), NULL_ARG, "pure(NULL)");
  CHECK_CODE(snowmint_pure_generator_new(l, TW_NODES, 2, NULL, NULL), NULL_ARG, "pure(out NULL)");
  CHECK_CODE(snowmint_pure_generator_new(l, NULL, 2, NULL, &pg), NULL_ARG, "pure(nodes NULL)");
  CHECK_CODE(snowmint_pure_generator_new_by_name(NULL, TW_NAMES, TW_VALUES, 2, NULL, &pg), NULL_ARG, "pure by_name(NULL)");
  CHECK_CODE(snowmint_pure_generator_new_by_name(l, TW_NAMES, TW_VALUES, 2, NULL, NULL), NULL_ARG, "pure by_name(out NULL)");
  const char *const unknown[2] = {"worker", "shard"};
  CHECK_CODE(snowmint_pure_generator_new_by_name(l, unknown, TW_VALUES, 2, NULL, &pg), "unknown_field", "shard");
  CHECK(pg == NULL, "pure written on error");
  CHECK_OK(snowmint_pure_generator_new(l, TW_NODES, 2, &opts, &pg), "pure");
  snowmint_next n1 = {SNOWMINT_NEXT_KIND_RETRY_AT, 77};
  CHECK_CODE(snowmint_pure_generator_next(NULL, 1656432460105ULL, &n1), NULL_ARG, "pure next(NULL)");
  CHECK_CODE(snowmint_pure_generator_next(pg, 1656432460105ULL, NULL), NULL_ARG, "pure next(out NULL)");
  CHECK_CODE(snowmint_pure_generator_next(pg, 5, &n1), "time_before_epoch", "pure early");
  CHECK(n1.value == 77, "pure next wrote on error");
  CHECK_OK(snowmint_pure_generator_next(pg, 1656432460105ULL, &n1), "pure next");
  CHECK(n1.kind == SNOWMINT_NEXT_KIND_ID && n1.value == 1541815603604488192ULL + (1 << 17) + (3 << 12), "pure id %" PRIu64, n1.value);
  /* A reservation: nothing past its unit (lease_expired, output untouched); removed, IDs again. */
  CHECK_CODE(snowmint_pure_generator_reserve_until(NULL, true, 0), NULL_ARG, "reserve_until(NULL)");
  CHECK_OK(snowmint_pure_generator_reserve_until(pg, true, 1656432460105ULL), "reserve_until");
  n1.value = 77;
  CHECK_CODE(snowmint_pure_generator_next(pg, 1656432460106ULL, &n1), "lease_expired", "past the reservation");
  CHECK(n1.value == 77, "pure next wrote past the reservation");
  CHECK_OK(snowmint_pure_generator_reserve_until(pg, false, 0), "reserve_until removed");
  CHECK_OK(snowmint_pure_generator_next(pg, 1656432460106ULL, &n1), "pure next, no reservation");
  snowmint_pure_generator_free(pg);
  snowmint_pure_generator_free(NULL);
  CHECK_OK(snowmint_pure_generator_new_by_name(l, TW_NAMES, TW_VALUES, 2, NULL, &pg), "pure by name");
  snowmint_pure_generator_free(pg);
  snowmint_layout_free(l);
}

static void masks(void) {
  const snowmint_layout *l = NULL;
  CHECK_OK(snowmint_layout_preset("twitter", &l), "twitter");
  static const uint8_t key[32] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                  17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
  const snowmint_mask *m = NULL;
  /* NULL pointers, bad keys: nothing written. */
  CHECK_CODE(snowmint_mask_new(NULL, key, 16, NULL, 0, &m), NULL_ARG, "NULL layout");
  CHECK_CODE(snowmint_mask_new(l, NULL, 16, NULL, 0, &m), NULL_ARG, "NULL key");
  CHECK_CODE(snowmint_mask_new(l, key, 16, NULL, 3, &m), NULL_ARG, "NULL tweak of 3 bytes");
  CHECK_CODE(snowmint_mask_new(l, key, 16, NULL, 0, NULL), NULL_ARG, "NULL out");
  for (size_t len = 0; len <= 32; len++) {
    if (len == 16 || len == 32) continue;
    CHECK_CODE(snowmint_mask_new(l, key, len, NULL, 0, &m), "invalid_option", "key of %zu bytes", len);
  }
  CHECK(m == NULL, "no mask written on error");
  CHECK_CODE(snowmint_mask_new_hex(l, NULL, NULL, &m), NULL_ARG, "NULL hex key");
  CHECK_CODE(snowmint_mask_new_hex(l, "0g", NULL, &m), "invalid_option", "bad hex");
  CHECK_CODE(snowmint_mask_new_hex(l, "00112233445566778899aabbccddeeff", "abc", &m), "invalid_option",
             "odd tweak");
  /* The message never shows the key. */
  CHECK_CODE(snowmint_mask_new_hex(l, "00112233445566778899aabbccddeeZZ", NULL, &m), "invalid_option", "x");
  char msg[512];
  size_t n = 0;
  CHECK_OK(snowmint_last_error_message(msg, sizeof msg, &n), "message");
  CHECK(strstr(msg, "00112233") == NULL, "message shows the key: %s", msg);
  CHECK(m == NULL, "no mask written on error");

  /* The same mask from bytes and from hex; round trips; other tweak, other IDs. */
  const snowmint_mask *a = NULL, *b = NULL, *t = NULL;
  CHECK_OK(snowmint_mask_new(l, key, 16, (const uint8_t *)"t", 1, &a), "bytes");
  CHECK_OK(snowmint_mask_new_hex(l, "0102030405060708090A0b0c0d0e0f10", "74", &b), "hex");
  CHECK_OK(snowmint_mask_new(l, key, 32, NULL, 0, &t), "AES-256");
  snowmint_layout_free(l); /* the masks keep their own copy */
  uint64_t down = 0, prev = 0;
  for (uint64_t id = 1000; id < 3000; id++) {
    uint64_t p1 = 0, p2 = 0, p3 = 0, back = 0;
    CHECK_OK(snowmint_mask_mask(a, id, &p1), "mask");
    CHECK_OK(snowmint_mask_mask(b, id, &p2), "mask");
    CHECK_OK(snowmint_mask_mask(t, id, &p3), "mask");
    CHECK(p1 == p2 && p1 != p3 && p1 < (UINT64_C(1) << 63), "%" PRIu64, id);
    CHECK_OK(snowmint_mask_unmask(a, p1, &back), "unmask");
    CHECK(back == id, "round trip %" PRIu64, id);
    if (id > 1000 && p1 < prev) down++;
    prev = p1;
  }
  CHECK(down > 800 && down < 1200, "%" PRIu64 " of 1999 consecutive pairs decrease", down);
  uint64_t out = 7;
  CHECK_CODE(snowmint_mask_mask(NULL, 1, &out), NULL_ARG, "NULL mask");
  CHECK_CODE(snowmint_mask_mask(a, 1, NULL), NULL_ARG, "NULL out");
  CHECK_CODE(snowmint_mask_unmask(NULL, 1, &out), NULL_ARG, "NULL mask");
  CHECK_CODE(snowmint_mask_unmask(a, 1, NULL), NULL_ARG, "NULL out");
  CHECK_CODE(snowmint_mask_mask(a, UINT64_C(1) << 63, &out), "invalid_id", "above 63 bits");
  CHECK_CODE(snowmint_mask_unmask(a, UINT64_MAX, &out), "invalid_id", "above 63 bits");
  CHECK(out == 7, "output untouched on error");
  snowmint_mask_free(a);
  snowmint_mask_free(b);
  snowmint_mask_free(t);
  snowmint_mask_free(NULL);
}

int main(void) {
  version();
  statuses();
  layouts();
  ids();
  generators();
  masks();
  return finish("test_api");
}
