/* NCCL's settings as NCCL itself will read them (tpg_nccl_setting, nccl.h): the environment first, then NCCL's config
 * files. NCCL copies those files into the environment, never over a variable already set, at its first init in the
 * process (ncclGetUniqueId on rank 0, ncclCommInitRank elsewhere) - after tpg_nccl_env_check ran on every rank but
 * rank 0. Read here without touching the environment. */
#define _DEFAULT_SOURCE /* getline, getpwuid under -std=c11 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl.h"

#define SYSTEM_FILE "/etc/nccl.conf"

/* name's value in one config file as NCCL parses it: "NAME=VALUE" lines, a line that starts with '#' skipped, the
 * newline cut and nothing trimmed; the first line that sets it counts (NCCL's setenv does not overwrite). */
static int from_file(const char *path, const char *name, char *value, size_t size) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    const size_t n = strlen(name);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int found = 0;
    while (!found && (len = getline(&line, &cap, f)) != -1) {
        if (line[0] == '#') continue;
        if (len > 0 && line[len - 1] == '\n') line[len - 1] = '\0';
        if (strncmp(line, name, n) == 0 && line[n] == '=') {
            snprintf(value, size, "%s", line + n + 1);
            found = 1;
        }
    }
    free(line);
    fclose(f);
    return found;
}

/* The user's file: NCCL_CONF_FILE where set (not empty), else ~/.nccl.conf of the user's passwd entry (getpwuid_r:
 * contexts on several threads - ranks as threads - read it at once, and getpwuid's record is one static). */
static int user_file(char *path, size_t size) {
    const char *conf = getenv("NCCL_CONF_FILE");
    if (conf && *conf) return snprintf(path, size, "%s", conf) > 0;
    struct passwd entry, *pw = NULL;
    char buf[4096];
    if (getpwuid_r(getuid(), &entry, buf, sizeof buf, &pw) != 0) pw = NULL;
    return pw && pw->pw_dir && snprintf(path, size, "%s/.nccl.conf", pw->pw_dir) > 0;
}

const char *tpg_nccl_setting(const char *name, char *value, size_t size, char *where, size_t where_size) {
    const char *env = getenv(name);
    char path[1024];
    if (env) { /* set, even empty: NCCL's files do not overwrite it */
        snprintf(value, size, "%s", env);
        snprintf(where, where_size, "the environment");
        return value;
    }
    if ((user_file(path, sizeof path) && from_file(path, name, value, size)) ||
        from_file(strcpy(path, SYSTEM_FILE), name, value, size)) {
        snprintf(where, where_size, "NCCL's config file %s", path);
        return value;
    }
    return NULL;
}
