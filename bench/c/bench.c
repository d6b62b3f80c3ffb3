/*
 * snowmint_generator_next_id against the hand-written reference (reference.h),
 * measured in the same process. Medians over REPEATS runs; the order of the
 * two alternates between repeats.
 *
 * 1. Per-call cost, one thread, on a wide-sequence layout (timestamp 41 |
 *    node 2 | sequence 20: a million IDs per ms, so neither hits the
 *    per-ms cap and the figure is the cost of a call).
 * 2. Total throughput of 2 threads sharing one generator vs 1 thread, same layout.
 * 3. For information: snowmint_generator_next_ids (batches of 1000) per ID,
 *    and both on the Twitter layout, where 4096 IDs per ms cap both.
 *
 * Usage: bench [REPEATS] [CALLS]
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reference.h"
#include "snowmint.h"

static const char *WIDE =
    "{\"epoch_ms\":1700000000000,\"fields\":[[\"timestamp\",41],[\"node\",2],[\"sequence\",20]]}";

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef enum { REF, SNOW, SNOW_BATCH } impl;
static const char *IMPL_NAMES[] = {"reference (mutex + clock_gettime)", "snowmint_generator_next_id",
                                   "snowmint_generator_next_ids (x1000)"};

typedef struct {
  impl which;
  ref_gen *ref;
  const snowmint_generator *gen;
  size_t calls;
  uint64_t sink;
  int failed;
} job;

static void *work(void *arg) {
  job *j = arg;
  uint64_t id = 0, acc = 0;
  if (j->which == REF) {
    for (size_t i = 0; i < j->calls; i++) {
      if (ref_next(j->ref, &id) != 0) j->failed = 1;
      acc ^= id;
    }
  } else if (j->which == SNOW) {
    for (size_t i = 0; i < j->calls; i++) {
      if (snowmint_generator_next_id(j->gen, &id) != SNOWMINT_STATUS_OK) j->failed = 1;
      acc ^= id;
    }
  } else {
    static __thread uint64_t buf[1000];
    for (size_t i = 0; i < j->calls; i += 1000) {
      if (snowmint_generator_next_ids(j->gen, buf, 1000) != SNOWMINT_STATUS_OK) j->failed = 1;
      acc ^= buf[999];
    }
  }
  j->sink = acc;
  return NULL;
}

/* Wall time of `threads` threads each making `calls` calls on one generator. */
static double run(impl which, ref_gen *ref, const snowmint_generator *gen, int threads, size_t calls) {
  pthread_t t[8];
  job jobs[8];
  double start = mono_s();
  for (int i = 0; i < threads; i++) {
    jobs[i] = (job){which, ref, gen, calls, 0, 0};
    pthread_create(&t[i], NULL, work, &jobs[i]);
  }
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  double s = mono_s() - start;
  for (int i = 0; i < threads; i++) {
    if (jobs[i].failed) {
      fprintf(stderr, "%s failed\n", IMPL_NAMES[which]);
      exit(1);
    }
  }
  return s;
}

static const snowmint_generator *make_gen(const char *layout_text, uint64_t node) {
  const snowmint_layout *l = NULL;
  const snowmint_generator *g = NULL;
  if (snowmint_layout_parse(layout_text, strlen(layout_text), &l) != SNOWMINT_STATUS_OK ||
      snowmint_generator_new(l, &node, 1, NULL, &g) != SNOWMINT_STATUS_OK) {
    fprintf(stderr, "cannot make a generator\n");
    exit(1);
  }
  snowmint_layout_free(l);
  return g;
}

int main(int argc, char **argv) {
  int repeats = argc > 1 ? atoi(argv[1]) : 9;
  size_t calls = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 2000000;
  if (repeats < 1 || repeats > 101) repeats = 9;

  ref_gen ref_wide;
  ref_init(&ref_wide, 1700000000000ull, 2, 1, 20);
  const snowmint_generator *wide = make_gen(WIDE, 1);
  ref_gen ref_tw;
  ref_init(&ref_tw, 1288834974657ull, 10, 35, 12);
  const snowmint_generator *tw = make_gen("{\"epoch_ms\":1288834974657,\"fields\":[[\"timestamp\",41],[\"worker\",10],[\"sequence\",12]]}", 35);

  /* Warm up both (page faults, the clock thread, the branch predictors). */
  run(REF, &ref_wide, wide, 1, calls / 4);
  run(SNOW, &ref_wide, wide, 1, calls / 4);

  double single[3][101], two[3][101], one_t[2][101], capped[2][101];
  for (int r = 0; r < repeats; r++) {
    impl order[2] = {r % 2 ? SNOW : REF, r % 2 ? REF : SNOW};
    for (int k = 0; k < 2; k++) {
      impl w = order[k];
      int i = w == REF ? 0 : 1;
      single[i][r] = run(w, &ref_wide, wide, 1, calls) / (double)calls * 1e9;
      one_t[i][r] = (double)calls / run(w, &ref_wide, wide, 1, calls) / 1e6;
      two[i][r] = 2.0 * (double)calls / run(w, &ref_wide, wide, 2, calls) / 1e6;
      capped[i][r] = (double)calls / run(w, &ref_tw, tw, 1, calls) / 1e6;
    }
    single[2][r] = run(SNOW_BATCH, &ref_wide, wide, 1, calls) / (double)calls * 1e9;
    two[2][r] = 2.0 * (double)calls / run(SNOW_BATCH, &ref_wide, wide, 2, calls) / 1e6;
  }

  double ns_ref = median(single[0], repeats), ns_snow = median(single[1], repeats),
         ns_batch = median(single[2], repeats);
  double t1_ref = median(one_t[0], repeats), t1_snow = median(one_t[1], repeats);
  double t2_ref = median(two[0], repeats), t2_snow = median(two[1], repeats);
  double cap_ref = median(capped[0], repeats), cap_snow = median(capped[1], repeats);

  printf("repeats %d, %zu calls per thread per run\n\n", repeats, calls);
  printf("| measure (median) | reference | snowmint | snowmint / reference |\n");
  printf("|---|---|---|---|\n");
  printf("| ns per call, 1 thread, wide layout | %.1f | %.1f | %.2fx |\n", ns_ref, ns_snow, ns_snow / ns_ref);
  printf("| M IDs/s, 1 thread, wide layout | %.1f | %.1f | %.2fx |\n", t1_ref, t1_snow, t1_snow / t1_ref);
  printf("| M IDs/s total, 2 threads on one generator, wide layout | %.1f | %.1f | %.2fx |\n", t2_ref, t2_snow, t2_snow / t2_ref);
  printf("| 2 threads / 1 thread total throughput | %.2fx | %.2fx | |\n", t2_ref / t1_ref, t2_snow / t1_snow);
  printf("| M IDs/s, 1 thread, Twitter layout (cap 4.096) | %.2f | %.2f | %.2fx |\n", cap_ref, cap_snow, cap_snow / cap_ref);
  printf("| ns per ID, snowmint_generator_next_ids x1000, wide layout | | %.1f | |\n", ns_batch);
  printf("| M IDs/s total, 2 threads, snowmint_generator_next_ids x1000, wide layout | | %.0f | |\n",
         median(two[2], repeats));
  /* The 2-thread / 1-thread ratio within each repeat (paired), to show the spread. */
  double ratio[101];
  for (int r = 0; r < repeats; r++) ratio[r] = two[1][r] / one_t[1][r];
  double rmed = median(ratio, repeats);
  printf("\nsnowmint 2 threads / 1 thread per repeat: median %.2fx, min %.2fx, max %.2fx\n", rmed,
         ratio[0], ratio[repeats - 1]);
  printf("\ntargets: snowmint <= 0.7x the reference per call: %s (%.2fx); "
         "2 threads no slower in total than 1: %s (%.2fx)\n",
         ns_snow <= 0.7 * ns_ref ? "MET" : "MISSED", ns_snow / ns_ref,
         t2_snow >= t1_snow ? "MET" : "MISSED", t2_snow / t1_snow);
  snowmint_generator_free(wide);
  snowmint_generator_free(tw);
  return 0;
}
