#include <xmmintrin.h>
__attribute__((constructor)) static void daz_ftz(void) { _mm_setcsr(_mm_getcsr() | 0x8040); }
