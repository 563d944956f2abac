/*
 * The command line, checked against the kernel's keys, every registered
 * argument table and the app's; node identity; the app registry.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/config.h"
#include "kernel/init.h"
#include "kernel/node.h"

#define MAX_TABLES 16

int node_id, num_nodes = 1;
static int auto_id, auto_expect, identity_set;
const struct app *current_app;
static struct cmdline boot_cmdline;
static char *boot_line;		/* the text config_init read (arg_forget zeroes in it) */
static size_t boot_len;

extern const struct app *const __apps_start[], *const __apps_end[];
extern const struct arg_table *const __argtabs_start[], *const __argtabs_end[];

static const struct argspec kernel_args[] = {
	{ "node", ARG_INT_AUTO, 0, MAX_NODES - 1,
	  "this node's id, 0..nodes-1, or auto: agreed with the others at boot, in MAC order" },
	{ "nodes", ARG_INT_AUTO, 1, MAX_NODES,
	  "number of nodes in the cluster, or auto (with node=auto): the nodes heard at boot" },
	{ "app", ARG_STR, 0, 0, "the app to run (default " DEFAULT_APP ", or the image's only app)" },
	{ "exit", ARG_STR, 0, 0, "what a PC does when the app ends: halt (default; the screen "
	  "stays) or poweroff (ACPI S5)" },
	{ NULL, 0, 0, 0, NULL },
};

/* The k-th key of a registered table that is ARG_SECRET, or NULL. */
static const char *secret_key(int k)
{
	for (const struct arg_table *const *t = __argtabs_start; t < __argtabs_end; t++)
		for (const struct argspec *s = (*t)->spec; s && s->key; s++)
			if (s->type == ARG_SECRET && k-- == 0)
				return s->key;
	return NULL;
}

void config_redact(const char *line, char *out, size_t n)
{
	const char *key;

	if (n == 0)
		return;
	snprintf(out, n, "%s", line);
	for (int k = 0; (key = secret_key(k)) != NULL; k++) {
		char tmp[n];
		cmdline_redact(out, key, tmp, n);
		memcpy(out, tmp, n);
	}
}

static int word_edge(char c)
{
	return c == 0 || c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static void zero(volatile char *p, size_t n)
{
	while (n--)
		*p++ = 0;
}

void arg_forget(const char *key)
{
	size_t k = strlen(key);

	for (int i = 0; i < boot_cmdline.n; i++)
		if (strcmp(boot_cmdline.a[i].key, key) == 0)
			zero(boot_cmdline.a[i].val, sizeof boot_cmdline.a[i].val);
	/* And in the text of the line: the value of every word key=... (zeros end no word here). */
	for (size_t i = 0; i + k < boot_len; i++) {
		if ((i == 0 || word_edge(boot_line[i - 1])) && strncmp(boot_line + i, key, k) == 0 &&
		    boot_line[i + k] == '=') {
			size_t e = i + k + 1;
			while (e < boot_len && !word_edge(boot_line[e]))
				e++;
			zero(boot_line + i + k + 1, e - (i + k + 1));
			i = e;
		}
	}
}

const struct app *app_find(const char *name)
{
	for (const struct app *const *a = __apps_start; a < __apps_end; a++)
		if (strcmp((*a)->name, name) == 0)
			return *a;
	return NULL;
}

void app_list(void)
{
	printf("apps:\n");
	for (const struct app *const *a = __apps_start; a < __apps_end; a++) {
		printf("  %-14s %s\n", (*a)->name, (*a)->summary);
		for (const struct argspec *s = (*a)->args; s && s->key; s++)
			printf("  %14s   %s=...  %s\n", "", s->key, s->help);
	}
}

static void print_keys(const char *who, const struct argspec *t)
{
	printf("cmdline:   %s keys:", who);
	if (!t || !t->key)
		printf(" none");
	for (; t && t->key; t++)
		printf(" %s", t->key);
	printf("\n");
}

static void print_problems(const char *err)
{
	const char *p = err;

	while (*p) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);
		printf("cmdline: error: %.*s\n", n, p);
		p += n + (nl ? 1 : 0);
	}
}

/* The app's least count of nodes against a cluster of n. */
static int check_count(int n)
{
	if (current_app->min_nodes > n) {
		printf("cmdline: error: app %s needs at least %d nodes (nodes=%d)\n", current_app->name,
		       current_app->min_nodes, n);
		return -EINVAL;
	}
	return 0;
}

static int check_identity(void)
{
	if (node_id >= num_nodes) {
		printf("cmdline: error: node=%d is not below nodes=%d\n", node_id, num_nodes);
		return -EINVAL;
	}
	return check_count(num_nodes);
}

int config_init(char *line)
{
	const struct argspec *tables[MAX_TABLES + 3];
	const struct arg_table *const *t;
	char err[1024];
	const char *name;
	long v;
	int n = 0;

	boot_line = line;
	boot_len = strlen(line);
	if (cmdline_parse_secret(line, secret_key(0), &boot_cmdline, err, sizeof err)) {
		print_problems(err);
		return -EINVAL;
	}
	name = cmdline_get(&boot_cmdline, "app");
	/* An image of one app (a program boot/mpicc linked) runs it by default. */
	if (!name)
		name = __apps_end - __apps_start == 1 ? __apps_start[0]->name : DEFAULT_APP;
	current_app = app_find(name);
	if (!current_app) {
		printf("cmdline: error: app=%s: no such app\n", name);
		app_list();
		return -EINVAL;
	}
	if (__argtabs_end - __argtabs_start > MAX_TABLES) {
		printf("cmdline: error: %d argument tables registered, room for %d\n",
		       (int)(__argtabs_end - __argtabs_start), MAX_TABLES);
		return -EINVAL;
	}
	tables[n++] = kernel_args;
	for (t = __argtabs_start; t < __argtabs_end; t++)
		tables[n++] = (*t)->spec;
	tables[n++] = current_app->args;
	tables[n] = NULL;
	if (cmdline_check(&boot_cmdline, tables, err, sizeof err)) {
		char who[64];
		print_problems(err);
		print_keys("kernel", kernel_args);
		for (t = __argtabs_start; t < __argtabs_end; t++)
			print_keys((*t)->owner, (*t)->spec);
		snprintf(who, sizeof who, "app '%s'", current_app->name);
		print_keys(who, current_app->args);
		return -EINVAL;
	}
	for (t = __argtabs_start; t < __argtabs_end; t++) {
		if ((*t)->check && (*t)->check(&boot_cmdline, err, sizeof err) < 0) {
			printf("cmdline: error: %s\n", err);
			return -EINVAL;
		}
	}
	const char *ev = cmdline_get(&boot_cmdline, "exit");
	if (ev && strcmp(ev, "halt") != 0 && strcmp(ev, "poweroff") != 0) {
		printf("cmdline: error: exit=%s: halt or poweroff\n", ev);
		return -EINVAL;
	}
	const char *nv = cmdline_get(&boot_cmdline, "nodes"), *iv = cmdline_get(&boot_cmdline, "node");
	if (nv && strcmp(nv, "auto") == 0) {
		if (!iv || strcmp(iv, "auto") != 0) {
			printf("cmdline: error: nodes=auto goes with node=auto (the ids are agreed "
			       "at boot)\n");
			return -EINVAL;
		}
	} else if (nv && cmdline_parse_int(nv, &v) == 0) {
		num_nodes = (int)v;
	}
	if (iv && strcmp(iv, "auto") == 0) {
		if (!nv) {
			printf("cmdline: error: node=auto needs nodes=<count> or nodes=auto\n");
			return -EINVAL;
		}
		auto_id = 1;
		auto_expect = strcmp(nv, "auto") == 0 ? 0 : num_nodes;
		/* A count too small for the app is known now, before the ids are agreed. */
		if (auto_expect && check_count(auto_expect) < 0)
			return -EINVAL;
		return 0;	/* node_set_identity() checks the rest */
	} else if (iv && cmdline_parse_int(iv, &v) == 0) {
		node_id = (int)v;
	}
	identity_set = 1;
	return check_identity();
}

int node_auto(int *expect)
{
	if (expect)
		*expect = auto_expect;
	return auto_id && !identity_set;
}

int node_set_identity(int id, int nodes)
{
	if (!auto_id || identity_set || nodes < 1 || nodes > MAX_NODES || id < 0 || id >= nodes)
		return -EINVAL;
	node_id = id;
	num_nodes = nodes;
	identity_set = 1;
	return check_identity();
}

const char *arg_str(const char *key, const char *def)
{
	const char *v = cmdline_get(&boot_cmdline, key);
	return v ? v : def;
}

long arg_int(const char *key, long def)
{
	const char *v = cmdline_get(&boot_cmdline, key);
	long out;

	if (!v || cmdline_parse_int(v, &out) < 0)
		return def;
	return out;
}

int arg_bool(const char *key, int def)
{
	const char *v = cmdline_get(&boot_cmdline, key);
	int out;

	if (!v || cmdline_parse_bool(v, &out) < 0)
		return def;
	return out;
}
