/*
 * The generator a game-server team would write by hand: Twitter's algorithm
 * behind a pthread mutex, reading the wall clock (clock_gettime) on every
 * call, spinning to the next millisecond when the sequence runs out, and
 * failing when the clock moves backwards. The bit widths are parameters so
 * that the benchmark can compare both on the same wide-sequence layout.
 */
#ifndef SNOWMINT_BENCH_REFERENCE_H
#define SNOWMINT_BENCH_REFERENCE_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

typedef struct {
  pthread_mutex_t lock;
  uint64_t epoch_ms;
  unsigned time_shift; /* node bits + sequence bits */
  uint64_t node_bits;  /* node value already shifted into place */
  uint64_t seq_mask;
  uint64_t last_ms;
  uint64_t seq;
} ref_gen;

static inline uint64_t ref_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static inline void ref_init(ref_gen *g, uint64_t epoch_ms, unsigned node_width, uint64_t node,
                            unsigned seq_width) {
  pthread_mutex_init(&g->lock, NULL);
  g->epoch_ms = epoch_ms;
  g->time_shift = node_width + seq_width;
  g->node_bits = node << seq_width;
  g->seq_mask = (1ull << seq_width) - 1;
  g->last_ms = 0;
  g->seq = 0;
}

/* 0 and the ID in *out, or -1 when the clock moved backwards. */
static inline int ref_next(ref_gen *g, uint64_t *out) {
  pthread_mutex_lock(&g->lock);
  uint64_t now = ref_now_ms();
  if (now < g->last_ms) {
    pthread_mutex_unlock(&g->lock);
    return -1;
  }
  if (now == g->last_ms) {
    g->seq = (g->seq + 1) & g->seq_mask;
    if (g->seq == 0) {
      while ((now = ref_now_ms()) <= g->last_ms) {
      }
    }
  } else {
    g->seq = 0;
  }
  g->last_ms = now;
  *out = ((now - g->epoch_ms) << g->time_shift) | g->node_bits | g->seq;
  pthread_mutex_unlock(&g->lock);
  return 0;
}

#endif
