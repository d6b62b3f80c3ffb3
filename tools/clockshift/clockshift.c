/* A preload library that shifts a process's wall clock by an offset read
 * from a file, for the store clock-step tests (xtask/src/stores/clockshift.rs).
 * Build: gcc -shared -fPIC -O2 -o clockshift.so clockshift.c
 * Run:   LD_PRELOAD=./clockshift.so SNOWMINT_CLOCKSHIFT_FILE=offset PROGRAM
 * The file holds seconds, a sign and a fraction allowed ("+3", "-2.5", "0"),
 * the format libfaketime reads; it is re-read at most once a millisecond, so
 * a test steps a running server's clock by rewriting it: a clock read more
 * than 1 ms after the write sees the new offset.
 * CLOCK_REALTIME and CLOCK_REALTIME_COARSE, gettimeofday and time move; the
 * monotonic clocks do not. With SNOWMINT_CLOCKSHIFT_SUSPEND=1 CLOCK_BOOTTIME
 * moves too, as a suspend moves it: a machine or virtual machine suspended
 * for N seconds resumes with the wall and boot-time clocks N seconds on and
 * CLOCK_MONOTONIC where it stopped (core/tests/suspend.rs). The real clock
 * is read with the clock_gettime system call, never through dlsym: there is
 * no library state to initialise, so a first call from an allocator's
 * constructor cannot recurse. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long offset_ns;
static long long next_read_ns;

static long real(clockid_t id, struct timespec *ts) {
  return syscall(SYS_clock_gettime, id, ts);
}

/* The offset, the file re-read when 1 ms has passed on the monotonic
 * clock. A missing or unreadable file keeps the last offset. Races between
 * threads only make two of them read the file. */
static long long shift(void) {
  struct timespec m;
  const char *path = getenv("SNOWMINT_CLOCKSHIFT_FILE");
  if (!path || real(CLOCK_MONOTONIC, &m) != 0) return 0;
  long long now = m.tv_sec * 1000000000LL + m.tv_nsec;
  if (now < __atomic_load_n(&next_read_ns, __ATOMIC_RELAXED))
    return __atomic_load_n(&offset_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&next_read_ns, now + 1000000LL, __ATOMIC_RELAXED);
  char buf[64];
  int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return __atomic_load_n(&offset_ns, __ATOMIC_RELAXED);
  long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
  syscall(SYS_close, fd);
  if (n <= 0) return __atomic_load_n(&offset_ns, __ATOMIC_RELAXED);
  buf[n] = 0;
  /* Parsed by hand: strtod may take locale locks; keep this minimal. */
  const char *p = buf;
  int neg = 0;
  if (*p == '+' || *p == '-') neg = *p++ == '-';
  long long sec = 0, frac = 0, scale = 1000000000LL;
  while (*p >= '0' && *p <= '9') sec = sec * 10 + (*p++ - '0');
  if (*p == '.')
    for (p++; *p >= '0' && *p <= '9'; p++)
      if (scale > 1) frac += (*p - '0') * (scale /= 10);
  long long v = sec * 1000000000LL + frac;
  if (neg) v = -v;
  __atomic_store_n(&offset_ns, v, __ATOMIC_RELAXED);
  return v;
}

static int shifted(clockid_t id) {
  if (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE) return 1;
  if (id != CLOCK_BOOTTIME && id != CLOCK_BOOTTIME_ALARM) return 0;
  const char *suspend = getenv("SNOWMINT_CLOCKSHIFT_SUSPEND");
  return suspend && suspend[0] == '1';
}

int clock_gettime(clockid_t id, struct timespec *ts) {
  long r = real(id, ts);
  if (r != 0 || !shifted(id)) return (int)r;
  long long t = ts->tv_sec * 1000000000LL + ts->tv_nsec + shift();
  ts->tv_sec = t / 1000000000LL;
  ts->tv_nsec = t % 1000000000LL;
  return 0;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
  (void)tz;
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = ts.tv_nsec / 1000;
  return 0;
}

time_t time(time_t *out) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (out) *out = ts.tv_sec;
  return ts.tv_sec;
}
