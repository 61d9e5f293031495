// How much the spread of read buffers costs an O_DIRECT reader: T threads
// pread random 128 KiB records of the shard files into either one fixed
// buffer each (as a fio job does) or a ring of N slots each (as a loader's
// staging pool does), all on transparent huge pages and mlock'ed.
//   buffer_footprint SHARD_DIR SHARDS RECORDS_PER_SHARD READS_PER_THREAD SLOTS_PER_THREAD
// SLOTS_PER_THREAD 0: one fixed buffer per thread. Prints MB/s.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { kThreads = 2, kRecord = 131072, kStride = 135168 /* a loader slot: record + 4 KiB */ };
static int fds[64], shards;
static long per_shard, reads, slots;
static unsigned char* pool;

static void* work(void* arg) {
  const long id = (long)arg;
  unsigned s = (unsigned)id * 7919u + 1u;
  const long n = slots ? slots : 1;
  for (long i = 0; i < reads; ++i) {
    s = s * 1103515245u + 12345u;
    const unsigned r = (s >> 8) % (unsigned)(shards * per_shard);
    unsigned char* buf = pool + (size_t)(id * n + i % n) * kStride;
    if (pread(fds[r / per_shard], buf, kRecord, (off_t)(r % per_shard) * kRecord) != kRecord) {
      perror("pread");
      exit(2);
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 6) return fprintf(stderr, "usage: %s DIR SHARDS RECORDS_PER_SHARD READS SLOTS\n", argv[0]), 64;
  shards = atoi(argv[2]);
  per_shard = atol(argv[3]);
  reads = atol(argv[4]);
  slots = atol(argv[5]);
  if (shards < 1 || shards > 64) return fprintf(stderr, "1..64 shards\n"), 64;
  for (int i = 0; i < shards; ++i) {
    char p[4096];
    snprintf(p, sizeof p, "%s/shard-%05d.rec", argv[1], i);
    if ((fds[i] = open(p, O_RDONLY | O_DIRECT)) < 0) return perror(p), 2;
  }
  const size_t huge = 2u << 20;
  const size_t bytes = ((size_t)kThreads * (slots ? slots : 1) * kStride + huge - 1) / huge * huge;
  if (posix_memalign((void**)&pool, huge, bytes)) return fprintf(stderr, "out of memory\n"), 2;
  madvise(pool, bytes, MADV_HUGEPAGE);
  memset(pool, 0, bytes);
  mlock(pool, bytes);
  struct timespec a, b;
  pthread_t t[kThreads];
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < kThreads; ++i) pthread_create(&t[i], NULL, work, (void*)i);
  for (int i = 0; i < kThreads; ++i) pthread_join(t[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  const double dt = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
  printf("%.0f\n", (double)kThreads * (double)reads * kRecord / dt / 1e6);
  return 0;
}
