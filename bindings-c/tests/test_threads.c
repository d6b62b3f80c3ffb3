/*
 * Thread safety: 4 threads share one generator and mint N ids each (default
 * 1,000,000; fewer under valgrind); then two generators with the same layout
 * and node values, each used by its own threads, share one state. Every ID
 * must be unique (sort + scan). Usage: test_threads [N]
 */
#include <pthread.h>

#include "common.h"

#define THREADS 4

/* 20 sequence bits: about a million IDs per ms, so 4M IDs take a few ms of
 * clock rather than a second of waiting (Twitter's 4096 per ms). */
static const char *WIDE =
    "{\"epoch_ms\":1700000000000,\"fields\":[[\"timestamp\",41],[\"node\",2],[\"sequence\",20]]}";

typedef struct {
  const snowmint_generator *gen;
  uint64_t *ids;
  size_t n;
  int batch; /* use next_ids in chunks instead of next_id */
  int failed;
} job;

static void *mint(void *arg) {
  job *j = arg;
  if (j->batch) {
    for (size_t done = 0; done < j->n;) {
      size_t k = j->n - done < 1000 ? j->n - done : 1000;
      if (snowmint_generator_next_ids(j->gen, j->ids + done, k) != SNOWMINT_STATUS_OK) {
        j->failed = 1;
        return NULL;
      }
      done += k;
    }
  } else {
    for (size_t i = 0; i < j->n; i++) {
      if (snowmint_generator_next_id(j->gen, &j->ids[i]) != SNOWMINT_STATUS_OK) {
        j->failed = 1;
        return NULL;
      }
    }
  }
  return NULL;
}

static int cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Runs one thread per generator in gens[], n IDs each; checks uniqueness and
 * that each thread saw increasing IDs. */
static void run(const char *what, const snowmint_generator *const *gens, const int *batch, size_t n) {
  pthread_t t[THREADS];
  job jobs[THREADS];
  uint64_t *all = malloc(sizeof(uint64_t) * n * THREADS);
  CHECK(all != NULL, "malloc");
  if (!all) return;
  for (int i = 0; i < THREADS; i++) {
    jobs[i] = (job){gens[i], all + (size_t)i * n, n, batch[i], 0};
    CHECK(pthread_create(&t[i], NULL, mint, &jobs[i]) == 0, "pthread_create");
  }
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < THREADS; i++) {
    CHECK(!jobs[i].failed, "%s: thread %d failed", what, i);
    int increasing = 1;
    for (size_t k = 1; k < n; k++) increasing &= jobs[i].ids[k] > jobs[i].ids[k - 1];
    CHECK(increasing, "%s: thread %d saw IDs out of order", what, i);
  }
  qsort(all, n * THREADS, sizeof(uint64_t), cmp);
  size_t dups = 0;
  for (size_t k = 1; k < n * THREADS; k++) dups += all[k] == all[k - 1];
  CHECK(dups == 0, "%s: %zu duplicates", what, dups);
  printf("%s: %zu ids, %zu duplicates\n", what, n * THREADS, dups);
  free(all);
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1000000;
  const snowmint_layout *wide = NULL, *twitter = NULL;
  CHECK_OK(snowmint_layout_parse(WIDE, strlen(WIDE), &wide), "wide layout");
  CHECK_OK(snowmint_layout_preset("twitter", &twitter), "twitter");
  if (!wide || !twitter) return finish("test_threads");
  snowmint_options zero = {0};
  zero.sequence_start = "zero";

  /* One generator, four threads. */
  const snowmint_generator *one = NULL;
  const uint64_t node = 1;
  CHECK_OK(snowmint_generator_new(wide, &node, 1, &zero, &one), "new");
  const snowmint_generator *same[THREADS] = {one, one, one, one};
  const int singles[THREADS] = {0, 0, 0, 0};
  run("one generator, 4 threads, next_id", same, singles, n);
  const int mixed[THREADS] = {1, 0, 1, 0};
  run("one generator, 4 threads, next_ids and next_id", same, mixed, n);

  /* Two generators with the same layout and node values share one state. */
  const snowmint_generator *a = NULL, *b = NULL;
  const uint64_t tw_nodes[2] = {1, 3};
  CHECK_OK(snowmint_generator_new(twitter, tw_nodes, 2, NULL, &a), "a");
  const char *const names[2] = {"worker", "datacenter"};
  const uint64_t values[2] = {3, 1};
  CHECK_OK(snowmint_generator_new_by_name(twitter, names, values, 2, NULL, &b), "b");
  CHECK(snowmint_generator_shares_state(a, b), "a and b share state");
  const snowmint_generator *pair[THREADS] = {a, b, a, b};
  /* Twitter issues 4096 IDs per ms: keep this part short. */
  size_t m = n < 50000 ? n : 50000;
  run("two generators (same layout and nodes), 4 threads", pair, singles, m);

  snowmint_generator_free(a);
  snowmint_generator_free(b);
  snowmint_generator_free(one);
  snowmint_layout_free(wide);
  snowmint_layout_free(twitter);
  return finish("test_threads");
}
