// The program the real-node tests run in a StatefulSet's pod: it writes a file into its PVC on
// first start and prints what it finds there on every start, so data kept (or left behind) by an
// upgrade is seen from the pod's log.
/** argv[1]: a file under /data; argv[2]: what to write there when it does not exist. Then sleeps until SIGTERM. */
export const MARKER_SOURCE = `#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void quit(int sig) { (void)sig; _exit(0); }
int main(int argc, char **argv) {
  signal(SIGTERM, quit);
  signal(SIGINT, quit);
  if (argc < 3) return 2;
  char path[512], text[512] = {0};
  snprintf(path, sizeof path, "/data/%s", argv[1]);
  FILE *f = fopen(path, "r");
  if (f) {
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    printf("found: %s\\n", text);
  } else {
    f = fopen(path, "w");
    if (!f) { printf("cannot write %s\\n", path); fflush(stdout); return 1; }
    fputs(argv[2], f);
    fclose(f);
    printf("wrote: %s\\n", argv[2]);
  }
  fflush(stdout);
  for (;;) pause();
}
`;
