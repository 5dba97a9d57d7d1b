/* tcp_loopback: one TCP connection between two processes of this host, over loopback: the round
 * trip of one byte (TCP_NODELAY) and the throughput of 64 MiB writes. The figures the bundled GPU
 * profiles' comm.links.tcp cites (docs/profiles.md, "gloo"); run by hand, not by the tests:
 *
 *     cc -O2 -o /tmp/tcp_loopback scripts/tcp_loopback.c && /tmp/tcp_loopback
 *
 * Prints one line; exits 1 if a socket call fails. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PINGS 20000
#define WARM 2000
#define BIG ((size_t)64 << 20)
#define BIGS 10

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what) {
  perror(what);
  exit(1);
}

static void get(int s, char *b, size_t n) {
  for (size_t g = 0; g < n;) {
    ssize_t r = read(s, b + g, n - g);
    if (r <= 0) die("read");
    g += (size_t)r;
  }
}

static void put(int s, const char *b, size_t n) {
  for (size_t g = 0; g < n;) {
    ssize_t r = write(s, b + g, n - g);
    if (r <= 0) die("write");
    g += (size_t)r;
  }
}

int main(void) {
  char *buf = malloc(BIG), b = 0;
  if (!buf) die("malloc");
  memset(buf, 1, BIG);
  int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) || getsockname(ls, (struct sockaddr *)&a, &len) || listen(ls, 1))
    die("listen");
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) { /* the echoing peer, then the sink */
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof a)) die("connect");
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    for (int i = 0; i < PINGS; i++) get(c, &b, 1), put(c, &b, 1);
    for (int i = 0; i < BIGS; i++) get(c, buf, BIG);
    put(c, &b, 1);
    _exit(0);
  }
  int s = accept(ls, NULL, NULL);
  if (s < 0) die("accept");
  setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  for (int i = 0; i < WARM; i++) put(s, &b, 1), get(s, &b, 1);
  double t0 = now();
  for (int i = WARM; i < PINGS; i++) put(s, &b, 1), get(s, &b, 1);
  double rtt = (now() - t0) / (PINGS - WARM);
  t0 = now();
  for (int i = 0; i < BIGS; i++) put(s, buf, BIG);
  get(s, &b, 1);
  double bw = (double)BIGS * (double)BIG / (now() - t0);
  waitpid(child, NULL, 0);
  if (printf("loopback TCP, one connection: round trip %.1f us (one way %.1f us), %.2f GB/s\n", rtt * 1e6, rtt * 5e5, bw / 1e9) < 0 ||
      fflush(stdout))
    return 1;
  return 0;
}
