#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"

extern const struct app *const __apps_start[], *const __apps_end[];

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

void result(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	printf("RESULT %s %s\n", current_app ? current_app->name : "?", buf);
}
