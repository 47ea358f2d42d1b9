/* mark TAG: executes cpuid with eax = "SCXM", ebx = TAG, for the insncount plugin to log its totals */
#include <stdlib.h>
int main(int argc, char **argv)
{
	unsigned int a = 0x5343584d, b = argc > 1 ? strtoul(argv[1], 0, 0) : 0, c = 0, d = 0;

	__asm__ volatile("cpuid" : "+a"(a), "+b"(b), "+c"(c), "+d"(d));
	return 0;
}
