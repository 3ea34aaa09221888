/*
 * cpuflags.c - the names of CPU feature flags as Linux prints them in
 * /proc/cpuinfo, so that --require can tell a flag this CPU lacks (not
 * met) from a word that is no flag at all (a usage error), and the words
 * a CPU device lists (accel_device.features).
 */
#include <ctype.h>
#include <string.h>
#include <accel/context.h>
#include "core.h"

/*
 * x86: the names of the "flags" line, from Linux 6.12's
 * arch/x86/include/asm/cpufeatures.h (a feature's quoted name, or for
 * the features printed under their macro name by older kernels, that name
 * in lower case), in the order of its words.
 */
static const char *const x86_flags[] = {
	"fpu", "vme", "de", "pse", "tsc", "msr", "pae", "mce", "cx8", "apic", "sep", "mtrr", "pge", "mca",
	"cmov", "pat", "pse36", "pn", "clflush", "dts", "acpi", "mmx", "fxsr", "sse", "sse2", "ss", "ht", "tm",
	"ia64", "pbe",
	"syscall", "mp", "nx", "mmxext", "fxsr_opt", "pdpe1gb", "rdtscp", "lm", "3dnowext", "3dnow",
	"recovery", "longrun", "lrti",
	"cxmmx", "k6_mtrr", "cyrix_arr", "centaur_mcr", "constant_tsc", "up", "art", "arch_perfmon", "pebs",
	"bts", "rep_good", "amd_lbr_v2", "acc_power", "nopl", "xtopology", "tsc_reliable", "nonstop_tsc",
	"cpuid", "extd_apicid", "amd_dcm", "aperfmperf", "rapl", "nonstop_tsc_s3", "tsc_known_freq",
	"pni", "pclmulqdq", "dtes64", "monitor", "ds_cpl", "vmx", "smx", "est", "tm2", "ssse3", "cid", "sdbg",
	"fma", "cx16", "xtpr", "pdcm", "pcid", "dca", "sse4_1", "sse4_2", "x2apic", "movbe", "popcnt",
	"tsc_deadline_timer", "aes", "xsave", "avx", "f16c", "rdrand", "hypervisor",
	"rng", "rng_en", "ace", "ace_en", "ace2", "ace2_en", "phe", "phe_en", "pmm", "pmm_en",
	"lahf_lm", "cmp_legacy", "svm", "extapic", "cr8_legacy", "abm", "sse4a", "misalignsse",
	"3dnowprefetch", "osvw", "ibs", "xop", "skinit", "wdt", "lwp", "fma4", "tce", "nodeid_msr", "tbm",
	"topoext", "perfctr_core", "perfctr_nb", "bpext", "ptsc", "perfctr_llc", "mwaitx",
	"ring3mwait", "cpuid_fault", "cpb", "epb", "cat_l3", "cat_l2", "cdp_l3", "tdx_host_platform",
	"hw_pstate", "proc_feedback", "pti", "intel_ppin", "cdp_l2", "ssbd", "mba", "perfmon_v2", "ibrs",
	"ibpb", "stibp", "ibrs_enhanced",
	"tpr_shadow", "flexpriority", "ept", "vpid", "vmmcall", "ept_ad", "tdx_guest",
	"fsgsbase", "tsc_adjust", "sgx", "bmi1", "hle", "avx2", "smep", "bmi2", "erms", "invpcid", "rtm",
	"cqm", "mpx", "rdt_a", "avx512f", "avx512dq", "rdseed", "adx", "smap", "avx512ifma", "clflushopt",
	"clwb", "intel_pt", "avx512pf", "avx512er", "avx512cd", "sha_ni", "avx512bw", "avx512vl",
	"xsaveopt", "xsavec", "xgetbv1", "xsaves",
	"cqm_llc", "cqm_occup_llc", "cqm_mbm_total", "cqm_mbm_local", "split_lock_detect", "user_shstk",
	"avx_vnni", "avx512_bf16", "fred", "lam",
	"clzero", "irperf", "xsaveerptr", "rdpru", "wbnoinvd", "amd_ppin", "virt_ssbd", "cppc", "brs",
	"dtherm", "ida", "arat", "pln", "pts", "hwp", "hwp_notify", "hwp_act_window", "hwp_epp",
	"hwp_pkg_req", "hfi",
	"npt", "lbrv", "svm_lock", "nrip_save", "tsc_scale", "vmcb_clean", "flushbyasid", "decodeassists",
	"pausefilter", "pfthreshold", "avic", "v_vmsave_vmload", "vgif", "x2avic", "v_spec_ctrl", "vnmi",
	"avx512vbmi", "umip", "pku", "ospke", "waitpkg", "avx512_vbmi2", "gfni", "vaes", "vpclmulqdq",
	"avx512_vnni", "avx512_bitalg", "tme", "avx512_vpopcntdq", "la57", "rdpid", "bus_lock_detect",
	"cldemote", "movdiri", "movdir64b", "enqcmd", "sgx_lc",
	"overflow_recov", "succor", "smca",
	"avx512_4vnniw", "avx512_4fmaps", "fsrm", "avx512_vp2intersect", "md_clear", "serialize",
	"tsxldtrk", "pconfig", "arch_lbr", "ibt", "amx_bf16", "avx512_fp16", "amx_tile", "amx_int8",
	"flush_l1d", "arch_capabilities",
	"sme", "sev", "sev_es", "sev_snp", "debug_swap", "svsm",
	"amd_lbr_pmc_freeze",
	NULL
};

/* Arm: the names of the "Features" line, from arch/arm64/kernel/cpuinfo.c
 * (hwcap_str, and compat_hwcap_str for 32-bit processes) and
 * arch/arm/kernel/setup.c (hwcap_str). */
static const char *const arm_flags[] = {
	"fp", "asimd", "evtstrm", "aes", "pmull", "sha1", "sha2", "crc32", "atomics", "fphp", "asimdhp",
	"cpuid", "asimdrdm", "jscvt", "fcma", "lrcpc", "dcpop", "sha3", "sm3", "sm4", "asimddp", "sha512",
	"sve", "asimdfhm", "dit", "uscat", "ilrcpc", "flagm", "ssbs", "sb", "paca", "pacg", "gcs", "dcpodp",
	"sve2", "sveaes", "svepmull", "svebitperm", "svesha3", "svesm4", "flagm2", "frint", "svei8mm",
	"svef32mm", "svef64mm", "svebf16", "i8mm", "bf16", "dgh", "rng", "bti", "mte", "ecv", "afp", "rpres",
	"mte3", "sme", "smei16i64", "smef64f64", "smei8i32", "smef16f32", "smeb16f32", "smef32f32",
	"smefa64", "wfxt", "ebf16", "sveebf16", "cssc", "rprfm", "sve2p1", "sme2", "sme2p1", "smei16i32",
	"smebi32i32", "smeb16b16", "smef16f16", "mops", "hbc", "sveb16b16", "lrcpc3", "lse128", "fpmr",
	"lut", "faminmax", "f8cvt", "f8fma", "f8dp4", "f8dp2", "f8e4m3", "f8e5m2", "smelutv2", "smef8f16",
	"smef8f32", "smesf8fma", "smesf8dp4", "smesf8dp2", "poe", "cmpbr", "fprcvt", "f8mm8", "f8mm4",
	"svef16mm", "sveeltperm", "sveaes2", "svebfscale", "sve2p2", "sme2p2", "smesbitperm", "smeaes",
	"smesfexpa", "smestmop", "smesmop4",
	"swp", "half", "thumb", "26bit", "fastmult", "fpa", "vfp", "edsp", "java", "iwmmxt", "crunch",
	"thumbee", "neon", "vfpv3", "vfpv3d16", "tls", "vfpv4", "idiva", "idivt", "vfpd32", "lpae",
	"asimdbf16",
	NULL
};

static const char *const *const tables[] = { x86_flags, arm_flags };

/* A flag word: letters, digits and '_' (what the kernel prints). */
static int flag_char(int c)
{
	return isalnum(c) || c == '_';
}

/* Whether the space-separated `words` hold the n bytes at name as a word. */
static int has_word(const char *words, const char *name, size_t n)
{
	for (const char *p = words; *p;) {
		size_t k = strcspn(p, " ");
		if (k == n && !strncmp(p, name, n))
			return 1;
		p += k + (p[k] == ' ');
	}
	return 0;
}

/* Slots of the set of words kept by accel_device_set_features: a power
 * of two above the most words features[] holds (two bytes each). */
#define WORD_SLOTS 2048

void accel_device_set_features(struct accel_device *d, const char *line)
{
	const char *p = strchr(line, ':');
	p = p ? p + 1 : line;
	size_t used = 0;
	/* Where each word kept starts in features[], plus one (0: free), by
	 * its FNV-1a hash: looking each of a CPU's 100 to 300 flags up in the
	 * words kept so far took 2% of the CPU time of accel-compress on a
	 * small file. */
	uint16_t slot[WORD_SLOTS] = { 0 };
	d->features[0] = 0;
	while (*p && *p != '\n') {
		while (*p == ' ' || *p == '\t')
			p++;
		size_t n = strcspn(p, " \t\n"), k = 0;
		uint32_t h = 2166136261u;
		while (k < n && flag_char((unsigned char)p[k]))
			h = (h ^ (unsigned char)p[k++]) * 16777619u;
		/* Whole words of flag characters only, each once. */
		if (n && k == n && used + n + (used > 0) < sizeof d->features) {
			size_t i = h & (WORD_SLOTS - 1);
			for (; slot[i]; i = (i + 1) & (WORD_SLOTS - 1)) {
				const char *w = d->features + slot[i] - 1;
				if (!strncmp(w, p, n) && (w[n] == ' ' || !w[n]))
					break;
			}
			if (!slot[i]) {
				if (used)
					d->features[used++] = ' ';
				slot[i] = (uint16_t)(used + 1);
				memcpy(d->features + used, p, n);
				used += n;
				d->features[used] = 0;
			}
		}
		p += n;
	}
	d->flags = accel_cpu_flags_parse(line);
}

int accel_device_has_flag(const struct accel_device *d, const char *name)
{
	size_t n = strlen(name);
	if (!n || !flag_char((unsigned char)name[0]))
		return 0;
	if (has_word(d->features, name, n))
		return 1;
	uint64_t bit = accel_cpu_flags_parse(name);
	return bit && accel_cpu_flag_name(bit) && (d->flags & bit) == bit;
}

int accel_cpu_flag_known(const struct accel_ctx *ctx, const char *name)
{
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		for (const char *const *f = tables[t]; *f; f++)
			if (!strcmp(*f, name))
				return 1;
	for (int i = 0; ctx && i < accel_device_count(ctx); i++) {
		const struct accel_device *d = accel_device_at(ctx, i);
		if (d->cls == ACCEL_CLASS_CPU && accel_device_has_flag(d, name))
			return 1;
	}
	return 0;
}

/* Keep `cand` in *best when it is nearer to name than *score says (edits
 * first, then the difference in length), within 2 edits and under half
 * the length of name. */
static void nearer(const char *name, const char *cand, const char **best, int *score)
{
	int k = core_edit_distance(name, cand), n = (int)strlen(name), d = n - (int)strlen(cand);
	int s = k * 100 + (d < 0 ? -d : d);
	if (k <= 2 && 2 * k < n && s < *score)
		*best = cand, *score = s;
}

const char *accel_cpu_flag_nearest(const char *name)
{
	const char *best = NULL;
	int bd = 300;
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		for (const char *const *f = tables[t]; *f; f++)
			nearer(name, *f, &best, &bd);
	return best;
}
