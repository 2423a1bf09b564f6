// Loaded with LD_PRELOAD by `generate`: records which pages of the program's own file it touches,
// each once. Before the program's code runs, every page of its executable's read-only and code
// mappings is made inaccessible; the first access to one traps, and the handler writes the page
// (its offset in the file, and its protection) to $FIRST_TOUCH_OUT.<program>.<pid> and gives the
// page its access back. Only programs whose path contains $FIRST_TOUCH_PROGRAM are traced.
#define _GNU_SOURCE
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct mapping { uintptr_t start, end, offset; int prot; };
static struct mapping mappings[32];
static int count;
static int out = -1;
static struct sigaction previous;

static void on_fault(int sig, siginfo_t *info, void *context) {
    uintptr_t page = (uintptr_t)info->si_addr & ~(uintptr_t)4095;
    for (int i = 0; i < count; i++) {
        if (page >= mappings[i].start && page < mappings[i].end &&
            mprotect((void *)page, 4096, mappings[i].prot) == 0) {
            uint64_t record[2] = { page - mappings[i].start + mappings[i].offset, (uint64_t)mappings[i].prot };
            (void)!write(out, record, sizeof record);
            return;
        }
    }
    // Not one of ours: as if this library were not there.
    if (previous.sa_flags & SA_SIGINFO) {
        previous.sa_sigaction(sig, info, context);
    } else if (previous.sa_handler == SIG_DFL || previous.sa_handler == SIG_IGN) {
        signal(sig, SIG_DFL);
        raise(sig);
    } else {
        previous.sa_handler(sig);
    }
}

__attribute__((constructor)) static void arm(void) {
    const char *prefix = getenv("FIRST_TOUCH_OUT"), *wanted = getenv("FIRST_TOUCH_PROGRAM");
    char exe[PATH_MAX], path[PATH_MAX + 64], line[PATH_MAX + 128], perms[8];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (!prefix || !wanted || n < 0) return;
    exe[n] = 0;
    if (!strstr(exe, wanted)) return;
    char name[PATH_MAX];
    strcpy(name, exe);
    snprintf(path, sizeof path, "%s.%s.%d", prefix, basename(name), getpid());
    out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    FILE *maps = fopen("/proc/self/maps", "r");
    if (out < 0 || !maps) return;
    unsigned long start, end, offset;
    while (fgets(line, sizeof line, maps) && count < 32) {
        char *file = strchr(line, '/');
        if (!file) continue;
        file[strcspn(file, "\n")] = 0;
        if (strcmp(file, exe) || sscanf(line, "%lx-%lx %7s %lx", &start, &end, perms, &offset) != 4) continue;
        if (perms[1] == 'w') continue;  // written by the loader already: not the program's choice
        int prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[2] == 'x' ? PROT_EXEC : 0);
        mappings[count++] = (struct mapping){ start, end, offset, prot };
    }
    fclose(maps);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &previous);
    for (int i = 0; i < count; i++) mprotect((void *)mappings[i].start, mappings[i].end - mappings[i].start, PROT_NONE);
}
