/* Leases from C: the `lease` option, the leased node value, the lease as
 * JSON, close and free releasing, errors with their messages, on a real
 * directory (a fresh temporary one). */
#include <unistd.h>

#include "common.h"

static char last_message[1024];

static const char *message(void) {
  size_t n = 0;
  if (snowmint_last_error_message(last_message, sizeof last_message, &n) != SNOWMINT_STATUS_OK)
    return "(message did not fit)";
  return last_message;
}

int main(void) {
  char dir[] = "/tmp/snowmint-c-lease-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  char url[256];
  snprintf(url, sizeof url, "file:%s?namespace=c-test", dir);

  const snowmint_layout *twitter = NULL;
  CHECK_CODE(snowmint_layout_preset("twitter", &twitter), "ok", "twitter");
  snowmint_options opts = {0};
  opts.lease = url;

  /* By position: datacenter given, worker (the last node field) leased. */
  const uint64_t dc1[] = {1};
  const snowmint_generator *g = NULL;
  CHECK_CODE(snowmint_generator_new(twitter, dc1, 1, &opts, &g), "ok", "leased generator: %s", message());
  uint64_t nodes[SNOWMINT_MAX_NODES];
  size_t count = 0;
  CHECK_CODE(snowmint_generator_nodes(g, nodes, SNOWMINT_MAX_NODES, &count), "ok", "nodes");
  CHECK(count == 2 && nodes[0] == 1 && nodes[1] < 32, "nodes %zu: %" PRIu64 ", %" PRIu64, count,
        nodes[0], nodes[1]);
  uint64_t id = 0;
  CHECK_CODE(snowmint_generator_next_id(g, &id), "ok", "next_id");
  snowmint_parts parts;
  CHECK_CODE(snowmint_decode(twitter, id, &parts), "ok", "decode");
  CHECK(parts.nodes[0] == 1 && parts.nodes[1] == nodes[1], "the ID carries the leased value");
  CHECK_CODE(snowmint_generator_nodes(g, nodes, 1, &count), "buffer_too_small", "short buffer");

  char json[1024];
  size_t written = 0;
  CHECK_CODE(snowmint_generator_lease_json(g, json, sizeof json, &written), "ok", "lease json");
  char want[64];
  snprintf(want, sizeof want, "\"slot\":%" PRIu64 ",", nodes[1]);
  CHECK(strstr(json, "\"field\":\"worker\"") && strstr(json, want) && strstr(json, dir) &&
            strstr(json, "\"reserved_until_ms\":") && strlen(json) == written,
        "lease json: %s", json);
  CHECK_CODE(snowmint_generator_lease_json(g, json, 8, &written), "buffer_too_small", "short");

  /* By name: 31 more generators with datacenter 1 take every other slot. */
  const char *names[] = {"datacenter"};
  const snowmint_generator *more[32] = {0};
  int got = 0;
  for (int i = 0; i < 32; i++) {
    snowmint_status s = snowmint_generator_new_by_name(twitter, names, dc1, 1, &opts, &more[i]);
    if (s == SNOWMINT_STATUS_OK) {
      got++;
    } else {
      CHECK(i == 31, "generator %d failed early: %s", i, message());
      CHECK_CODE(s, "lease_unavailable", "the 33rd holder");
      CHECK(strstr(message(), "all 32 slots are held") && strstr(message(), dir),
            "message names the store and the cause: %s", message());
    }
  }
  CHECK(got == 31, "31 more holders, got %d", got);

  /* close releases: later calls fail, a second close does nothing, and the
   * freed slot goes to the next claimer, which issues above every ID. */
  CHECK_CODE(snowmint_generator_close(g), "ok", "close");
  CHECK_CODE(snowmint_generator_next_id(g, &id), "lease_expired", "next_id after close");
  CHECK(strstr(message(), "lease_expired") != NULL, "message: %s", message());
  CHECK_CODE(snowmint_generator_close(g), "ok", "second close");
  const snowmint_generator *again = NULL;
  CHECK_CODE(snowmint_generator_new(twitter, dc1, 1, &opts, &again), "ok", "slot reused: %s", message());
  uint64_t id2 = 0;
  CHECK_CODE(snowmint_generator_next_id(again, &id2), "ok", "next_id");
  CHECK(id2 > id, "%" PRIu64 " > %" PRIu64, id2, id);
  snowmint_generator_free(g);
  snowmint_generator_free(again);

  /* free releases too. */
  snowmint_generator_free(more[0]);
  more[0] = NULL;
  CHECK_CODE(snowmint_generator_new(twitter, dc1, 1, &opts, &again), "ok", "after free: %s", message());
  snowmint_generator_free(again);
  for (int i = 0; i < 32; i++) snowmint_generator_free(more[i]);

  /* Errors. */
  const uint64_t both[] = {1, 2};
  CHECK_CODE(snowmint_generator_new(twitter, both, 2, &opts, &again), "invalid_option", "all fixed");
  CHECK(strstr(message(), "unfixed") != NULL, "message: %s", message());
  snowmint_options bad = {0};
  bad.lease = "ftp://example";
  CHECK_CODE(snowmint_generator_new(twitter, dc1, 1, &bad, &again), "invalid_option", "bad scheme");
  CHECK(strstr(message(), "lease") != NULL, "message: %s", message());
  /* Every network store is built in: a port where nothing listens is
     lease_unavailable naming the store (real servers: cargo xtask test interop). */
  const char *network[] = {"postgres://postgres@127.0.0.1:1/test?timeout_ms=2000",
                           "mysql://root@127.0.0.1:1/test?timeout_ms=2000",
                           "redis://127.0.0.1:1?timeout_ms=2000", "etcd://127.0.0.1:1?timeout_ms=2000",
                           "zookeeper://127.0.0.1:1?timeout_ms=2000"};
  for (size_t i = 0; i < sizeof network / sizeof network[0]; i++) {
    bad.lease = network[i];
    CHECK_CODE(snowmint_generator_new(twitter, dc1, 1, &bad, &again), "lease_unavailable", "%s",
               network[i]);
    CHECK(strstr(message(), "127.0.0.1:1") != NULL && strstr(message(), "not built") == NULL,
          "message: %s", message());
  }
  snowmint_pure_generator *pure = NULL;
  CHECK_CODE(snowmint_pure_generator_new(twitter, both, 2, &opts, &pure), "invalid_option",
             "a pure generator has no lease");
  /* A C-level error replaces the message. */
  CHECK_CODE(snowmint_generator_next_id(NULL, &id), "null_argument", "NULL");
  CHECK(strstr(message(), "NULL") != NULL, "message: %s", message());

  snowmint_layout_free(twitter);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return finish("test_lease");
}
