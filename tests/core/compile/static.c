/* A private copy with REDLOCK_STATIC: nothing exported, nothing unused warned. */
#define REDLOCK_STATIC
#define REDLOCK_IMPLEMENTATION
#include "redlock.h"

int main(void) { return redlock_strerror(REDLOCK_OK)[0] == 'o' ? 0 : 1; }
