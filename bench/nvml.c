/* NVML for the benchmark's energy, clock and power readings, loaded with dlopen at run time so that no
 * binary links libnvidia-ml (it ships with the driver, not the toolkit, and CI has neither). Without it the
 * benchmark still runs; joules are null and nvml_note() says why.
 * The few NVML types used are declared here (ABI of nvml.h: nvmlReturn_t is an int enum, 0 = success;
 * devices are opaque pointers; NVML_CLOCK_SM = 1), so no NVML header is needed to build. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

typedef int nvml_ret;
typedef void *nvml_dev;
#define NVML_CLOCK_SM 1
#define NVML_TEMPERATURE_GPU 0

static struct {
    void *lib;
    nvml_dev dev;
    int ok;
    char note[200];
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    nvml_ret (*by_index)(unsigned, nvml_dev *);
    nvml_ret (*by_pci)(const char *, nvml_dev *);
    nvml_ret (*energy)(nvml_dev, unsigned long long *); /* mJ since the driver was loaded */
    nvml_ret (*clock)(nvml_dev, int, unsigned *);       /* MHz, current */
    nvml_ret (*power)(nvml_dev, unsigned *);            /* mW, averaged by the driver over ~1 s */
    nvml_ret (*driver)(char *, unsigned);
    nvml_ret (*temperature)(nvml_dev, int, unsigned *); /* degrees C; optional */
} g;

static int fail(const char *why) {
    snprintf(g.note, sizeof g.note, "NVML unavailable (%s): joules and clocks are null", why);
    if (g.lib) {
        if (g.ok && g.shutdown) g.shutdown();
        dlclose(g.lib);
    }
    g.lib = NULL, g.ok = 0;
    return 0;
}

int nvml_open(const char *pci_bus_id, int index) {
    g.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!g.lib) return fail("libnvidia-ml.so.1 not found");
    /* dlsym returns an object pointer; POSIX guarantees it converts to a function pointer. */
    g.init = (nvml_ret(*)(void))dlsym(g.lib, "nvmlInit_v2");
    g.shutdown = (nvml_ret(*)(void))dlsym(g.lib, "nvmlShutdown");
    g.by_index = (nvml_ret(*)(unsigned, nvml_dev *))dlsym(g.lib, "nvmlDeviceGetHandleByIndex_v2");
    g.by_pci = (nvml_ret(*)(const char *, nvml_dev *))dlsym(g.lib, "nvmlDeviceGetHandleByPciBusId_v2");
    g.energy = (nvml_ret(*)(nvml_dev, unsigned long long *))dlsym(g.lib, "nvmlDeviceGetTotalEnergyConsumption");
    g.clock = (nvml_ret(*)(nvml_dev, int, unsigned *))dlsym(g.lib, "nvmlDeviceGetClockInfo");
    g.power = (nvml_ret(*)(nvml_dev, unsigned *))dlsym(g.lib, "nvmlDeviceGetPowerUsage");
    g.driver = (nvml_ret(*)(char *, unsigned))dlsym(g.lib, "nvmlSystemGetDriverVersion");
    g.temperature = (nvml_ret(*)(nvml_dev, int, unsigned *))dlsym(g.lib, "nvmlDeviceGetTemperature");
    if (!g.init || !g.shutdown || !g.by_index || !g.energy || !g.clock || !g.power)
        return fail("a required symbol is missing from libnvidia-ml.so.1");
    nvml_ret r = g.init();
    if (r) {
        char why[64];
        snprintf(why, sizeof why, "nvmlInit_v2 returned %d", r);
        return fail(why);
    }
    g.ok = 1;
    /* NVML numbers devices in PCI order, CUDA by speed unless CUDA_DEVICE_ORDER=PCI_BUS_ID and after
     * CUDA_VISIBLE_DEVICES: match by PCI bus id, falling back to the ordinal only if that lookup is absent. */
    r = (g.by_pci && pci_bus_id && *pci_bus_id) ? g.by_pci(pci_bus_id, &g.dev) : g.by_index((unsigned)index, &g.dev);
    if (r) {
        char why[96];
        snprintf(why, sizeof why, "no NVML handle for the CUDA device (%s), error %d", pci_bus_id ? pci_bus_id : "?", r);
        return fail(why);
    }
    unsigned long long mj;
    if ((r = g.energy(g.dev, &mj))) {
        char why[96];
        snprintf(why, sizeof why, "nvmlDeviceGetTotalEnergyConsumption returned %d", r);
        return fail(why);
    }
    g.note[0] = '\0';
    return 1;
}

const char *nvml_note(void) { return g.note; }
int nvml_energy_mj(unsigned long long *mj) { return g.ok ? g.energy(g.dev, mj) : -1; }
int nvml_sm_clock_mhz(unsigned *mhz) { return g.ok ? g.clock(g.dev, NVML_CLOCK_SM, mhz) : -1; }

int nvml_power_w(double *w) {
    unsigned mw = 0;
    int r = g.ok ? g.power(g.dev, &mw) : -1;
    if (!r) *w = mw * 1e-3;
    return r;
}

int nvml_temperature_c(unsigned *c) { return g.ok && g.temperature ? g.temperature(g.dev, NVML_TEMPERATURE_GPU, c) : -1; }

int nvml_driver(char *buf, unsigned cap) { return g.ok && g.driver ? g.driver(buf, cap) : -1; }

void nvml_close(void) {
    if (g.ok) g.shutdown();
    if (g.lib) dlclose(g.lib);
    memset(&g, 0, sizeof g);
}
