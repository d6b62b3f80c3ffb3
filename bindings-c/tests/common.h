/* Small helpers shared by the C test programs. */
#ifndef SNOWMINT_TEST_COMMON_H
#define SNOWMINT_TEST_COMMON_H

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snowmint.h"

static int failures = 0;
static int checks = 0;

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    checks++;                                                              \
    if (!(cond)) {                                                         \
      failures++;                                                          \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);      \
      fprintf(stderr, __VA_ARGS__);                                        \
      fprintf(stderr, "\n");                                               \
    }                                                                      \
  } while (0)

/* The status must be the one whose code is `code`. */
#define CHECK_CODE(status, code, ...)                                      \
  do {                                                                     \
    const char *got_ = snowmint_status_code((int)(status));                \
    checks++;                                                              \
    if (strcmp(got_, (code)) != 0) {                                       \
      failures++;                                                          \
      fprintf(stderr, "FAIL %s:%d: got %s, want %s: ", __FILE__, __LINE__, \
              got_, (code));                                               \
      fprintf(stderr, __VA_ARGS__);                                        \
      fprintf(stderr, "\n");                                               \
    }                                                                      \
  } while (0)

#define CHECK_OK(status, ...) CHECK_CODE(status, "ok", __VA_ARGS__)

/* A decimal string as uint64_t (independent of the library under test). */
static inline uint64_t dec(const char *s) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0') {
    fprintf(stderr, "bad decimal in test data: %s\n", s);
    exit(2);
  }
  return (uint64_t)v;
}

static int finish(const char *name) {
  if (failures) {
    fprintf(stderr, "%s: %d of %d checks FAILED\n", name, failures, checks);
    return 1;
  }
  printf("%s: all %d checks passed\n", name, checks);
  return 0;
}

#endif
