/*
 * nic.c - network interfaces: libpcap's device list (live) or
 * <root>/sys/class/net (recorded trees), pseudo-devices left out, with what
 * sysfs says (driver, PCI address, NUMA node, speed, queues) and, live, the
 * ethtool ioctl's offload features.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <pcap/pcap.h>
#include <accel/backend.h>

typedef int (*findalldevs_fn)(pcap_if_t **, char *);
typedef void (*freealldevs_fn)(pcap_if_t *);

/* Kernel feature names (ETH_SS_FEATURES) and the short names we report. */
static const struct { const char *kernel, *name; } offloads[] = {
	{ "rx-checksum", "rx-csum" }, { "tx-checksum-ip-generic", "tx-csum" },
	{ "tx-checksum-ipv4", "tx-csum" }, { "tx-tcp-segmentation", "tso" },
	{ "tx-udp-segmentation", "uso" }, { "rx-gro", "gro" }, { "rx-gro-hw", "gro-hw" },
	{ "rx-lro", "lro" }, { "rx-hashing", "rss" }, { "tls-hw-tx-offload", "tls-tx" },
	{ "tls-hw-rx-offload", "tls-rx" }, { "esp-hw-offload", "esp" },
	{ "esp-tx-csum-hw-offload", "esp-csum" }, { "macsec-hw-offload", "macsec" },
};

static void add_word(char *list, size_t len, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = strstr(list, w); p; p = strstr(p + 1, w))
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return;
	size_t used = strlen(list);
	snprintf(list + used, len - used, "%s%s", used ? "," : "", w);
}

/* Active offloads from ETHTOOL_GSSET_INFO, GSTRINGS and GFEATURES. */
static void ethtool_features(int fd, const char *ifname, struct accel_device *d)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
	struct { struct ethtool_sset_info hdr; __u32 buf[1]; } ss = { { .cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ull << ETH_SS_FEATURES }, { 0 } };
	ifr.ifr_data = (void *)&ss;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0 || !ss.hdr.sset_mask)
		return;
	unsigned n = ss.buf[0];
	struct ethtool_gstrings *gs = calloc(1, sizeof *gs + (size_t)n * ETH_GSTRING_LEN);
	unsigned blocks = (n + 31) / 32;
	struct ethtool_gfeatures *gf = calloc(1, sizeof *gf + blocks * sizeof gf->features[0]);
	if (!gs || !gf)
		goto out;
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_FEATURES;
	gs->len = n;
	ifr.ifr_data = (void *)gs;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		goto out;
	gf->cmd = ETHTOOL_GFEATURES;
	gf->size = blocks;
	ifr.ifr_data = (void *)gf;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		goto out;
	char list[128] = "";
	for (unsigned i = 0; i < n; i++) {
		if (!(gf->features[i / 32].active & (1u << (i % 32))))
			continue;
		const char *name = (const char *)gs->data + (size_t)i * ETH_GSTRING_LEN;
		for (size_t k = 0; k < sizeof offloads / sizeof offloads[0]; k++)
			if (!strncmp(name, offloads[k].kernel, ETH_GSTRING_LEN))
				add_word(list, sizeof list, offloads[k].name);
	}
	accel_device_set(d, "offloads", list);
out:
	free(gs);
	free(gf);
}

static void ethtool_info(int fd, const char *ifname, struct accel_device *d)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", ifname);
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	ifr.ifr_data = (void *)&di;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0) {
		if (!d->driver[0])
			snprintf(d->driver, sizeof d->driver, "%.31s", di.driver);
		if (di.fw_version[0])
			accel_device_set(d, "firmware", di.fw_version);
	}
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	ifr.ifr_data = (void *)&ch;
	if (ioctl(fd, SIOCETHTOOL, &ifr) == 0 && ch.combined_count)
		accel_device_set_num(d, "combined_channels", ch.combined_count);
	ethtool_features(fd, ifname, d);
}

static int count_entries(const char *root, const char *ifname, const char *prefix)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/sys/class/net/%s/queues", root, ifname);
	DIR *dir = opendir(path);
	if (!dir)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dir)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(dir);
	return n;
}

/* The PCI function under the interface's device path, if any. */
static void pci_of(const char *root, const char *ifname, char *buf, size_t len)
{
	char path[PATH_MAX], real[PATH_MAX];
	buf[0] = 0;
	snprintf(path, sizeof path, "%s/sys/class/net/%s/device", root, ifname);
	if (!realpath(path, real))
		return;
	for (char *c = strtok(real, "/"); c; c = strtok(NULL, "/")) {
		unsigned a, b, s, f;
		char end;
		if (strlen(c) == 12 && sscanf(c, "%4x:%2x:%2x.%1x%c", &a, &b, &s, &f, &end) == 4)
			snprintf(buf, len, "%s", c);
	}
}

static void add_nic(struct accel_probe *p, const char *root, const char *ifname, int fd)
{
	char v[128], path[PATH_MAX];
	long n;
	if (accel_sysfs_read_long(root, &n, "/sys/class/net/%s/type", ifname) == 0 && n == 772)
		return;  /* loopback */
	snprintf(path, sizeof path, "%s/sys/class/net/%s/device", root, ifname);
	int physical = access(path, F_OK) == 0;
	accel_sysfs_read(root, v, sizeof v, "/sys/class/net/%s/operstate", ifname);
	/* Virtual interfaces (veth, bridges, ifb) only when up: eth0 of a container. */
	if (!physical && strcmp(v, "up"))
		return;
	struct accel_device d;
	memset(&d, 0, sizeof d);
	d.cls = ACCEL_CLASS_NIC;
	d.numa_node = -1;
	snprintf(d.model, sizeof d.model, "%s", ifname);
	accel_device_set(&d, "interface", ifname);
	accel_device_set(&d, "operstate", v);
	if (!physical)
		accel_device_set(&d, "virtual", "true");
	pci_of(root, ifname, d.pci_address, sizeof d.pci_address);
	if (accel_sysfs_link(root, v, sizeof v, "/sys/class/net/%s/device/driver", ifname) > 0)
		snprintf(d.driver, sizeof d.driver, "%.63s", v);
	if (accel_sysfs_read(root, v, sizeof v, "/sys/class/net/%s/address", ifname) > 0)
		accel_device_set(&d, "mac_address", v);
	if (accel_sysfs_read_long(root, &n, "/sys/class/net/%s/mtu", ifname) == 0)
		accel_device_set_num(&d, "mtu", n);
	if (accel_sysfs_read_long(root, &n, "/sys/class/net/%s/speed", ifname) == 0 && n > 0)
		accel_device_set_num(&d, "speed_mbps", n);
	int rx = count_entries(root, ifname, "rx-"), tx = count_entries(root, ifname, "tx-");
	if (rx >= 0)
		accel_device_set_num(&d, "rx_queues", rx);
	if (tx >= 0)
		accel_device_set_num(&d, "tx_queues", tx);
	if (accel_sysfs_read_long(root, &n, "/sys/class/net/%s/device/sriov_numvfs", ifname) == 0)
		accel_device_set_num(&d, "sriov_numvfs", n);
	accel_pci_locality(&d, root);
	if (fd >= 0)
		ethtool_info(fd, ifname, &d);
	accel_device_add_api(&d, "netdev", 1, NULL);
	accel_probe_add_device(p, &d);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int nic_probe(struct accel_probe *p)
{
	const char *root = accel_probe_sysroot(p);
	char path[PATH_MAX];
	if (root[0]) {
		/* A recorded tree: libpcap and ethtool would see this host, not it. */
		snprintf(path, sizeof path, "%s/sys/class/net", root);
		struct dirent **list;
		int n = scandir(path, &list, NULL, by_name);
		if (n < 0)
			return accel_probe_fail(p, "%s is not readable", path);
		for (int i = 0; i < n; i++) {
			if (list[i]->d_name[0] != '.')
				add_nic(p, root, list[i]->d_name, -1);
			free(list[i]);
		}
		free(list);
		return 0;
	}
	void *lib = dlopen("libpcap.so.0.8", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		lib = dlopen("libpcap.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return accel_probe_fail(p, "libpcap.so.0.8 not found");
	findalldevs_fn find = (findalldevs_fn)dlsym(lib, "pcap_findalldevs");
	freealldevs_fn freeall = (freealldevs_fn)dlsym(lib, "pcap_freealldevs");
	if (!find || !freeall)
		return accel_probe_fail(p, "libpcap lacks pcap_findalldevs");
	char err[PCAP_ERRBUF_SIZE] = "";
	pcap_if_t *all = NULL;
	if (find(&all, err) < 0)
		return accel_probe_fail(p, "pcap_findalldevs: %s", err);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (pcap_if_t *i = all; i; i = i->next) {
		/* Pseudo-devices (any, nflog, dbus, usbmon ...) have no netdev. */
		snprintf(path, sizeof path, "/sys/class/net/%s", i->name);
		if (!(i->flags & PCAP_IF_LOOPBACK) && access(path, F_OK) == 0)
			add_nic(p, root, i->name, fd);
	}
	if (fd >= 0)
		close(fd);
	freeall(all);
	return 0;
}

/* NIC: discovery only. */
static const struct accel_api_info nic_apis[] = {
	{ "netdev", ACCEL_API_NETWORK },
	{ NULL, 0 },
};

ACCEL_PLUGIN_EXPORT const struct accel_backend accel_backend_nic = {
	.abi = ACCEL_BACKEND_ABI,
	.name = "nic",
	.description = "network interfaces: libpcap device list, sysfs, ethtool offloads",
	.ops = NULL,
	.probe = nic_probe,
	.classes = ACCEL_CLASS_BIT(ACCEL_CLASS_NIC),
	.priority = 70,
	.apis = nic_apis,
};
