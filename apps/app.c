#include <stdarg.h>
#include <stdio.h>

#include "apps/app.h"

void result(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	printf("RESULT %s %s\n", current_app ? current_app->name : "?", buf);
}
