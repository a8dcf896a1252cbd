/* planted: a reader loading a library itself
   (dlopen here, in a comment spanning lines, does not count) */
#include <dlfcn.h>

void *planted_lib(void);
void *planted_lib(void)
{
    return dlopen("libplanted.so", RTLD_NOW);
}
