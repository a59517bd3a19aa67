// See onep.go. With -Wl,--wrap=main the C start code calls __wrap_main
// instead of main, the Go runtime's entry, which the linker then names
// __real_main. Without the flag nothing calls __wrap_main, and the weak
// __real_main lets such a binary link.
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ONEP_VAR "GOMAXPROCS="

int __real_main(int argc, char **argv) __attribute__((weak));

int husk_onep_added;

int __wrap_main(int argc, char **argv)
{
	/* The runtime finds the environment after argv's NULL and the
	 * auxiliary vector after the environment's, as the kernel lays them
	 * out: the copy keeps that layout. */
	char **env = argv + argc + 1, **e, **aux, **a;
	size_t nenv, naux;

	for (e = env; *e != NULL; e++)
		if (strncmp(*e, ONEP_VAR, strlen(ONEP_VAR)) == 0)
			return __real_main(argc, argv); /* the caller chose */
	nenv = e - env;
	aux = e + 1;
	for (e = aux; (uintptr_t)e[0] != AT_NULL; e += 2)
		;
	naux = e + 2 - aux; /* with the AT_NULL pair */
	a = malloc((argc + 1 + nenv + 2 + naux) * sizeof(*a));
	if (a == NULL)
		return __real_main(argc, argv); /* the runtime's own choice */
	memcpy(a, argv, (argc + 1) * sizeof(*a));
	memcpy(a + argc + 1, env, nenv * sizeof(*a));
	a[argc + 1 + nenv] = ONEP_VAR "1";
	a[argc + 2 + nenv] = NULL;
	memcpy(a + argc + 3 + nenv, aux, naux * sizeof(*a));
	husk_onep_added = 1;
	return __real_main(argc, a);
}
